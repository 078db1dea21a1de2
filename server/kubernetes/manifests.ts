/**
 * The hand-over of a workload to a cluster: its run configuration (as `workloads/export` gives
 * it) turned into Kubernetes resources.
 *
 * - `mcpserver`: a `toolhive.stacklok.dev/v1beta1` `MCPServer` for ToolHive's operator, which
 *   runs the proxy in the cluster, with the resources it references: ConfigMaps for the Cedar
 *   policies and a custom permission profile, an `MCPOIDCConfig`, an `MCPToolConfig` and an
 *   `MCPTelemetryConfig`.
 * - `kubernetes`: a plain Deployment and Service for clusters without the operator. Without a
 *   proxy in front, only servers that speak HTTP themselves can be handed over this way, and
 *   authentication, authorization and tool filtering are not enforced.
 *
 * Secrets stay references: each becomes a `secretKeyRef` to a Kubernetes Secret that the user
 * creates; the notes say how. Nothing here reads a secret's value.
 */
import { HangarError } from '../../protocol/errors.js';
import { stringify } from 'yaml';
import { groupOfImage, type AggregationConfig, type PermissionProfile, type RunConfig } from '../../protocol/runConfig.js';
import { DEFAULT_GROUP } from '../groups/store.js';

export const MANIFEST_FORMATS = ['mcpserver', 'kubernetes'] as const;
export type ManifestFormat = (typeof MANIFEST_FORMATS)[number];

export interface Manifest {
	readonly apiVersion: string;
	readonly kind: string;
	readonly metadata: { readonly name: string; readonly labels: Readonly<Record<string, string>> };
	readonly [field: string]: unknown;
}

export interface HandOver {
	readonly manifests: readonly Manifest[];
	/** What the user must do or know: Secrets to create, settings that do not carry over. */
	readonly notes: readonly string[];
}

/** Files the run configuration points at, read by the caller (the policy file of `authz_config_path`). */
export interface HandOverFiles {
	readonly authzPolicy?: string;
}

const TOOLHIVE_API = 'toolhive.stacklok.dev/v1beta1';
/** The proxy's port inside the cluster (ToolHive's default); the laptop's port means nothing there. */
const CLUSTER_PROXY_PORT = 8080;
const DEFAULT_HTTP_PORT = 8080;

export function handOver(config: RunConfig, format: ManifestFormat, files: HandOverFiles = {}): HandOver {
	const group = groupOfImage(config.image);
	if (group !== undefined) {
		if (format !== 'mcpserver') throw HangarError.badRequest(`workload ${config.name} is an aggregate of group ${group}, which needs ToolHive's Virtual MCP Server; export it with --format mcpserver`);
		return aggregateResources(config, group, files);
	}
	if (config.remote_url || !config.image) {
		throw HangarError.badRequest(
			`workload ${config.name} is a remote server (${config.remote_url ?? 'no image'}); only container workloads can be exported as Kubernetes resources`,
		);
	}
	return format === 'mcpserver' ? operatorResources(config, files) : plainResources(config);
}

/** A DNS-1123 name (lower case, digits and dashes, at most 63 characters) for a Kubernetes object. */
export function kubernetesName(name: string): string {
	const cleaned = name
		.toLowerCase()
		.replace(/[^a-z0-9-]+/g, '-')
		.replace(/^-+|-+$/g, '')
		.slice(0, 63)
		.replace(/-+$/, '');
	return cleaned || 'mcp-server';
}

interface SecretReference {
	/** The Hangar secret. */
	readonly source: string;
	/** The Kubernetes Secret holding its value. */
	readonly secret: string;
	readonly key: string;
	readonly env: string;
}

/** `name,target=ENV` references, each to a Secret named after the Hangar secret with one key, `value`. */
function secretReferences(config: RunConfig): SecretReference[] {
	return (config.secrets ?? []).map((stored) => {
		const comma = stored.lastIndexOf(',target=');
		const name = comma < 0 ? stored : stored.slice(0, comma);
		const env = comma < 0 ? stored : stored.slice(comma + ',target='.length);
		return { source: name, secret: kubernetesName(name), key: 'value', env };
	});
}

function secretNotes(references: readonly SecretReference[]): string[] {
	const bySecret = new Map(references.map((reference) => [reference.secret, reference]));
	return [...bySecret.values()].map(
		(reference) => `create the Secret ${reference.secret} before applying: kubectl create secret generic ${reference.secret} --from-literal=value=<the value of Hangar's secret ${reference.source}>`,
	);
}

function labelsOf(config: RunConfig): Record<string, string> {
	return { 'app.kubernetes.io/name': kubernetesName(config.name), 'app.kubernetes.io/managed-by': 'hangar' };
}

function resource(kind: string, apiVersion: string, name: string, config: RunConfig, body: Record<string, unknown>): Manifest {
	return { apiVersion, kind, metadata: { name, labels: labelsOf(config) }, ...body };
}

function envList(config: RunConfig): Array<{ name: string; value: string }> {
	return Object.entries(config.env_vars ?? {})
		.sort(([a], [b]) => a.localeCompare(b))
		.map(([name, value]) => ({ name, value }));
}

function hostPathNote(config: RunConfig): string[] {
	const mounts = [...(config.volumes ?? []), ...(config.permission_profile?.read ?? []), ...(config.permission_profile?.write ?? [])];
	return mounts.length ? [`host mounts do not carry over to a cluster and were left out: ${mounts.join(', ')}`] : [];
}

/** A profile is built in when it only chooses between no network and the network. */
function builtinProfile(profile: PermissionProfile | undefined): 'none' | 'network' | undefined {
	if (!profile) return 'network';
	const custom = profile.read?.length || profile.write?.length || profile.privileged || profile.network?.outbound?.allow_host?.length || profile.network?.outbound?.allow_port?.length;
	if (custom) return undefined;
	return profile.network?.mode === 'none' ? 'none' : 'network';
}

/** Where a setting the MCPServer and the VirtualMCPServer share lands in either. */
interface SharedSettings {
	authzConfig?: Record<string, unknown>;
	oidcConfigRef?: Record<string, unknown>;
	telemetryConfigRef?: Record<string, unknown>;
	replicas?: number;
	sessionStorage?: Record<string, unknown>;
	rateLimiting?: unknown;
}

/**
 * The settings both kinds of server take the same way (Cedar policy, OIDC, telemetry, replicas,
 * session storage, rate limits), with the resources they reference pushed to `manifests`.
 */
function sharedSettings(config: RunConfig, files: HandOverFiles, manifests: Manifest[], notes: string[]): SharedSettings {
	const name = kubernetesName(config.name);
	const shared: SharedSettings = {};
	if (config.authz_config_path) {
		if (files.authzPolicy === undefined) {
			notes.push(`the Cedar policy file ${config.authz_config_path} could not be read; put it in a ConfigMap and set spec.authzConfig yourself`);
		} else {
			const policyMap = `${name}-authz`;
			manifests.push(resource('ConfigMap', 'v1', policyMap, config, { data: { 'authz.json': files.authzPolicy } }));
			shared.authzConfig = { type: 'configMap', configMap: { name: policyMap, key: 'authz.json' } };
		}
	}

	const oidc = config.oidc_config;
	if (oidc?.issuer) {
		const oidcName = `${name}-oidc`;
		const inline: Record<string, unknown> = { issuer: oidc.issuer };
		if (oidc.jwksurl) inline.jwksUrl = oidc.jwksurl;
		if (oidc.introspectionURL) inline.introspectionUrl = oidc.introspectionURL;
		if (oidc.clientID) inline.clientId = oidc.clientID;
		if (oidc.introspectionURL && oidc.clientID) {
			inline.clientSecretRef = { name: `${oidcName}-client`, key: 'client-secret' };
			notes.push(`create the Secret ${oidcName}-client with the key client-secret holding the introspection client's secret`);
		}
		if (oidc.insecureAllowHTTP) inline.insecureAllowHTTP = true;
		if (oidc.allowPrivateIP) inline.jwksAllowPrivateIP = true;
		manifests.push(resource('MCPOIDCConfig', TOOLHIVE_API, oidcName, config, { spec: { type: 'inline', inline } }));
		shared.oidcConfigRef = {
			name: oidcName,
			// Required by the operator: tokens minted for another server must not be replayed here.
			audience: oidc.audience || name,
			...(oidc.scopes?.length ? { scopes: oidc.scopes } : {}),
			...(oidc.resourceURL ? { resourceUrl: oidc.resourceURL } : {}),
		};
		if (!oidc.audience) notes.push(`no audience was configured; the operator requires one, so ${name} was used`);
	}

	const telemetry = config.telemetry_config;
	if (telemetry?.endpoint || telemetry?.enablePrometheusMetricsPath) {
		const telemetryName = `${name}-telemetry`;
		// environmentVariables is a CLI-only field the operator refuses.
		const { environmentVariables: _cliOnly, serviceName, ...settings } = telemetry;
		manifests.push(resource('MCPTelemetryConfig', TOOLHIVE_API, telemetryName, config, { spec: settings }));
		shared.telemetryConfigRef = { name: telemetryName, serviceName: serviceName || name };
	}

	const scaling = config.scaling_config;
	if (scaling?.replicas) shared.replicas = scaling.replicas;
	const redis = scaling?.session_redis;
	if (redis?.address) {
		shared.sessionStorage = { provider: 'redis', address: redis.address, ...(redis.db ? { db: redis.db } : {}), ...(redis.key_prefix ? { keyPrefix: redis.key_prefix } : {}) };
	}
	const limits = config.rate_limit_config;
	if (limits && (limits.perUser || limits.shared || limits.tools?.length)) {
		// The operator keeps buckets in Redis, and per-user buckets need an identity.
		if (!shared.sessionStorage) notes.push('rate limits were left out: the operator needs scaling_config.session_redis to keep the buckets');
		else if ((limits.perUser || limits.tools?.some((tool) => tool.perUser)) && !shared.oidcConfigRef) notes.push('rate limits were left out: per-user buckets need OIDC authentication');
		else shared.rateLimiting = limits;
	}
	return shared;
}

function operatorResources(config: RunConfig, files: HandOverFiles): HandOver {
	const name = kubernetesName(config.name);
	const manifests: Manifest[] = [];
	const notes: string[] = [...hostPathNote(config)];
	const references = secretReferences(config);
	notes.push(...secretNotes(references));

	const spec: Record<string, unknown> = {
		image: config.image,
		transport: config.transport === 'inspector' ? 'streamable-http' : (config.transport ?? 'stdio'),
		proxyPort: CLUSTER_PROXY_PORT,
	};
	if ((config.transport ?? 'stdio') === 'stdio') spec.proxyMode = config.proxy_mode ?? 'streamable-http';
	else spec.mcpPort = config.target_port ?? DEFAULT_HTTP_PORT;
	if (config.cmd_args?.length) spec.args = config.cmd_args;
	const env = envList(config);
	if (env.length) spec.env = env;
	if (references.length) spec.secrets = references.map((reference) => ({ name: reference.secret, key: reference.key, targetEnvName: reference.env }));
	if (config.trust_proxy_headers) spec.trustProxyHeaders = true;
	if (config.endpoint_prefix) spec.endpointPrefix = config.endpoint_prefix;
	// The MCPGroup an aggregate's export writes (aggregateResources); the default group has none.
	if (config.group && config.group !== DEFAULT_GROUP) spec.groupRef = { name: kubernetesName(config.group) };

	const builtin = builtinProfile(config.permission_profile);
	if (builtin) {
		spec.permissionProfile = { type: 'builtin', name: builtin };
	} else {
		const profileMap = `${name}-permissions`;
		manifests.push(resource('ConfigMap', 'v1', profileMap, config, { data: { 'permissions.json': `${JSON.stringify(config.permission_profile, null, 2)}\n` } }));
		spec.permissionProfile = { type: 'configmap', name: profileMap, key: 'permissions.json' };
	}

	const { authzConfig, oidcConfigRef, telemetryConfigRef, replicas, sessionStorage, rateLimiting } = sharedSettings(config, files, manifests, notes);
	Object.assign(spec, definedOnly({ authzConfig, oidcConfigRef }));

	if (config.tools_filter?.length || Object.keys(config.tools_override ?? {}).length) {
		const toolsName = `${name}-tools`;
		manifests.push(
			resource('MCPToolConfig', TOOLHIVE_API, toolsName, config, {
				spec: { ...(config.tools_filter?.length ? { toolsFilter: config.tools_filter } : {}), ...(config.tools_override ? { toolsOverride: config.tools_override } : {}) },
			}),
		);
		spec.toolConfigRef = { name: toolsName };
	}

	if (telemetryConfigRef) spec.telemetryConfigRef = telemetryConfigRef;
	if (config.audit_config?.enabled) spec.audit = { enabled: true };
	Object.assign(spec, definedOnly({ replicas, backendReplicas: config.scaling_config?.backend_replicas || undefined, sessionStorage, rateLimiting }));

	manifests.unshift(resource('MCPServer', TOOLHIVE_API, name, config, { spec }));
	return { manifests, notes };
}

/**
 * The run configuration fields an aggregate's export carries over or that mean nothing in a
 * cluster (where it listens on the laptop, bookkeeping); any other field set is named in a note.
 */
const AGGREGATE_FIELDS = new Set<string>([
	'schema_version', 'name', 'base_name', 'container_name', 'image', 'group', 'host', 'port', 'transport', 'proxy_mode', 'aggregation',
	'authz_config_path', 'oidc_config', 'telemetry_config', 'audit_config', 'scaling_config', 'rate_limit_config', 'mcpserver_generation',
]);

const isSet = (value: unknown): boolean =>
	value !== undefined && value !== null && value !== false && value !== '' && !(Array.isArray(value) && value.length === 0) && !(typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0);

/**
 * An aggregate (image `group://NAME`) as ToolHive's Virtual MCP Server: an `MCPGroup` for NAME
 * and a `VirtualMCPServer` over it. Its members are the group's MCPServers, exported one by one
 * (their `spec.groupRef` names the group); each `aggregation` setting goes to its
 * `spec.config.aggregation` counterpart, and what vMCP does differently is said in the notes.
 */
function aggregateResources(config: RunConfig, group: string, files: HandOverFiles): HandOver {
	const name = kubernetesName(config.name);
	const groupName = kubernetesName(group);
	const manifests: Manifest[] = [];
	const notes: string[] = [];
	const { authzConfig, oidcConfigRef, telemetryConfigRef, replicas, sessionStorage, rateLimiting } = sharedSettings(config, files, manifests, notes);
	const aggregation = config.aggregation ?? {};
	const settings: Record<string, unknown> = { aggregation: vmcpAggregation(aggregation, notes) };
	if (aggregation.mode === 'search') {
		// No embedding service to hand over: vMCP's keyword search alone.
		settings.optimizer = { hybridSearchSemanticRatio: '0.0' };
		notes.push('mode search became spec.config.optimizer with keyword search only (hybridSearchSemanticRatio 0.0): vMCP ranks find_tool results its own way, and its optimizer serves MCP 2025-11-25 at most (2026-07-28 clients are negotiated down)');
	}
	// Hangar's composite tools are ToolHive's shape already (steps' tools as workload.tool).
	if (aggregation.composite_tools?.length) settings.compositeTools = aggregation.composite_tools;
	if (aggregation.mode === 'code' || aggregation.code?.enabled) notes.push('code mode (run_code) has no VirtualMCPServer counterpart: left out');
	if (config.audit_config?.enabled) settings.audit = { enabled: true };
	if (rateLimiting) settings.rateLimiting = rateLimiting;
	const leftOut = Object.entries(config).filter(([field, value]) => !AGGREGATE_FIELDS.has(field) && isSet(value)).map(([field]) => field);
	if (leftOut.length) notes.push(`no VirtualMCPServer counterpart, left out: ${leftOut.join(', ')}`);
	notes.push(
		`the members are not in this export: export each workload of group ${group} with hangar export NAME --format mcpserver` +
			(group === DEFAULT_GROUP ? ` and set its spec.groupRef.name to ${groupName}` : ` (its spec.groupRef names MCPGroup ${groupName})`),
	);

	const spec: Record<string, unknown> = {
		groupRef: { name: groupName },
		incomingAuth: { type: oidcConfigRef ? 'oidc' : 'anonymous', ...definedOnly({ oidcConfigRef, authzConfig }) },
		config: settings,
		...definedOnly({ replicas, sessionStorage, telemetryConfigRef }),
	};
	manifests.unshift(
		resource('MCPGroup', TOOLHIVE_API, groupName, config, { spec: { description: `Hangar group ${group}` } }),
		resource('VirtualMCPServer', TOOLHIVE_API, name, config, { spec }),
	);
	return { manifests, notes };
}

/** Hangar's `aggregation` as vMCP's `spec.config.aggregation`; members by their MCPServer names. */
function vmcpAggregation(aggregation: AggregationConfig, notes: string[]): Record<string, unknown> {
	const conflict = aggregation.conflict ?? 'prefix';
	const result: Record<string, unknown> = { conflictResolution: conflict };
	const resolution = definedOnly({
		prefixFormat: conflict === 'prefix' ? (aggregation.prefix_format ?? '{workload}_') : undefined,
		priorityOrder: aggregation.priority?.map(kubernetesName),
	});
	if (Object.keys(resolution).length) result.conflictResolutionConfig = resolution;
	if (aggregation.default_visibility) result.defaultToolVisibility = aggregation.default_visibility;
	const tools = Object.entries(aggregation.members ?? {}).map(([member, settings]) =>
		definedOnly({
			workload: kubernetesName(member),
			filter: settings.tools?.length ? settings.tools : undefined,
			excludeAll: settings.exclude_all || undefined,
			overrides: settings.overrides && Object.keys(settings.overrides).length ? settings.overrides : undefined,
		}),
	);
	if (tools.length) result.tools = tools;
	const renamed = [...new Set([...(aggregation.priority ?? []), ...Object.keys(aggregation.members ?? {})])].filter((member) => kubernetesName(member) !== member);
	if (renamed.length) {
		const prefixed = conflict === 'prefix' ? '; prefixed tool names follow the new names' : '';
		notes.push(`members are named as their MCPServers in the cluster: ${renamed.map((member) => `${member} → ${kubernetesName(member)}`).join(', ')}${prefixed}`);
	}
	return result;
}

function definedOnly(fields: Record<string, unknown>): Record<string, unknown> {
	return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

function plainResources(config: RunConfig): HandOver {
	if ((config.transport ?? 'stdio') === 'stdio') {
		throw HangarError.badRequest(
			`workload ${config.name} speaks stdio, which needs a proxy in the cluster; export it with --format mcpserver for ToolHive's operator`,
		);
	}
	const name = kubernetesName(config.name);
	const port = config.target_port ?? DEFAULT_HTTP_PORT;
	const references = secretReferences(config);
	const notes = [...hostPathNote(config), ...secretNotes(references)];
	const enforced = [config.oidc_config?.issuer && 'OIDC authentication', config.authz_config_path && 'Cedar authorization', config.tools_filter?.length && 'tool filtering', config.rate_limit_config && 'rate limits'].filter(Boolean);
	if (enforced.length) notes.push(`${enforced.join(', ')} are enforced by the proxy, which plain manifests do not include; use --format mcpserver with ToolHive's operator to keep them`);

	const env = [
		{ name: 'MCP_TRANSPORT', value: config.transport! },
		{ name: 'MCP_PORT', value: String(port) },
		{ name: 'MCP_HOST', value: '0.0.0.0' },
		...envList(config),
		...references.map((reference) => ({ name: reference.env, valueFrom: { secretKeyRef: { name: reference.secret, key: reference.key } } })),
	];
	const selector = { 'app.kubernetes.io/name': name };
	const deployment = resource('Deployment', 'apps/v1', name, config, {
		spec: {
			replicas: config.scaling_config?.backend_replicas ?? 1,
			selector: { matchLabels: selector },
			template: {
				metadata: { labels: labelsOf(config) },
				spec: {
					containers: [
						{
							name: 'mcp-server',
							image: config.image,
							...(config.cmd_args?.length ? { args: config.cmd_args } : {}),
							env,
							ports: [{ name: 'mcp', containerPort: port }],
							securityContext: { allowPrivilegeEscalation: false },
						},
					],
				},
			},
		},
	});
	const service = resource('Service', 'v1', name, config, {
		spec: { selector, ports: [{ name: 'mcp', port, targetPort: 'mcp' }] },
	});
	return { manifests: [deployment, service], notes };
}

/**
 * The resources as one multi-document YAML stream, the notes as comments on top. YAML 1.1
 * quoting, as kubectl reads it: a name like `y` or `on` stays a string.
 */
export function renderYaml(result: HandOver): string {
	const comments = result.notes.map((note) => `# ${note}\n`).join('');
	return comments + result.manifests.map((manifest) => stringify(manifest, { version: '1.1' })).join('---\n');
}
