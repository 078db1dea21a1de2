/**
 * The hand-over to Kubernetes: `hangar export NAME --format mcpserver|kubernetes` on a real
 * workload. The MCPServer resource must validate against ToolHive's operator CRD (read from
 * ../shared) and both formats must be accepted by a real kubectl's client-side dry run; secrets
 * must stay references, and what cannot carry over must be said.
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
import { CRD_PATH, startDiscovery, type Discovery } from './fixtures/kubernetes/discovery.js';
import { secretsEnv } from './fixtures/secrets/support.js';
import { EVERYTHING, uniqueName } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar } from './support/processes.js';


interface CrdVersion {
	name: string;
	schema: { openAPIV3Schema: { properties: { spec: object } } };
}

/** Errors of an MCPServer's spec against the operator's v1beta1 schema (CEL rules checked apart). */
const specViolations = (() => {
	const crd = parse(readFileSync(CRD_PATH, 'utf8')) as { spec: { versions: CrdVersion[] } };
	const version = crd.spec.versions.find((candidate) => candidate.name === 'v1beta1')!;
	const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(version.schema.openAPIV3Schema.properties.spec);
	return (spec: unknown): string[] => (validate(spec) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`));
})();

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
	const planted = `planted-${Math.random().toString(36).slice(2)}`;
	const hangar = (args: string[], input?: string) => runHangar(args, env, input);

	beforeAll(async () => {
		home = await createTestHome();
		env = secretsEnv(home);
		expect((await hangar(['secret', 'setup'])).code).toBe(0);
		expect((await hangar(['secret', 'set', 'api-key'], `${planted}\n`)).code).toBe(0);
		const authz = join(home.path, 'authz.json');
		await writeFile(authz, JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies: ['permit(principal, action, resource);'], entities_json: '[]' } }));
		const run = await hangar([
			'run', EVERYTHING, '--name', name, '--transport', 'stdio', '--secret', 'api-key,target=API_KEY', '-e', 'MODE=test', '--tools', 'echo',
			'--oidc-issuer', 'https://issuer.example', '--oidc-audience', 'everything', '--authz-config', authz, '--', 'stdio',
		]);
		expect(run.code, run.stderr).toBe(0);
	});

	afterAll(async () => {
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
		});
		const policy = find(manifests, 'ConfigMap')!;
		expect(JSON.parse((policy.data as Record<string, string>)['authz.json']!)).toMatchObject({ cedar: { policies: ['permit(principal, action, resource);'] } });
		expect(result.stdout).toMatch(/^# create the Secret api-key before applying/m);
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
