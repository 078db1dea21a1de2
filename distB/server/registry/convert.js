import { isPlainObject } from '../json.js';
const PUBLISHER_PROVIDED = 'io.modelcontextprotocol.registry/publisher-provided';
/** The publisher namespace ToolHive's extras live under; other namespaces are read after it. */
const TOOLHIVE_NAMESPACE = 'io.github.stacklok';
/** Package types that become a runnable image reference, in order of preference. */
const RUNNABLE = ['oci', 'npm', 'pypi'];
export function toLegacyServer(record) {
    const pkg = choosePackage(record.packages);
    if (pkg)
        return { kind: 'image', server: toImageServer(record, pkg) };
    const remote = chooseRemote(record.remotes);
    if (remote)
        return { kind: 'remote', server: toRemoteServer(record, remote) };
    return undefined;
}
/** What `toLegacyServer` would make of a record, without building it. */
export function legacyKind(record) {
    if (choosePackage(record.packages))
        return 'image';
    return chooseRemote(record.remotes) ? 'remote' : undefined;
}
/** The whole registry in the legacy shape, with groups. */
export function toLegacyRegistry(document) {
    const { servers, remote_servers } = legacyMaps(document.servers);
    const registry = {};
    put(registry, 'version', document.version);
    put(registry, 'last_updated', document.lastUpdated);
    registry.servers = servers;
    registry.remote_servers = remote_servers;
    registry.groups = document.groups.map((group) => {
        const legacy = { name: group.name };
        put(legacy, 'description', group.description);
        return Object.assign(legacy, legacyMaps(group.servers));
    });
    return registry;
}
function legacyMaps(records) {
    const servers = {};
    const remote_servers = {};
    for (const record of records) {
        const legacy = toLegacyServer(record);
        if (legacy?.kind === 'image')
            servers[record.name] = legacy.server;
        else if (legacy?.kind === 'remote')
            remote_servers[record.name] = legacy.server;
    }
    return { servers, remote_servers };
}
function chooseRemote(remotes) {
    return remotes?.find((entry) => entry.url);
}
function choosePackage(packages) {
    for (const type of RUNNABLE) {
        const found = packages?.find((pkg) => pkg.registryType === type && pkg.identifier);
        if (found)
            return found;
    }
    return undefined;
}
/** `oci` → the image; `npm` → `npx://pkg@version`; `pypi` → `uvx://pkg@version`. */
export function imageReference(pkg) {
    const identifier = pkg.identifier;
    if (pkg.registryType === 'oci')
        return identifier;
    const scheme = pkg.registryType === 'npm' ? 'npx' : 'uvx';
    return `${scheme}://${identifier}${pkg.version ? `@${pkg.version}` : ''}`;
}
function toImageServer(record, pkg) {
    const extras = extrasOf(record, pkg.identifier);
    const args = flattenArguments(pkg.packageArguments);
    const envVars = [...(pkg.environmentVariables ?? []).map(toEnvVar), ...envFromRuntimeArguments(pkg.runtimeArguments)];
    const server = baseFields(record, extras);
    put(server, 'transport', pkg.transport?.type ?? 'stdio');
    put(server, 'image', imageReference(pkg));
    put(server, 'target_port', targetPort(pkg.transport));
    put(server, 'env_vars', envVars.length ? envVars : undefined);
    put(server, 'args', args.length ? args : extras.args);
    for (const key of ['permissions', 'provenance', 'docker_tags', 'proxy_port'])
        put(server, key, extras[key]);
    return server;
}
function toRemoteServer(record, remote) {
    const extras = extrasOf(record, remote.url);
    const headers = remote.headers?.map(toHeader);
    const server = baseFields(record, extras);
    put(server, 'transport', remote.type ?? 'streamable-http');
    put(server, 'url', remote.url);
    put(server, 'headers', headers?.length ? headers : undefined);
    for (const key of ['env_vars', 'oauth_config', 'proxy_port'])
        put(server, key, extras[key]);
    return server;
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
];
function baseFields(record, extras) {
    const server = {};
    put(server, 'name', record.name);
    put(server, 'title', record.title);
    put(server, 'description', record.description);
    put(server, 'repository_url', record.repository?.url);
    for (const key of BASE_EXTRAS)
        put(server, key, extras[key]);
    return server;
}
/**
 * The publisher-provided extras of a record: under ToolHive's namespace first, keyed by the
 * package identifier or remote URL, else the first entry of any namespace.
 */
export function extrasOf(record, key) {
    const provided = record._meta?.[PUBLISHER_PROVIDED];
    if (!provided)
        return {};
    const namespaces = [provided[TOOLHIVE_NAMESPACE], ...Object.values(provided)];
    for (const namespace of namespaces) {
        if (!isPlainObject(namespace))
            continue;
        const keyed = namespace[key];
        if (isPlainObject(keyed))
            return keyed;
        const first = Object.values(namespace).find(isPlainObject);
        if (first)
            return first;
    }
    return {};
}
/** Port of a transport URL such as `http://localhost:8080`; undefined when there is none. */
export function targetPort(transport) {
    if (!transport?.url)
        return undefined;
    try {
        const port = new URL(transport.url).port;
        return port ? Number(port) : undefined;
    }
    catch {
        return undefined;
    }
}
function toEnvVar(input) {
    const envVar = { name: input.name ?? '' };
    put(envVar, 'description', input.description);
    put(envVar, 'default', input.default);
    put(envVar, 'required', input.isRequired);
    put(envVar, 'secret', input.isSecret);
    return envVar;
}
function toHeader(input) {
    const header = toEnvVar(input);
    put(header, 'choices', input.choices);
    return header;
}
/** `-e NAME=value` / `--env NAME={var}` runtime arguments, the Docker CLI way of passing env vars. */
function envFromRuntimeArguments(args) {
    const envVars = [];
    for (const arg of args ?? []) {
        if (arg.type !== 'named' || (arg.name !== '-e' && arg.name !== '--env') || !arg.value)
            continue;
        const separator = arg.value.indexOf('=');
        if (separator <= 0)
            continue;
        const name = arg.value.slice(0, separator);
        const value = arg.value.slice(separator + 1);
        const variable = /^\{(.+)\}$/.exec(value)?.[1];
        const input = variable ? arg.variables?.[variable] : undefined;
        const envVar = { name };
        put(envVar, 'description', arg.description);
        put(envVar, 'required', arg.isRequired ?? input?.isRequired);
        put(envVar, 'secret', input?.isSecret);
        put(envVar, 'default', variable ? input?.default : value);
        envVars.push(envVar);
    }
    return envVars;
}
/** Structured package arguments as a plain argument list: each name, then its value. */
function flattenArguments(args) {
    const flat = [];
    for (const arg of args ?? []) {
        if (arg.name)
            flat.push(arg.name);
        if (arg.value)
            flat.push(arg.value);
    }
    return flat;
}
/**
 * Sets a field only when the source has a value, so responses carry only what the source said.
 * (Assignment, not object spread or `delete`: both are slow paths on 10,000 records.)
 */
function put(target, key, value) {
    if (value !== undefined)
        target[key] = value;
}
//# sourceMappingURL=convert.js.map