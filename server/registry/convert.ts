/**
 * Upstream `server.json` records → the legacy ToolHive shapes the management API answers with
 * (spec 2.4–2.6): a server with an installable package becomes an image server, one with only
 * remotes a remote server.
 *
 * Package → image: `oci` keeps the image reference, `npm` becomes `npx://pkg@version`, `pypi`
 * becomes `uvx://pkg@version`; the target port comes from the transport URL. ToolHive's extras
 * (status, tier, tools, tags, permissions, provenance, oauth…) are read from the
 * publisher-provided `_meta` block, keyed by the image reference or remote URL.
 */
import type { ServerArgument, ServerInput, ServerPackage, ServerRecord, ServerTransport } from '../../protocol/protocol.catalog.js';
import type { EnvVar, ImageServer, RegistryData, RegistryHeader, RemoteServer } from '../../protocol/registryTypes.js';
import { isPlainObject } from '../json.js';
import type { RegistryDocument } from './format.js';

const PUBLISHER_PROVIDED = 'io.modelcontextprotocol.registry/publisher-provided';
/** The publisher namespace ToolHive's extras live under; other namespaces are read after it. */
const TOOLHIVE_NAMESPACE = 'io.github.stacklok';

export type LegacyServer = { kind: 'image'; server: ImageServer } | { kind: 'remote'; server: RemoteServer };

type Extras = Record<string, unknown>;

/** Package types that become a runnable image reference, in order of preference. */
const RUNNABLE = ['oci', 'npm', 'pypi'] as const;

export function toLegacyServer(record: ServerRecord): LegacyServer | undefined {
	const pkg = choosePackage(record.packages);
	if (pkg) return { kind: 'image', server: toImageServer(record, pkg) };
	const remote = chooseRemote(record.remotes);
	if (remote) return { kind: 'remote', server: toRemoteServer(record, remote) };
	return undefined;
}

/** What `toLegacyServer` would make of a record, without building it. */
export function legacyKind(record: ServerRecord): LegacyServer['kind'] | undefined {
	if (choosePackage(record.packages)) return 'image';
	return chooseRemote(record.remotes) ? 'remote' : undefined;
}

/** The whole registry in the legacy shape, with groups. */
export function toLegacyRegistry(document: RegistryDocument): RegistryData {
	const { servers, remote_servers } = legacyMaps(document.servers);
	const registry: Extras = {};
	put(registry, 'version', document.version);
	put(registry, 'last_updated', document.lastUpdated);
	registry.servers = servers;
	registry.remote_servers = remote_servers;
	registry.groups = document.groups.map((group) => {
		const legacy: Extras = { name: group.name };
		put(legacy, 'description', group.description);
		return Object.assign(legacy, legacyMaps(group.servers));
	});
	return registry as RegistryData;
}

interface LegacyMaps {
	servers: Record<string, ImageServer>;
	remote_servers: Record<string, RemoteServer>;
}

function legacyMaps(records: readonly ServerRecord[]): LegacyMaps {
	const servers: Record<string, ImageServer> = {};
	const remote_servers: Record<string, RemoteServer> = {};
	for (const record of records) {
		const legacy = toLegacyServer(record);
		if (legacy?.kind === 'image') servers[record.name] = legacy.server;
		else if (legacy?.kind === 'remote') remote_servers[record.name] = legacy.server;
	}
	return { servers, remote_servers };
}

function chooseRemote(remotes: readonly ServerTransport[] | undefined): ServerTransport | undefined {
	return remotes?.find((entry) => entry.url);
}

function choosePackage(packages: readonly ServerPackage[] | undefined): ServerPackage | undefined {
	for (const type of RUNNABLE) {
		const found = packages?.find((pkg) => pkg.registryType === type && pkg.identifier);
		if (found) return found;
	}
	return undefined;
}

/**
 * Why a record cannot run, or undefined when it can: its packages are all of types Hangar
 * does not run (nuget, mcpb…) and it has no remote.
 */
export function unrunnableReason(record: ServerRecord): string | undefined {
	if (legacyKind(record)) return undefined;
	const types = [...new Set((record.packages ?? []).map((pkg) => pkg.registryType ?? 'unknown'))];
	if (!types.length) return `server ${record.name} has neither a package nor a remote to run`;
	return `server ${record.name} is published only as ${types.map((type) => `a ${type} package`).join(' and ')} (registryType ${types.join(', ')}), which Hangar cannot run; it runs npm, pypi and oci packages and remote servers`;
}

/** How `hangar run NAME` runs a record, in a line. */
export function howItRuns(record: ServerRecord): string {
	const legacy = toLegacyServer(record);
	if (!legacy) return `cannot run: ${unrunnableReason(record)}`;
	if (legacy.kind === 'remote') return `the remote server ${legacy.server.url} (${legacy.server.transport ?? 'streamable-http'})`;
	const image = legacy.server.image ?? '';
	const args = legacy.server.args?.length ? ` with arguments ${legacy.server.args.join(' ')}` : '';
	const built = image.startsWith('npx://') ? ', an image built once from the npm package' : image.startsWith('uvx://') ? ', an image built once from the PyPI package' : '';
	return `${image}${built} (${legacy.server.transport ?? 'stdio'})${args}`;
}

/** `oci` → the image; `npm` → `npx://pkg@version`; `pypi` → `uvx://pkg@version`. */
export function imageReference(pkg: ServerPackage): string {
	const identifier = pkg.identifier!;
	if (pkg.registryType === 'oci') return identifier;
	const scheme = pkg.registryType === 'npm' ? 'npx' : 'uvx';
	return `${scheme}://${identifier}${pkg.version ? `@${pkg.version}` : ''}`;
}

function toImageServer(record: ServerRecord, pkg: ServerPackage): ImageServer {
	const extras = extrasOf(record, pkg.identifier!);
	const args = flattenArguments(pkg.packageArguments);
	const envVars = [...(pkg.environmentVariables ?? []).map(toEnvVar), ...envFromRuntimeArguments(pkg.runtimeArguments)];
	const server = baseFields(record, extras);
	put(server, 'transport', pkg.transport?.type ?? 'stdio');
	put(server, 'image', imageReference(pkg));
	put(server, 'target_port', targetPort(pkg.transport));
	put(server, 'env_vars', envVars.length ? envVars : undefined);
	put(server, 'args', args.length ? args : extras.args);
	for (const key of ['permissions', 'provenance', 'docker_tags', 'proxy_port'] as const) put(server, key, extras[key]);
	return server as ImageServer;
}

function toRemoteServer(record: ServerRecord, remote: ServerTransport): RemoteServer {
	const extras = extrasOf(record, remote.url!);
	const headers = remote.headers?.map(toHeader);
	const server = baseFields(record, extras);
	put(server, 'transport', remote.type ?? 'streamable-http');
	put(server, 'url', remote.url);
	put(server, 'headers', headers?.length ? headers : undefined);
	for (const key of ['env_vars', 'oauth_config', 'proxy_port'] as const) put(server, key, extras[key]);
	return server as RemoteServer;
}

/** Extras both kinds of server carry, copied when the source has them. */
const BASE_EXTRAS = [
	'status',
	'tier',
	'tools',
	'tags',
	'overview',
	'tool_definitions',
	'metadata',
	'custom_metadata',
	'stateless',
] as const;

function baseFields(record: ServerRecord, extras: Extras): Extras {
	const server: Extras = {};
	put(server, 'name', record.name);
	put(server, 'title', record.title);
	put(server, 'description', record.description);
	put(server, 'repository_url', record.repository?.url);
	for (const key of BASE_EXTRAS) put(server, key, extras[key]);
	return server;
}

/**
 * The publisher-provided extras of a record: under ToolHive's namespace first, keyed by the
 * package identifier or remote URL, else the first entry of any namespace.
 */
export function extrasOf(record: ServerRecord, key: string): Extras {
	const provided = record._meta?.[PUBLISHER_PROVIDED];
	if (!provided) return {};
	const namespaces = [provided[TOOLHIVE_NAMESPACE], ...Object.values(provided)];
	for (const namespace of namespaces) {
		if (!isPlainObject(namespace)) continue;
		const keyed = namespace[key];
		if (isPlainObject(keyed)) return keyed;
		const first = Object.values(namespace).find(isPlainObject);
		if (first) return first;
	}
	return {};
}

/** Port of a transport URL such as `http://localhost:8080`; undefined when there is none. */
export function targetPort(transport: ServerTransport | undefined): number | undefined {
	if (!transport?.url) return undefined;
	try {
		const port = new URL(transport.url).port;
		return port ? Number(port) : undefined;
	} catch {
		return undefined;
	}
}

function toEnvVar(input: ServerInput): EnvVar {
	const envVar: Extras = { name: input.name ?? '' };
	put(envVar, 'description', input.description);
	put(envVar, 'default', input.default);
	put(envVar, 'required', input.isRequired);
	put(envVar, 'secret', input.isSecret);
	return envVar as EnvVar;
}

function toHeader(input: ServerInput): RegistryHeader {
	const header = toEnvVar(input) as Extras;
	put(header, 'choices', input.choices);
	return header as RegistryHeader;
}

/** `-e NAME=value` / `--env NAME={var}` runtime arguments, the Docker CLI way of passing env vars. */
function envFromRuntimeArguments(args: readonly ServerArgument[] | undefined): EnvVar[] {
	const envVars: EnvVar[] = [];
	for (const arg of args ?? []) {
		if (arg.type !== 'named' || (arg.name !== '-e' && arg.name !== '--env') || !arg.value) continue;
		const separator = arg.value.indexOf('=');
		if (separator <= 0) continue;
		const name = arg.value.slice(0, separator);
		const value = arg.value.slice(separator + 1);
		const variable = /^\{(.+)\}$/.exec(value)?.[1];
		const input = variable ? arg.variables?.[variable] : undefined;
		const envVar: Extras = { name };
		put(envVar, 'description', arg.description);
		put(envVar, 'required', arg.isRequired ?? input?.isRequired);
		put(envVar, 'secret', input?.isSecret);
		put(envVar, 'default', variable ? input?.default : value);
		envVars.push(envVar as EnvVar);
	}
	return envVars;
}

/** Structured package arguments as a plain argument list: each name, then its value. */
function flattenArguments(args: readonly ServerArgument[] | undefined): string[] {
	const flat: string[] = [];
	for (const arg of args ?? []) {
		if (arg.name) flat.push(arg.name);
		if (arg.value) flat.push(arg.value);
	}
	return flat;
}

/**
 * Sets a field only when the source has a value, so responses carry only what the source said.
 * (Assignment, not object spread or `delete`: both are slow paths on 10,000 records.)
 */
function put(target: Extras, key: string, value: unknown): void {
	if (value !== undefined) target[key] = value;
}
