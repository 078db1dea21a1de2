/**
 * The hand-over to Kubernetes: `hangar export NAME --format mcpserver|kubernetes` on a real
 * workload and on an aggregate. The MCPServer, VirtualMCPServer and MCPGroup resources must
 * validate against ToolHive's operator CRDs (read from ../shared) and be accepted by a real
 * kubectl's client-side dry run; secrets must stay references, and what cannot carry over must be said.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, parse } from 'yaml';
import type { RunConfig } from '../protocol/runConfig.js';
import { handOver, kubernetesName, renderYaml, type Manifest } from '../server/kubernetes/manifests.js';
import { CRD_PATH, GROUP_CRD_PATH, startDiscovery, VIRTUAL_CRD_PATH, type Discovery } from './fixtures/kubernetes/discovery.js';
import { secretsEnv } from './fixtures/secrets/support.js';
import { EVERYTHING, uniqueName } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar } from './support/processes.js';


interface CrdVersion {
	name: string;
	schema: { openAPIV3Schema: { properties: { spec: object } } };
}

/** Errors of a resource's spec against the operator's v1beta1 schema of its CRD (CEL rules checked apart). */
const violationsOf = (crdPath: string) => {
	const crd = parse(readFileSync(crdPath, 'utf8')) as { spec: { versions: CrdVersion[] } };
	const version = crd.spec.versions.find((candidate) => candidate.name === 'v1beta1')!;
	// The schemas' patterns are Go's RE2, which knows POSIX classes ([[:space:]]) that JavaScript's do not.
	const regExp = Object.assign((pattern: string, flags: string) => new RegExp(pattern.replaceAll('[:space:]', '\\s'), flags), { code: 'RegExp' });
	const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false, code: { regExp } }).compile(version.schema.openAPIV3Schema.properties.spec);
	return (spec: unknown): string[] => (validate(spec) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`));
};
const specViolations = violationsOf(CRD_PATH);
const virtualViolations = violationsOf(VIRTUAL_CRD_PATH);
const groupViolations = violationsOf(GROUP_CRD_PATH);

const run = promisify(execFile);

const documentsOf = (text: string): Manifest[] => parseAllDocuments(text, { version: '1.1' }).map((document) => document.toJS() as Manifest);
const find = (manifests: readonly Manifest[], kind: string): Manifest | undefined => manifests.find((manifest) => manifest.kind === kind);

describe('the operator resources of a run configuration', () => {
	const full: RunConfig = {
		name: 'GitHub_Tools',
		image: 'ghcr.io/example/github-mcp:1.2',
		transport: 'streamable-http',
		target_port: 9000,
		cmd_args: ['--read-only'],
		env_vars: { LOG_LEVEL: 'debug', A_FIRST: '1' },
		secrets: ['github-token,target=GITHUB_TOKEN'],
		volumes: ['/home/me/data:/data:ro'],
		permission_profile: { network: { outbound: { allow_host: ['api.github.com'], allow_port: [443] } } },
		oidc_config: { issuer: 'https://issuer.example', audience: 'github-tools', jwksurl: 'https://issuer.example/jwks', scopes: ['mcp'] },
		authz_config_path: '/nowhere/authz.json',
		tools_filter: ['search'],
		tools_override: { search: { name: 'find' } },
		telemetry_config: { endpoint: 'otel.example:4318', serviceName: 'gh', environmentVariables: ['USER'], tracingEnabled: true },
		audit_config: { enabled: true },
		scaling_config: { replicas: 3, backend_replicas: 2, session_redis: { address: 'redis:6379', key_prefix: 'gh' } },
		rate_limit_config: { perUser: { maxTokens: 10, refillPeriod: '1m0s' } },
	};

	it('maps every field that has a home in the CRD and validates against its schema', () => {
		const result = handOver(full, 'mcpserver', { authzPolicy: '{"version":"1.0"}' });
		const server = find(result.manifests, 'MCPServer')!;
		expect(server.metadata.name).toBe('github-tools');
		expect(specViolations(server.spec)).toEqual([]);
		expect(server.spec).toMatchObject({
			image: full.image,
			transport: 'streamable-http',
			mcpPort: 9000,
			args: ['--read-only'],
			env: [
				{ name: 'A_FIRST', value: '1' },
				{ name: 'LOG_LEVEL', value: 'debug' },
			],
			secrets: [{ name: 'github-token', key: 'value', targetEnvName: 'GITHUB_TOKEN' }],
			permissionProfile: { type: 'configmap', name: 'github-tools-permissions', key: 'permissions.json' },
			authzConfig: { type: 'configMap', configMap: { name: 'github-tools-authz', key: 'authz.json' } },
			oidcConfigRef: { name: 'github-tools-oidc', audience: 'github-tools', scopes: ['mcp'] },
			toolConfigRef: { name: 'github-tools-tools' },
			telemetryConfigRef: { name: 'github-tools-telemetry', serviceName: 'gh' },
			audit: { enabled: true },
			replicas: 3,
			backendReplicas: 2,
			sessionStorage: { provider: 'redis', address: 'redis:6379', keyPrefix: 'gh' },
			rateLimiting: { perUser: { maxTokens: 10, refillPeriod: '1m0s' } },
		});
		expect(find(result.manifests, 'MCPOIDCConfig')).toMatchObject({ spec: { type: 'inline', inline: { issuer: 'https://issuer.example', jwksUrl: 'https://issuer.example/jwks' } } });
		expect(find(result.manifests, 'MCPToolConfig')).toMatchObject({ spec: { toolsFilter: ['search'], toolsOverride: { search: { name: 'find' } } } });
		// environmentVariables is refused by the operator's MCPTelemetryConfig.
		expect(find(result.manifests, 'MCPTelemetryConfig')!.spec).toEqual({ endpoint: 'otel.example:4318', tracingEnabled: true });
		expect(result.notes.join('\n')).toContain('/home/me/data:/data:ro');
		expect(result.notes.join('\n')).toContain('kubectl create secret generic github-token');
	});

	it('keeps the operator\'s own rules: rate limits need Redis, per-user buckets need an identity, an audience is required', () => {
		const { scaling_config: _scaling, ...withoutRedis } = full;
		const noRedis = handOver(withoutRedis, 'mcpserver');
		expect(find(noRedis.manifests, 'MCPServer')!.spec).not.toHaveProperty('rateLimiting');
		expect(noRedis.notes.join('\n')).toContain('session_redis');

		const { oidc_config: _oidc, ...anonymous } = full;
		const noIdentity = handOver(anonymous, 'mcpserver');
		expect(find(noIdentity.manifests, 'MCPServer')!.spec).not.toHaveProperty('rateLimiting');
		expect(noIdentity.notes.join('\n')).toContain('per-user buckets need OIDC');

		const noAudience = handOver({ ...full, oidc_config: { issuer: 'https://issuer.example' } }, 'mcpserver');
		expect(find(noAudience.manifests, 'MCPServer')!.spec).toMatchObject({ oidcConfigRef: { audience: 'github-tools' } });
		expect(find(noAudience.manifests, 'MCPServer')!.spec).not.toHaveProperty('authzConfig');
		expect(noAudience.notes.join('\n')).toContain('/nowhere/authz.json could not be read');
	});

	it('a stdio server gets a proxy mode and a built-in profile; names kubectl would read as booleans stay strings', () => {
		const result = handOver({ name: 'y', image: 'example/stdio:1', transport: 'stdio' }, 'mcpserver');
		const server = find(result.manifests, 'MCPServer')!;
		expect(server.spec).toMatchObject({ transport: 'stdio', proxyMode: 'streamable-http', permissionProfile: { type: 'builtin', name: 'network' } });
		expect(specViolations(server.spec)).toEqual([]);
		expect(documentsOf(renderYaml(result))[0]!.metadata.name).toBe('y');
	});

	it('refuses what has no cluster form, saying what to use instead', () => {
		expect(() => handOver({ name: 'remote', remote_url: 'https://mcp.example/mcp', transport: 'streamable-http' }, 'mcpserver')).toThrow(/remote server/);
		expect(() => handOver({ name: 'stdio', image: 'example/stdio:1', transport: 'stdio' }, 'kubernetes')).toThrow(/--format mcpserver/);
	});

	it('plain manifests: a Deployment and Service of an HTTP server, secrets as secretKeyRefs, and what is lost said', () => {
		const result = handOver(full, 'kubernetes');
		const deployment = find(result.manifests, 'Deployment')!;
		const container = (deployment.spec as { template: { spec: { containers: Array<Record<string, unknown>> } } }).template.spec.containers[0]!;
		expect(deployment.spec).toMatchObject({ replicas: 2, selector: { matchLabels: { 'app.kubernetes.io/name': 'github-tools' } } });
		expect(container).toMatchObject({ image: full.image, args: ['--read-only'], ports: [{ name: 'mcp', containerPort: 9000 }] });
		expect(container.env).toContainEqual({ name: 'GITHUB_TOKEN', valueFrom: { secretKeyRef: { name: 'github-token', key: 'value' } } });
		expect(container.env).toContainEqual({ name: 'MCP_PORT', value: '9000' });
		expect(find(result.manifests, 'Service')).toMatchObject({ spec: { ports: [{ port: 9000, targetPort: 'mcp' }] } });
		expect(result.notes.join('\n')).toMatch(/OIDC authentication, Cedar authorization, tool filtering, rate limits are enforced by the proxy/);
	});

	const aggregate: RunConfig = {
		name: 'dev-all',
		image: 'group://dev',
		group: 'default',
		transport: 'streamable-http',
		aggregation: {
			conflict: 'prefix',
			prefix_format: 'x_{workload}_',
			default_visibility: 'deny',
			mode: 'search',
			members: { Everything_1: { tools: ['echo'], overrides: { echo: { name: 'say', description: 'Says it back' } } }, memory: { exclude_all: true } },
		},
		oidc_config: { issuer: 'https://issuer.example', audience: 'dev' },
		authz_config_path: '/policies/dev.json',
		audit_config: { enabled: true },
		scaling_config: { replicas: 2, session_redis: { address: 'redis:6379' } },
		rate_limit_config: { shared: { maxTokens: 100, refillPeriod: '1m0s' } },
		tool_pinning: 'block',
	};

	it('an aggregate: a VirtualMCPServer over an MCPGroup, each aggregation setting in its CRD field, both valid', () => {
		const result = handOver(aggregate, 'mcpserver', { authzPolicy: '{"version":"1.0"}' });
		expect(result.manifests.map((manifest) => `${manifest.kind} ${manifest.metadata.name}`)).toEqual(['MCPGroup dev', 'VirtualMCPServer dev-all', 'ConfigMap dev-all-authz', 'MCPOIDCConfig dev-all-oidc']);
		const group = find(result.manifests, 'MCPGroup')!;
		const server = find(result.manifests, 'VirtualMCPServer')!;
		expect(groupViolations(group.spec)).toEqual([]);
		expect(virtualViolations(server.spec)).toEqual([]);
		expect(server.spec).toEqual({
			groupRef: { name: 'dev' },
			incomingAuth: {
				type: 'oidc',
				oidcConfigRef: { name: 'dev-all-oidc', audience: 'dev' },
				authzConfig: { type: 'configMap', configMap: { name: 'dev-all-authz', key: 'authz.json' } },
			},
			config: {
				aggregation: {
					conflictResolution: 'prefix',
					conflictResolutionConfig: { prefixFormat: 'x_{workload}_' },
					defaultToolVisibility: 'deny',
					tools: [
						{ workload: 'everything-1', filter: ['echo'], overrides: { echo: { name: 'say', description: 'Says it back' } } },
						{ workload: 'memory', excludeAll: true },
					],
				},
				optimizer: { hybridSearchSemanticRatio: '0.0' },
				audit: { enabled: true },
				rateLimiting: { shared: { maxTokens: 100, refillPeriod: '1m0s' } },
			},
			replicas: 2,
			sessionStorage: { provider: 'redis', address: 'redis:6379' },
		});
		const notes = result.notes.join('\n');
		// What vMCP does differently or has no field for is said, not dropped.
		expect(notes).toContain('Everything_1 → everything-1');
		expect(notes).toContain('mode search became spec.config.optimizer');
		expect(notes).toContain('no VirtualMCPServer counterpart, left out: tool_pinning');
		expect(notes).toMatch(/export each workload of group dev .*MCPGroup dev/);
	});

	it("an aggregate's composite tools become spec.config.compositeTools, valid against the CRD; code mode is said to be left out", () => {
		const composite = {
			name: 'triage',
			parameters: { type: 'object', properties: { id: { type: 'integer' } } },
			steps: [
				{ id: 'fetch', tool: 'tracker.get_issue', arguments: { id: '{{.params.id}}' }, onError: { action: 'retry' as const, retryCount: 2, retryDelay: '500ms' }, timeout: '10s' },
				{ id: 'ask', type: 'elicitation' as const, dependsOn: ['fetch'], message: 'Note it?', schema: { type: 'object' }, onDecline: { action: 'skip_remaining' as const } },
				{ id: 'note', tool: 'notes.add_note', dependsOn: ['ask'], condition: '{{.steps.ask.output.ok}}', arguments: { text: '{{.steps.fetch.output.title}}' } },
			],
			output: { properties: { title: { type: 'string' as const, value: '{{.steps.fetch.output.title}}' } } },
		};
		const result = handOver({ name: 'flows', image: 'group://dev', aggregation: { mode: 'code', composite_tools: [composite] } }, 'mcpserver');
		const server = find(result.manifests, 'VirtualMCPServer')!;
		expect(virtualViolations(server.spec)).toEqual([]);
		expect((server.spec as { config: { compositeTools: unknown } }).config.compositeTools).toEqual([composite]);
		expect(result.notes.join('\n')).toContain('code mode (run_code) has no VirtualMCPServer counterpart');
	});

	it('an aggregate under priority, anonymous: the order by MCPServer names; a member in a group joins its MCPGroup', () => {
		const result = handOver({ name: 'pick', image: 'group://dev', aggregation: { conflict: 'priority', priority: ['memory', 'everything'] } }, 'mcpserver');
		const server = find(result.manifests, 'VirtualMCPServer')!;
		expect(virtualViolations(server.spec)).toEqual([]);
		expect(server.spec).toEqual({
			groupRef: { name: 'dev' },
			incomingAuth: { type: 'anonymous' },
			config: { aggregation: { conflictResolution: 'priority', conflictResolutionConfig: { priorityOrder: ['memory', 'everything'] } } },
		});
		expect(result.notes.join('\n')).not.toContain('left out');
		const member = find(handOver({ name: 'memory', image: 'example/memory:1', transport: 'stdio', group: 'dev' }, 'mcpserver').manifests, 'MCPServer')!;
		expect(member.spec).toMatchObject({ groupRef: { name: 'dev' } });
		expect(specViolations(member.spec)).toEqual([]);
		expect(() => handOver({ name: 'pick', image: 'group://dev' }, 'kubernetes')).toThrow(/--format mcpserver/);
	});

	it('names are DNS-1123 labels', () => {
		expect(kubernetesName('My.Server__Name')).toBe('my-server-name');
		expect(kubernetesName('x'.repeat(80))).toHaveLength(63);
		expect(kubernetesName('---')).toBe('mcp-server');
	});
});

describe('kubectl apply --dry-run=client of the exported resources', { timeout: 60_000 }, () => {
	let folder: TestHome;
	let discovery: Discovery;
	beforeAll(async () => {
		folder = await createTestHome();
		discovery = await startDiscovery(folder.path);
	});
	afterAll(async () => {
		await discovery?.close();
		await folder?.dispose();
	});

	/** What kubectl prints for `text`, as resources; rejects with kubectl's error. */
	async function dryRun(text: string): Promise<Manifest[]> {
		const file = join(folder.path, `${Math.random().toString(36).slice(2)}.yaml`);
		await writeFile(file, text);
		const { stdout } = await run('kubectl', ['apply', '--dry-run=client', '--validate=false', '-o', 'yaml', '-f', file, '--kubeconfig', discovery.kubeconfig]);
		const printed = parse(stdout) as Manifest & { items?: Manifest[] };
		return printed.kind === 'List' ? printed.items! : [printed];
	}

	const server = (config: RunConfig): RunConfig => ({ ...config, name: 'github-tools', image: 'ghcr.io/example/github-mcp:1.2', transport: 'streamable-http', target_port: 9000 });
	const shape = (manifests: readonly Manifest[]) => manifests.map((manifest) => `${manifest.apiVersion} ${manifest.kind} ${manifest.metadata.name}`).sort();

	it('accepts the operator resources, as exported', async () => {
		const exported = handOver(server({ name: '', scaling_config: { replicas: 3, backend_replicas: 2 }, oidc_config: { issuer: 'https://issuer.example', audience: 'gh' }, tools_filter: ['search'] }), 'mcpserver', {});
		const applied = await dryRun(renderYaml(exported));
		expect(shape(applied)).toEqual(shape(exported.manifests));
		expect(find(applied, 'MCPServer')!.spec).toMatchObject({ image: 'ghcr.io/example/github-mcp:1.2', replicas: 3, backendReplicas: 2, oidcConfigRef: { name: 'github-tools-oidc' } });
	});

	it('accepts the plain manifests, as exported', async () => {
		const exported = handOver(server({ name: '', secrets: ['github-token,target=GITHUB_TOKEN'], scaling_config: { backend_replicas: 2 } }), 'kubernetes');
		const applied = await dryRun(renderYaml(exported));
		expect(shape(applied)).toEqual(shape(exported.manifests));
		expect(find(applied, 'Deployment')!.spec).toMatchObject({ replicas: 2 });
	});

	it('accepts an aggregate\'s MCPGroup and VirtualMCPServer, as exported', async () => {
		const exported = handOver({ name: 'dev-all', image: 'group://dev', aggregation: { conflict: 'prefix', members: { memory: { tools: ['read_graph'] } } } }, 'mcpserver');
		const applied = await dryRun(renderYaml(exported));
		expect(shape(applied)).toEqual(shape(exported.manifests));
		expect(find(applied, 'VirtualMCPServer')!.spec).toMatchObject({ groupRef: { name: 'dev' }, config: { aggregation: { tools: [{ workload: 'memory', filter: ['read_graph'] }] } } });
	});

	it('refuses a kind the cluster does not serve (the check can fail)', async () => {
		const exported = handOver(server({ name: '' }), 'mcpserver', {});
		const broken = renderYaml(exported).replace('kind: MCPServer', 'kind: MCPServerThatIsNot');
		await expect(dryRun(broken)).rejects.toThrow(/MCPServerThatIsNot/);
	});
});

describe('hangar export --format', { timeout: 180_000 }, () => {
	let home: TestHome;
	let env: NodeJS.ProcessEnv;
	const name = uniqueName('k8s');
	const group = uniqueName('k8s-group');
	const aggregate = uniqueName('k8s-all');
	const planted = `planted-${Math.random().toString(36).slice(2)}`;
	const hangar = (args: string[], input?: string) => runHangar(args, env, input);

	beforeAll(async () => {
		home = await createTestHome();
		env = secretsEnv(home);
		expect((await hangar(['secret', 'setup'])).code).toBe(0);
		expect((await hangar(['secret', 'set', 'api-key'], `${planted}\n`)).code).toBe(0);
		const authz = join(home.path, 'authz.json');
		await writeFile(authz, JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies: ['permit(principal, action, resource);'], entities_json: '[]' } }));
		expect((await hangar(['group', 'create', group])).code).toBe(0);
		const run = await hangar([
			'run', EVERYTHING, '--name', name, '--group', group, '--transport', 'stdio', '--secret', 'api-key,target=API_KEY', '-e', 'MODE=test', '--tools', 'echo',
			'--oidc-issuer', 'https://issuer.example', '--oidc-audience', 'everything', '--authz-config', authz, '--', 'stdio',
		]);
		expect(run.code, run.stderr).toBe(0);
		const settings = join(home.path, 'aggregation.json');
		await writeFile(settings, JSON.stringify({ conflict: 'priority', priority: [name], members: { [name]: { tools: ['echo'] } } }));
		const aggregated = await hangar(['run', `group://${group}`, '--name', aggregate, '--aggregation', settings]);
		expect(aggregated.code, aggregated.stderr).toBe(0);
	});

	afterAll(async () => {
		await hangar(['rm', aggregate]);
		await hangar(['rm', name]);
		await home?.dispose();
	}, 120_000);

	it('mcpserver: resources that validate, the policy in a ConfigMap, the secret as a reference only', async () => {
		const result = await hangar(['export', name, '--format', 'mcpserver']);
		expect(result.code, result.stderr).toBe(0);
		expect(result.stdout).not.toContain(planted);
		const manifests = documentsOf(result.stdout);
		const server = find(manifests, 'MCPServer')!;
		expect(server).toMatchObject({ apiVersion: 'toolhive.stacklok.dev/v1beta1', metadata: { name: kubernetesName(name) } });
		expect(specViolations(server.spec)).toEqual([]);
		expect(server.spec).toMatchObject({
			image: EVERYTHING,
			transport: 'stdio',
			args: ['stdio'],
			env: [{ name: 'MODE', value: 'test' }],
			secrets: [{ name: 'api-key', key: 'value', targetEnvName: 'API_KEY' }],
			oidcConfigRef: { audience: 'everything' },
			groupRef: { name: kubernetesName(group) },
		});
		const policy = find(manifests, 'ConfigMap')!;
		expect(JSON.parse((policy.data as Record<string, string>)['authz.json']!)).toMatchObject({ cedar: { policies: ['permit(principal, action, resource);'] } });
		expect(result.stdout).toMatch(/^# create the Secret api-key before applying/m);
	});

	it('an aggregate: its run configuration keeps the aggregation; mcpserver writes its MCPGroup and VirtualMCPServer, valid', async () => {
		const json = await hangar(['export', aggregate]);
		expect(json.code, json.stderr).toBe(0);
		expect(JSON.parse(json.stdout)).toMatchObject({ image: `group://${group}`, aggregation: { conflict: 'priority', priority: [name] } });
		const result = await hangar(['export', aggregate, '--format', 'mcpserver']);
		expect(result.code, result.stderr).toBe(0);
		const manifests = documentsOf(result.stdout);
		expect(groupViolations(find(manifests, 'MCPGroup')!.spec)).toEqual([]);
		const server = find(manifests, 'VirtualMCPServer')!;
		expect(virtualViolations(server.spec)).toEqual([]);
		expect(server).toMatchObject({
			metadata: { name: kubernetesName(aggregate) },
			spec: {
				groupRef: { name: kubernetesName(group) },
				incomingAuth: { type: 'anonymous' },
				config: { aggregation: { conflictResolution: 'priority', conflictResolutionConfig: { priorityOrder: [kubernetesName(name)] }, tools: [{ workload: kubernetesName(name), filter: ['echo'] }] } },
			},
		});
		expect(result.stdout).toMatch(/^# the members are not in this export/m);
	});

	it('kubernetes: refused for a stdio server with the way forward, exit 2', async () => {
		const result = await hangar(['export', name, '--format', 'kubernetes']);
		expect(result.code).toBe(2);
		expect(result.stderr).toContain('--format mcpserver');
	});

	it('an unknown format is a usage error naming the choices', async () => {
		const result = await hangar(['export', name, '--format', 'helm']);
		expect(result.code).not.toBe(0);
		expect(result.stderr).toContain('mcpserver');
	});
});
