/**
 * Turns a create or update request into a run configuration: resolves the source (an image,
 * a registry entry, a remote URL), fills what the registry entry knows, and checks every
 * field, failing with a 400 that names it. Ports are left to the service.
 */
import { randomInt } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { isIP } from 'node:net';
import { isAbsolute } from 'node:path';
import type { z } from 'zod';
import { HangarError } from '../../protocol/errors.js';
import type { CreateWorkloadParams, UpdateWorkloadParams } from '../../protocol/protocol.workloads.js';
import type { ImageServer, RemoteServer } from '../../protocol/registryTypes.js';
import { groupOfImage } from '../../protocol/aggregateImage.js';
import type { PermissionProfile, RemoteAuthConfig, TelemetryConfig } from '../../protocol/runConfig.js';
import { DEFAULT_GROUP } from '../groups/store.js';
import { refusalOf } from '../net/addresses.js';
import { telemetryConfigProblem } from '../runspec/telemetryConfig.js';
import { guardrailsProblem } from '../runspec/guardrails.js';
import { webhooksProblem } from '../runspec/webhooks.js';
import { checkAggregate, type AggregateContext } from './aggregation.js';
import type { ServerCatalog } from './dependencies.js';
import type { PackagePlanner } from '../packages/builder.js';
import { isPackageReference } from '../packages/reference.js';
import { invalid, prune } from './fields.js';
import { PORT_MAX, PORT_MIN } from './portAllocator.js';
import { securityFieldsOf } from './securityConfig.js';
import { encodeSecret } from './secretReference.js';
import type { ImageTransport, ProbeTarget } from './transport.js';
import type { StoredWorkload } from '../runspec/store.js';

export type CreateRequest = z.output<typeof CreateWorkloadParams>;
export type UpdateRequest = z.output<typeof UpdateWorkloadParams>;
type Request = CreateRequest | UpdateRequest;

export const DEFAULT_HOST = '127.0.0.1';
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Headers the proxy owns or that would change how requests travel. */
const RESTRICTED_HEADERS = new Set([
	'host',
	'connection',
	'keep-alive',
	'proxy-authenticate',
	'proxy-authorization',
	'proxy-connection',
	'te',
	'trailer',
	'transfer-encoding',
	'upgrade',
	'content-length',
	'content-type',
	'cookie',
	'mcp-session-id',
	'mcp-protocol-version',
	'x-forwarded-for',
	'x-forwarded-host',
	'x-forwarded-proto',
	'x-real-ip',
]);

/** Where the workload's server comes from. */
type Source =
	| { kind: 'image'; image: string; entry?: { name: string; server: ImageServer } }
	| { kind: 'remote'; url: string; entry?: { name: string; server: RemoteServer } }
	| { kind: 'group'; group: string; image: string; entry?: undefined };

async function resolveSource(request: Request, catalog: ServerCatalog): Promise<Source> {
	const registry = 'registry' in request ? request.registry : undefined;
	const serverName = 'server' in request ? request.server : undefined;
	if (registry && serverName) {
		if (registry !== 'default') throw invalid('registry', `unknown registry ${registry} (only "default" exists)`);
		return fromCatalog(serverName, catalog, true);
	}
	if (request.image && request.url) throw invalid('url', "give either 'image' or 'url', not both");
	if (request.url) return { kind: 'remote', url: checkRemoteUrl(request.url, 'url') };
	if (!request.image) throw invalid('image', "either 'image', 'url', or 'registry'+'server' fields are required");
	const group = groupOfImage(request.image);
	if (group !== undefined) {
		// The rule of group names is a zod schema: loaded here, when a workload is made, not when one is read.
		const { GroupName } = await import('../../protocol/common.js');
		if (!GroupName.safeParse(group).success) throw invalid('image', `${JSON.stringify(group)} is not a group name`);
		return { kind: 'group', group, image: request.image };
	}
	if (isPackageReference(request.image)) return { kind: 'image', image: request.image };
	const fromRegistry = await fromCatalog(request.image, catalog, false);
	return fromRegistry ?? { kind: 'image', image: checkImageReference(request.image) };
}

async function fromCatalog(name: string, catalog: ServerCatalog, required: true): Promise<Source>;
async function fromCatalog(name: string, catalog: ServerCatalog, required: false): Promise<Source | undefined>;
async function fromCatalog(name: string, catalog: ServerCatalog, required: boolean): Promise<Source | undefined> {
	const found = await catalog.findServer(name);
	if (found?.is_remote && found.remote_server?.url) {
		return { kind: 'remote', url: found.remote_server.url, entry: { name: found.remote_server.name || name, server: found.remote_server } };
	}
	if (found && !found.is_remote && found.server?.image) {
		return { kind: 'image', image: found.server.image, entry: { name: found.server.name || name, server: found.server } };
	}
	if (required) throw HangarError.notFound(`server ${name} not found in registry default`, 'server_not_found');
	return undefined;
}

const IMAGE_REPOSITORY = /^([a-zA-Z0-9.-]+(:\d+)?\/)?[a-z0-9]+([._-]{1,2}[a-z0-9]+)*(\/[a-z0-9]+([._-]{1,2}[a-z0-9]+)*)*$/;
const IMAGE_TAG = /^\w[\w.-]{0,127}$/;
const IMAGE_DIGEST = /^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-fA-F0-9]{32,}$/;

/** A Docker image reference: `[registry[:port]/]path[:tag][@digest]`, with a lowercase path. */
function checkImageReference(image: string): string {
	const [name = '', digest, extra] = image.split('@');
	const slash = name.lastIndexOf('/');
	const colon = name.lastIndexOf(':');
	const repository = colon > slash ? name.slice(0, colon) : name;
	const tag = colon > slash ? name.slice(colon + 1) : undefined;
	const valid =
		extra === undefined && IMAGE_REPOSITORY.test(repository) && (tag === undefined || IMAGE_TAG.test(tag)) && (digest === undefined || IMAGE_DIGEST.test(digest));
	if (!valid) throw invalid('image', `${JSON.stringify(image)} is not an image reference or a registry server name`);
	return image;
}

/**
 * Remote URLs: http(s) without credentials, and never link-local or unspecified addresses
 * (cloud metadata endpoints). The proxy checks resolved addresses again when it connects.
 */
export function checkRemoteUrl(raw: string, field: string): string {
	let url: URL;
	try {
		url = new URL(raw);
	} catch {
		throw invalid(field, `${JSON.stringify(raw)} is not a URL`);
	}
	if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(field, 'only http and https URLs are supported');
	if (url.username || url.password) throw invalid(field, 'credentials in the URL are not allowed; use header_forward with a secret');
	const refused = refusalOf(url.hostname, { private: true });
	if (refused) {
		throw invalid(field, `${url.hostname} is a ${refused} address`);
	}
	return url.toString();
}

/** A browser origin, exactly `scheme://host[:port]` (http or https), as the proxy's guard compares it. */
function checkOrigin(raw: string, field: string): string {
	let url: URL | undefined;
	try {
		url = new URL(raw);
	} catch {
		// reported below
	}
	if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== raw.replace(/\/$/, '').toLowerCase()) {
		throw invalid(field, `${JSON.stringify(raw)} is not an origin: expected scheme://host[:port], as a browser sends it in the Origin header`);
	}
	return url.origin;
}

/** `host:container[:ro|rw]` with absolute paths and an existing host path. */
async function parseVolume(spec: string, field: string): Promise<string> {
	const parts = spec.split(':');
	const [source, target, mode] = parts;
	if (parts.length < 2 || parts.length > 3 || !source || !target) throw invalid(field, `${JSON.stringify(spec)} is not host:container[:ro]`);
	if (mode !== undefined && mode !== 'ro' && mode !== 'rw') throw invalid(field, `unknown mount option ${JSON.stringify(mode)} (use ro or rw)`);
	await checkMountPaths(source, target, field);
	return spec;
}

async function checkMountPaths(source: string, target: string, field: string): Promise<void> {
	if (!isAbsolute(source) || source.split('/').includes('..')) throw invalid(field, `host path ${source} must be absolute`);
	if (!target.startsWith('/') || target.split('/').includes('..')) throw invalid(field, `container path ${target} must be absolute`);
	try {
		await stat(source);
	} catch {
		throw invalid(field, `host path ${source} does not exist`);
	}
}

/** Read and write declarations: `host:container` or one path used on both sides. */
async function checkPermissionProfile(profile: PermissionProfile | undefined): Promise<void> {
	if (!profile) return;
	if (profile.privileged) throw invalid('permission_profile.privileged', 'privileged containers are not supported');
	for (const access of ['read', 'write'] as const) {
		for (const [index, entry] of (profile[access] ?? []).entries()) {
			const [source, target = source, extra] = entry.split(':');
			const field = `permission_profile.${access}[${index}]`;
			if (extra !== undefined || !source) throw invalid(field, `${JSON.stringify(entry)} is not a path or host:container`);
			await checkMountPaths(source, target!, field);
		}
	}
	const mode = profile.network?.mode ?? '';
	if (!['', 'bridge', 'none'].includes(mode)) {
		throw invalid('permission_profile.network.mode', `${JSON.stringify(mode)} is not supported (use bridge or none)`);
	}
	for (const [index, port] of (profile.network?.outbound?.allow_port ?? []).entries()) {
		if (port < 1 || port > 65535) throw invalid(`permission_profile.network.outbound.allow_port[${index}]`, 'must be 1-65535');
	}
}

function checkEnvNames(names: Iterable<string>, field: string): void {
	for (const name of names) if (!ENV_NAME.test(name)) throw invalid(`${field}.${name}`, 'not a valid environment variable name');
}

function checkHeaderNames(names: Iterable<string>, field: string): void {
	for (const name of names) {
		if (!HEADER_NAME.test(name)) throw invalid(`${field}.${name}`, 'not a valid HTTP header name');
		if (RESTRICTED_HEADERS.has(name.toLowerCase())) throw invalid(`${field}.${name}`, 'this header cannot be set');
	}
}

function checkHost(host: string): string {
	if (host !== 'localhost' && isIP(host) === 0) throw invalid('host', `${JSON.stringify(host)} is not an IP address or localhost`);
	return host;
}

function remoteAuthOf(request: Request, entry: RemoteServer | undefined): RemoteAuthConfig | undefined {
	const oauth = request.oauth_config;
	if (oauth) {
		if (oauth.resource) checkRemoteUrl(oauth.resource, 'oauth_config.resource');
		for (const field of ['client_secret_file', 'bearer_token_file'] as const) {
			if (oauth[field] !== undefined && !isAbsolute(oauth[field])) throw invalid(`oauth_config.${field}`, 'must be an absolute path');
		}
		if (oauth.callback_port !== undefined && oauth.callback_port !== 0 && (oauth.callback_port < 1024 || oauth.callback_port > 65535)) {
			throw invalid('oauth_config.callback_port', 'must be between 1024 and 65535');
		}
		const { client_secret, bearer_token, ...rest } = oauth;
		return prune({
			...rest,
			client_secret: client_secret?.name ? encodeSecret(client_secret) : undefined,
			bearer_token: bearer_token?.name ? encodeSecret(bearer_token) : undefined,
		});
	}
	return entry?.oauth_config ? prune({ ...entry.oauth_config }) : undefined;
}

/** Env var defaults of a registry entry, and a 400 for a required one nobody supplies. */
function registryEnv(server: ImageServer | RemoteServer, env: Record<string, string>, secretTargets: Set<string>): Record<string, string> {
	const filled: Record<string, string> = {};
	for (const variable of server.env_vars ?? []) {
		if (variable.name in env || secretTargets.has(variable.name)) continue;
		if (variable.default !== undefined && variable.default !== '' && !variable.secret) filled[variable.name] = variable.default;
		else if (variable.required) {
			throw invalid(`env_vars.${variable.name}`, `required by ${server.name ?? 'the server'}${variable.secret ? ' (pass it as a secret)' : ''}`);
		}
	}
	return filled;
}

export interface BuildOptions {
	readonly catalog: ServerCatalog;
	/** Groups that exist; the request's group must be one of them. */
	readonly groupExists: (group: string) => Promise<boolean>;
	/** The stored workload of a name, if any (an aggregate's members are checked against them). */
	readonly workloadOf: (name: string) => Promise<StoredWorkload | undefined>;
	/** The tools an aggregate's serving members list (workloads/memberTools.ts). */
	readonly memberTools?: AggregateContext['memberTools'];
	/** The stored workload being updated, whose creation time carries over. */
	readonly previous?: StoredWorkload;
	readonly now: string;
	/** Tells this Hangar's containers from those of another state folder on the same engine. */
	readonly instance: string;
	/** Hangar's global `telemetry_config`, which a new workload without its own inherits. */
	readonly defaultTelemetry?: TelemetryConfig;
	/** Finds the transport of an image that neither the request nor its registry entry names. */
	readonly discoverTransport?: (target: ProbeTarget, fromRegistry: boolean) => Promise<ImageTransport>;
	/** Plans the images of package references (`npx://`, `uvx://`, `go://`). */
	readonly packages: PackagePlanner;
	readonly signal?: AbortSignal;
}

/** The request's `telemetry_config` (or, for a new workload, the global one), checked; `{}` turns it off. */
function telemetryOf(request: Request, options: BuildOptions): TelemetryConfig | undefined {
	const config = request.telemetry_config ?? (options.previous ? undefined : options.defaultTelemetry);
	if (!config || Object.keys(config).length === 0) return undefined;
	const problem = telemetryConfigProblem(config);
	if (problem) throw invalid(`telemetry_config.${problem.field}`, problem.message);
	return config;
}

/** The transport of an image neither the request nor the registry names: the same image keeps its own, another is found. */
async function imageTransport(
	image: string,
	run: { args: readonly string[]; env: Record<string, string>; name: string; fromRegistry: boolean },
	options: BuildOptions,
): Promise<ImageTransport> {
	const previous = options.previous;
	if (previous?.image === image && previous.transport) return previous.transport as ImageTransport;
	if (!options.discoverTransport) return 'streamable-http';
	return options.discoverTransport({ image, args: run.args, env: run.env, containerName: containerNameOf(run.name, options.instance) }, run.fromRegistry);
}

/** The stored run configuration for a request, without ports (`port` 0 until the service picks one). */
export async function buildRunConfig(request: Request, options: BuildOptions): Promise<StoredWorkload> {
	const source = await resolveSource(request, options.catalog);
	const entry = source.entry?.server;
	const remote = source.kind === 'remote';
	const aggregate = source.kind === 'group';
	if (aggregate) await checkAggregate(source.group, request, request.aggregation, options);
	else if (request.aggregation) throw invalid('aggregation', 'only an aggregate (image group://NAME) has aggregation settings');
	const guardrails = request.guardrails && guardrailsProblem(request.guardrails);
	if (guardrails) throw invalid(`guardrails.${guardrails.field}`, guardrails.message);
	const webhooks = webhooksProblem({ mutating_webhooks: request.mutating_webhooks, validating_webhooks: request.validating_webhooks });
	if (webhooks) throw invalid(webhooks.field, webhooks.message);

	const packaged = source.kind === 'image' && isPackageReference(source.image);
	// Packages published to npm and PyPI are stdio servers unless their registry entry says otherwise.
	const given = request.transport || entry?.transport || (remote ? 'streamable-http' : packaged ? 'stdio' : undefined);
	if (given !== undefined && given !== 'stdio' && given !== 'sse' && given !== 'streamable-http') throw invalid('transport', `${given} is not supported`);
	if (remote && given === 'stdio') throw invalid('transport', 'a remote server is reached over sse or streamable-http, not stdio');
	const proxyMode = request.proxy_mode || 'streamable-http';

	const group = request.group || DEFAULT_GROUP;
	if (!(await options.groupExists(group))) throw HangarError.notFound(`group '${group}' not found`, 'group_not_found');

	const host = checkHost(request.host || DEFAULT_HOST);
	const env = { ...(request.env_vars ?? {}) };
	checkEnvNames(Object.keys(env), 'env_vars');
	const secrets = request.secrets ?? [];
	checkEnvNames(
		secrets.map((secret) => secret.target),
		'secrets',
	);
	if (entry && !remote) Object.assign(env, registryEnv(entry, env, new Set(secrets.map((secret) => secret.target))));
	const cmdArgs = remote ? undefined : (request.cmd_arguments ?? (entry as ImageServer | undefined)?.args);
	const transport: ImageTransport = given ?? (source.kind === 'image' ? await imageTransport(source.image, { args: cmdArgs ?? [], env, name: request.name, fromRegistry: entry !== undefined }, options) : 'streamable-http');

	const volumes: string[] = [];
	for (const [index, volume] of (request.volumes ?? []).entries()) volumes.push(await parseVolume(volume, `volumes[${index}]`));
	const permissionProfile = request.permission_profile ?? (entry && 'permissions' in entry ? entry.permissions : undefined);
	await checkPermissionProfile(permissionProfile);
	if (permissionProfile?.network?.mode === 'none' && transport !== 'stdio' && !remote) {
		throw invalid('permission_profile.network.mode', `a ${transport} server must be reachable over the network; use stdio, or an outbound allow-list instead`);
	}

	if (request.header_forward) {
		checkHeaderNames(Object.keys(request.header_forward.add_plaintext_headers ?? {}), 'header_forward.add_plaintext_headers');
		checkHeaderNames(Object.keys(request.header_forward.add_headers_from_secret ?? {}), 'header_forward.add_headers_from_secret');
	}
	const labels = request.labels ?? {};
	for (const key of Object.keys(labels)) {
		if (key.toLowerCase().startsWith('hangar')) throw invalid(`labels.${key}`, 'label keys starting with "hangar" are reserved');
	}
	const runtimeConfig = request.runtime_config && Object.values(request.runtime_config).some((value) => value !== undefined && !isEmpty(value)) ? request.runtime_config : undefined;
	if (runtimeConfig && !packaged) throw invalid('runtime_config', 'runtime_config is only supported for package references (npx://, uvx://, go://)');
	// The version is resolved now, so the workload runs (and restarts) that version and a failed look-up leaves nothing behind.
	const plan = packaged ? await options.packages.plan(source.image, runtimeConfig, options.signal) : undefined;
	const security = await securityFieldsOf(request, options.previous);
	if (remote && (security.scaling_config?.backend_replicas ?? 1) > 1) {
		throw invalid('scaling_config.backend_replicas', 'a remote server runs where it is hosted; Hangar cannot start instances of it (scaling_config.replicas runs several proxies in front of it)');
	}
	const telemetry = telemetryOf(request, options);
	// An HTTP server needs a container port to be reached on; ToolHive draws one when none is given.
	const targetPort =
		transport === 'stdio' || remote || aggregate ? undefined : request.target_port || (entry as ImageServer | undefined)?.target_port || options.previous?.target_port || randomInt(PORT_MIN, PORT_MAX + 1);

	return prune({
		name: request.name,
		base_name: request.name,
		container_name: remote || aggregate ? undefined : containerNameOf(request.name, options.instance),
		image: remote ? undefined : (plan?.pinned ?? source.image),
		built_image: plan?.tag,
		runtime_config: runtimeConfig,
		remote_url: remote ? source.url : undefined,
		group,
		host,
		port: 0,
		target_host: remote || aggregate ? undefined : DEFAULT_HOST,
		target_port: targetPort,
		transport,
		proxy_mode: proxyMode,
		cmd_args: aggregate ? undefined : cmdArgs,
		env_vars: remote || isEmpty(env) ? undefined : env,
		secrets: secrets.length ? secrets.map(encodeSecret) : undefined,
		volumes: volumes.length ? volumes : undefined,
		container_labels: isEmpty(labels) ? undefined : labels,
		isolate_network: request.network_isolation ?? true,
		allow_docker_gateway: request.allow_docker_gateway,
		trust_proxy_headers: request.trust_proxy_headers,
		allowed_origins: request.allowed_origins?.length ? request.allowed_origins.map((origin, index) => checkOrigin(origin, `allowed_origins[${index}]`)) : undefined,
		permission_profile: permissionProfile,
		tools_filter: request.tools?.length ? request.tools : undefined,
		tools_override: request.tools_override && !isEmpty(request.tools_override) ? request.tools_override : undefined,
		tool_pinning: request.tool_pinning,
		metrics_without_auth: request.metrics_without_auth || undefined,
		guardrails: request.guardrails,
		mutating_webhooks: request.mutating_webhooks?.length ? request.mutating_webhooks : undefined,
		validating_webhooks: request.validating_webhooks?.length ? request.validating_webhooks : undefined,
		header_forward: request.header_forward,
		...security,
		telemetry_config: telemetry,
		remote_auth_config: remote ? remoteAuthOf(request, source.entry?.server as RemoteServer | undefined) : undefined,
		headers: request.headers ?? (remote ? (source.entry?.server as RemoteServer | undefined)?.headers : undefined),
		registry_server_name: source.entry?.name,
		created_at: options.previous?.created_at ?? options.now,
		restart_policy: request.restart_policy ?? 'unless-stopped',
		request_timeout: request.request_timeout,
		request_timeout_max: request.request_timeout_max,
		session_mode: request.session_mode,
		aggregation: request.aggregation,
		max_server_processes: request.max_server_processes,
		server_process_idle_timeout: request.server_process_idle_timeout,
	}) as StoredWorkload;
}

/**
 * Container names are global to the engine: prefixed so they do not clash with the user's own
 * containers, and suffixed with the instance so two state folders (test runs, side-by-side
 * installs) on one engine do not clash with each other.
 */
export function containerNameOf(name: string, instance: string): string {
	return `hangar-${name}-${instance}`;
}

function isEmpty(value: unknown): boolean {
	if (value === undefined || value === null || value === '') return true;
	if (Array.isArray(value)) return value.length === 0;
	if (typeof value === 'object') return Object.keys(value).length === 0;
	return false;
}

/**
 * What a sign-in cached in the previous configuration of a remote workload (`cached_*` of
 * `remote_auth_config`: the registered client and the references to its secrets), kept by an
 * update that does not change the server's URL, so the update needs no new sign-in.
 */
export function keepCachedAuth(previous: StoredWorkload, config: StoredWorkload): void {
	if (!previous.remote_url || previous.remote_url !== config.remote_url || !previous.remote_auth_config) return;
	if (config.remote_auth_config?.bearer_token || config.remote_auth_config?.bearer_token_file) return;
	const cached = Object.fromEntries(Object.entries(previous.remote_auth_config).filter(([key]) => key.startsWith('cached_')));
	if (Object.keys(cached).length) config.remote_auth_config = { ...(config.remote_auth_config ?? {}), ...cached };
}
