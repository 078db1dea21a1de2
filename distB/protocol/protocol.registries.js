/**
 * Registries (management API): the catalogs workloads are resolved from, in ToolHive's legacy
 * response shapes (spec 2.3–2.6). `default` always exists; Hangar can also hold further named
 * registries (`registries/add`), searched in `priority` order.
 */
import { z } from 'zod';
import { NoParams, NoResult, requiredString } from './common.js';
import { operation } from './operation.js';
import { ImageServer, RegistryData, RemoteServer } from './registryTypes.js';
/** How a registry is sourced: a local file, a static JSON URL, an MCP Registry API, or built in. */
export const RegistryType = z.enum(['file', 'url', 'api', 'default']);
/** Non-secret OAuth settings of a registry that requires login. */
export const RegistryAuthConfig = z.object({
    issuer: z.string().optional(),
    client_id: z.string().optional(),
    audience: z.string().optional(),
    scopes: z.array(z.string()).optional(),
});
/** One item of the registry list (spec 2.3). */
export const RegistrySummary = z.object({
    name: z.string(),
    type: RegistryType.optional(),
    /** URL or file path; empty for the built-in registry. */
    source: z.string().optional(),
    version: z.string().optional(),
    last_updated: z.string().optional(),
    /** Number of container (image) servers. */
    server_count: z.number().int().optional(),
    /** `none`, `configured` or `authenticated`. */
    auth_status: z.string().optional(),
    /** `oauth`, or empty when the registry needs no login. */
    auth_type: z.string().optional(),
    auth_config: RegistryAuthConfig.optional(),
    /** Hangar extension: number of remote servers. */
    remote_server_count: z.number().int().optional(),
    /** Hangar extension: number of skills. */
    skill_count: z.number().int().optional(),
    /** Hangar extension: lower numbers are searched first; `default` comes last unless set. */
    priority: z.number().int().optional(),
    /** Hangar extension: why the registry could not be read (the counts are then missing). */
    error: z.string().optional(),
});
/** A registry with its full content (spec 2.4). */
export const RegistryDetail = RegistrySummary.extend({ registry: RegistryData.optional() });
/**
 * The registry name that, in the catalog routes, spans every registry in precedence order.
 * It cannot name a registry of its own.
 */
export const ALL_REGISTRIES = 'all';
/** Name of a registry added with `registries/add`. */
export const RegistryName = requiredString('registry name')
    .max(64, 'registry name is at most 64 characters')
    .regex(/^[a-z0-9][a-z0-9._-]*$/, 'registry name may only contain lowercase letters, digits, ".", "_" and "-"')
    .refine((name) => name !== ALL_REGISTRIES, `registry name "${ALL_REGISTRIES}" is reserved`);
/** A registry named in a path; unknown names are a 404, not a 400. */
const RegistryRef = requiredString('registry name');
const RegistryRefParams = z.object({ name: RegistryRef });
/** Lists the registries. */
export const ListRegistries = operation({
    method: 'registries/list',
    summary: 'List registries',
    params: NoParams,
    result: z.object({ registries: z.array(RegistrySummary) }),
    rest: { verb: 'GET', path: '/api/v1beta/registry', status: 200 },
    errors: [500],
    example: {},
});
/**
 * Hangar extension: adds a named registry from a URL or a local file path (ToolHive answers
 * 501). The source is fetched and validated before it is saved.
 */
export const AddRegistry = operation({
    method: 'registries/add',
    summary: 'Add a registry',
    params: z.object({
        name: RegistryName,
        /** `https://…` (static JSON or MCP Registry API) or an absolute file path. */
        source: requiredString('source'),
        /** Allow private/loopback addresses and plain `http://` for URL sources. */
        allow_private_ip: z.boolean().optional(),
        priority: z.number().int().optional(),
    }),
    result: RegistrySummary,
    rest: {
        verb: 'POST',
        path: '/api/v1beta/registry',
        status: 201,
        location: (params) => '/api/v1beta/registry/' + encodeURIComponent(params.name),
    },
    errors: [400, 403, 409, 502, 504],
    example: { name: 'contract', source: '/nonexistent/contract-registry.json' },
});
/** Returns a registry with its full content. */
export const GetRegistry = operation({
    method: 'registries/get',
    summary: 'Get a registry',
    params: RegistryRefParams,
    result: RegistryDetail,
    rest: { verb: 'GET', path: '/api/v1beta/registry/{name}', status: 200 },
    errors: [404, 500, 502, 503],
    example: { name: 'default' },
});
/**
 * Points a registry at a new source: at most one of `url`, `api_url`, `local_path`; none resets
 * `default` to the built-in catalog (a named registry keeps its source). Omitting `auth` clears
 * stored registry auth. ToolHive only accepts `default` here; Hangar also accepts registries added
 * with `registries/add`. 403 when the registry policy forbids the change.
 */
export const UpdateRegistry = operation({
    method: 'registries/update',
    summary: 'Update registry configuration',
    params: z
        .object({
        name: RegistryRef,
        url: z.string().optional(),
        api_url: z.string().optional(),
        local_path: z.string().optional(),
        /** Applies to `url`/`api_url`: allow private IPs and plain `http://`. */
        allow_private_ip: z.boolean().optional(),
        /** Hangar extension: search precedence (lower first). Omitted keeps the current one. */
        priority: z.number().int().optional(),
        auth: z
            .object({
            issuer: z.string().optional(),
            client_id: z.string().optional(),
            audience: z.string().optional(),
            scopes: z.array(z.string()).optional(),
        })
            .optional(),
    })
        .superRefine((params, ctx) => {
        const sources = [params.url, params.api_url, params.local_path].filter((value) => value);
        if (sources.length > 1) {
            ctx.addIssue({
                code: 'custom',
                message: 'cannot specify more than one registry type (url, api_url, or local_path)',
            });
        }
        if (params.auth && (!params.auth.issuer || !params.auth.client_id)) {
            ctx.addIssue({ code: 'custom', path: ['auth'], message: 'auth.issuer and auth.client_id are required' });
        }
    }),
    result: z.object({ type: RegistryType }),
    rest: { verb: 'PUT', path: '/api/v1beta/registry/{name}', status: 200 },
    errors: [400, 403, 404, 502, 504],
    example: { name: 'default' },
});
/** Removes a registry added with `registries/add`. `default` cannot be removed (400). */
export const RemoveRegistry = operation({
    method: 'registries/remove',
    summary: 'Remove a registry',
    params: RegistryRefParams,
    result: NoResult,
    rest: { verb: 'DELETE', path: '/api/v1beta/registry/{name}', status: 204, response: 'empty' },
    errors: [400, 403, 404],
    example: { name: 'contract-missing' },
});
/** Drops the cached copy of a registry and fetches it again. */
export const RefreshRegistry = operation({
    method: 'registries/refresh',
    summary: 'Refresh registry cache',
    params: RegistryRefParams,
    result: z.object({ status: z.string() }),
    rest: { verb: 'POST', path: '/api/v1beta/registry/{name}/refresh', status: 200 },
    errors: [404, 500, 502, 503, 504],
    example: { name: 'default' },
});
/** Lists the image and remote servers of a registry. */
export const ListRegistryServers = operation({
    method: 'registries/listServers',
    summary: 'List servers in a registry',
    params: RegistryRefParams,
    result: z.object({
        servers: z.array(ImageServer).optional(),
        remote_servers: z.array(RemoteServer).optional(),
    }),
    rest: { verb: 'GET', path: '/api/v1beta/registry/{name}/servers', status: 200 },
    errors: [404, 500, 502, 503],
    example: { name: 'default' },
});
/**
 * Returns one server of a registry: `server` for images, `remote_server` when `is_remote`.
 * `serverName` is the full reverse-DNS name (URL-encoded in the path) or a unique short name;
 * a short name several servers end with is a 409.
 */
export const GetRegistryServer = operation({
    method: 'registries/getServer',
    summary: 'Get a server from a registry',
    params: z.object({ name: RegistryRef, serverName: requiredString('serverName') }),
    result: z.object({
        is_remote: z.boolean(),
        server: ImageServer.optional(),
        remote_server: RemoteServer.optional(),
    }),
    rest: { verb: 'GET', path: '/api/v1beta/registry/{name}/servers/{serverName}', status: 200 },
    errors: [400, 404, 409, 500, 502, 503],
    example: { name: 'default', serverName: 'io.github.contract/missing' },
});
//# sourceMappingURL=protocol.registries.js.map