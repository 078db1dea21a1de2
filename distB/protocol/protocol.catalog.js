/**
 * Catalog: the MCP-registry-like v0.1 browse API (spec 2.9, 2.10; ToolHive `/registry/...`).
 * Records are in the upstream MCP registry format. Lists are page-based: `page` is 1-based
 * (default 1), `limit` defaults to 50 and is clamped to 200; `q` is a case-insensitive substring
 * match. Out-of-range pages give an empty list. ToolHive ignores `{registryName}` (always the
 * default registry); Hangar serves the named registry, and an unknown name is a 404. The name
 * `all` spans every registry in precedence order: a name found in several registries comes from
 * the first, and each record names its registry in `_meta["dev.hangar"].registry`.
 * 502 when the source serves something that is not a registry (such as the legacy ToolHive
 * format), 503 when it cannot be reached.
 */
import { z } from 'zod';
import { QueryInteger, requiredString, SkillName } from './common.js';
import { operation } from './operation.js';
/** The `_meta` key under which Hangar adds to upstream records (e.g. `{registry}` in `all` searches). */
export const HANGAR_META = 'dev.hangar';
/** Value type of an input. */
export const InputFormat = z.enum(['string', 'number', 'boolean', 'filepath']);
/** A variable substituted into a URL, header or argument (`model.Input`). */
export const ServerVariable = z.object({
    description: z.string().optional(),
    format: InputFormat.optional(),
    default: z.string().optional(),
    placeholder: z.string().optional(),
    value: z.string().optional(),
    choices: z.array(z.string()).optional(),
    isRequired: z.boolean().optional(),
    isSecret: z.boolean().optional(),
});
/** A named input: environment variable or header (`model.KeyValueInput`). */
export const ServerInput = ServerVariable.extend({
    name: z.string().optional(),
    variables: z.record(z.string(), ServerVariable).optional(),
});
/** A command-line argument of a package or its runtime (`model.Argument`). */
export const ServerArgument = ServerInput.extend({
    /** `positional` or `named`. */
    type: z.enum(['positional', 'named']).optional(),
    valueHint: z.string().optional(),
    isRepeated: z.boolean().optional(),
});
/** How a package or remote is spoken to (`model.Transport`). */
export const ServerTransport = z.object({
    /** `stdio`, `sse` or `streamable-http`. */
    type: z.string().optional(),
    url: z.string().optional(),
    headers: z.array(ServerInput).optional(),
    variables: z.record(z.string(), ServerVariable).optional(),
});
/** An installable package of a server (`model.Package`). */
export const ServerPackage = z.object({
    /** `oci`, `npm`, `pypi`, … */
    registryType: z.string().optional(),
    registryBaseUrl: z.string().optional(),
    identifier: z.string().optional(),
    version: z.string().optional(),
    /** SHA-256 hex digest of the package file. */
    fileSha256: z.string().optional(),
    runtimeHint: z.string().optional(),
    transport: ServerTransport.optional(),
    environmentVariables: z.array(ServerInput).optional(),
    packageArguments: z.array(ServerArgument).optional(),
    runtimeArguments: z.array(ServerArgument).optional(),
});
/** Source repository of a server. */
export const ServerRepository = z.object({
    id: z.string().optional(),
    source: z.string().optional(),
    subfolder: z.string().optional(),
    url: z.string().optional(),
});
/** An icon of a server. */
export const ServerIcon = z.object({
    src: z.string().optional(),
    mimeType: z.string().optional(),
    sizes: z.array(z.string()).optional(),
    theme: z.string().optional(),
});
/**
 * A server in the upstream MCP registry format (spec 2.9). `_meta` is keyed by a namespaced key;
 * ToolHive's extras live under `_meta["io.modelcontextprotocol.registry/publisher-provided"]`.
 */
export const ServerRecord = z.object({
    $schema: z.string().optional(),
    /** Reverse-DNS name, e.g. `io.github.stacklok/fetch`. */
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    version: z.string().optional(),
    websiteUrl: z.string().optional(),
    repository: ServerRepository.optional(),
    icons: z.array(ServerIcon).optional(),
    packages: z.array(ServerPackage).optional(),
    remotes: z.array(ServerTransport).optional(),
    _meta: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
});
/** Page metadata of a list: `total` counts the matches after `q` filtering. */
export const PageMetadata = z.object({
    total: z.number().int(),
    page: z.number().int(),
    limit: z.number().int(),
});
/** An icon of a registry skill. */
export const RegistrySkillIcon = z.object({
    src: z.string().optional(),
    size: z.string().optional(),
    type: z.string().optional(),
    label: z.string().optional(),
});
/** An installable package of a registry skill: an OCI artifact or a git location. */
export const RegistrySkillPackage = z.object({
    /** `oci` or `git`. */
    registryType: z.string().optional(),
    identifier: z.string().optional(),
    digest: z.string().optional(),
    mediaType: z.string().optional(),
    url: z.string().optional(),
    ref: z.string().optional(),
    commit: z.string().optional(),
    subfolder: z.string().optional(),
});
/** A skill as a registry lists it (spec 2.10). */
export const RegistrySkill = z.object({
    /** Reverse-DNS namespace, e.g. `io.github.stacklok`. */
    namespace: z.string().optional(),
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    version: z.string().optional(),
    /** `active`, `deprecated` or `archived`. */
    status: z.string().optional(),
    license: z.string().optional(),
    compatibility: z.string().optional(),
    allowedTools: z.array(z.string()).optional(),
    repository: z.object({ type: z.string().optional(), url: z.string().optional() }).optional(),
    icons: z.array(RegistrySkillIcon).optional(),
    packages: z.array(RegistrySkillPackage).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    _meta: z.record(z.string(), z.unknown()).optional(),
});
const RegistryNameParam = requiredString('registryName');
const PageParams = z.object({
    registryName: RegistryNameParam,
    /** Case-insensitive substring filter. */
    q: z.string().optional(),
    /** 1-based page; values below 1 mean 1. */
    page: QueryInteger.optional(),
    /** Page size; default 50, at most 200. */
    limit: QueryInteger.optional(),
});
/** Lists the servers of a registry, one page at a time, filtered by `q` (name and description). */
export const ListCatalogServers = operation({
    method: 'catalog/listServers',
    summary: 'List available registry servers',
    params: PageParams,
    result: z.object({ servers: z.array(ServerRecord), metadata: PageMetadata }),
    rest: { verb: 'GET', path: '/registry/{registryName}/v0.1/servers', status: 200, query: ['q', 'page', 'limit'] },
    errors: [400, 404, 500, 502, 503],
    example: { registryName: 'default', limit: 5 },
});
/**
 * Returns the latest version of one server. `serverName` is URL-encoded (`io.github.x%2Fname`);
 * a unique short name (`fetch`) also resolves.
 */
export const GetCatalogServer = operation({
    method: 'catalog/getServer',
    summary: 'Get a registry server',
    params: z.object({ registryName: RegistryNameParam, serverName: requiredString('serverName') }),
    result: ServerRecord,
    rest: { verb: 'GET', path: '/registry/{registryName}/v0.1/servers/{serverName}/versions/latest', status: 200 },
    errors: [400, 404, 409, 500, 502, 503],
    example: { registryName: 'default', serverName: 'io.github.contract/missing' },
});
/** Lists the skills of a registry, filtered by `q` (name, namespace and description). */
export const ListCatalogSkills = operation({
    method: 'catalog/listSkills',
    summary: 'List available registry skills',
    params: PageParams,
    result: z.object({ skills: z.array(RegistrySkill), metadata: PageMetadata }),
    rest: {
        verb: 'GET',
        path: '/registry/{registryName}/v0.1/x/dev.toolhive/skills',
        status: 200,
        query: ['q', 'page', 'limit'],
    },
    errors: [400, 404, 500, 502, 503],
    example: { registryName: 'default', limit: 5 },
});
/** Returns one registry skill by namespace and name. */
export const GetCatalogSkill = operation({
    method: 'catalog/getSkill',
    summary: 'Get a registry skill',
    params: z.object({
        registryName: RegistryNameParam,
        namespace: requiredString('namespace'),
        skillName: SkillName,
    }),
    result: RegistrySkill,
    rest: {
        verb: 'GET',
        path: '/registry/{registryName}/v0.1/x/dev.toolhive/skills/{namespace}/{skillName}',
        status: 200,
    },
    errors: [400, 404, 500, 502, 503],
    example: { registryName: 'default', namespace: 'io.github.contract', skillName: 'missing' },
});
//# sourceMappingURL=protocol.catalog.js.map