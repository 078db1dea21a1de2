/**
 * Clients: MCP client applications (VS Code, Cursor, Claude Code, …) whose configuration files
 * list the running workloads of the groups they are registered into.
 */
import { z } from 'zod';
import { AbsolutePath, ClientApp, GroupName, NoParams, NoResult } from './common.js';
import { operation } from './operation.js';
/** A registered client and the groups it is registered into (spec 2.1). */
export const RegisteredClient = z.object({
    name: ClientApp,
    groups: z.array(z.string()).optional(),
    /** Hangar extension: present on a per-project registration (`<project_root>/.vscode/mcp.json`). */
    project_root: z.string().optional(),
});
/** Whether a client is installed on this machine and registered (spec 2.2). */
export const ClientAppStatus = z.object({
    client_type: ClientApp,
    installed: z.boolean(),
    registered: z.boolean(),
    /** Skills can be installed for this client (always sent, false too, as ToolHive does). */
    supports_skills: z.boolean(),
    /** Plugins can be installed for this client. */
    supports_plugins: z.boolean().optional(),
});
/** Clients whose per-project configuration is `<project>/.vscode/mcp.json`. */
const PROJECT_CONFIG_CLIENTS = ['vscode', 'vscode-insider'];
/** `project_root` (Hangar extension): the per-project registration to change instead of the user-wide one. */
const ProjectRootParam = AbsolutePath.optional();
function projectRootSupported(params) {
    return params.project_root === undefined || PROJECT_CONFIG_CLIENTS.includes(params.name);
}
const PROJECT_ROOT_UNSUPPORTED = { message: 'project_root is only supported for vscode and vscode-insider', path: ['project_root'] };
const ClientNames = z.array(ClientApp).min(1, 'at least one client name is required');
/** Body of the bulk register/unregister operations (ToolHive `bulkClientRequest`). */
export const BulkClientParams = z.object({
    names: ClientNames,
    groups: z.array(GroupName).optional(),
});
/** Lists registered clients with their groups (a bare array). */
export const ListClients = operation({
    method: 'clients/list',
    summary: 'List registered clients',
    params: NoParams,
    result: z.array(RegisteredClient),
    rest: { verb: 'GET', path: '/api/v1beta/clients', status: 200 },
    errors: [500],
    example: {},
});
/**
 * Registers a client into groups (`default` when omitted) and writes their running workloads
 * into its configuration. Hangar extension: `project_root` (VS Code clients only) writes the
 * groups into `<project_root>/.vscode/mcp.json` instead of the user-wide configuration.
 */
export const RegisterClient = operation({
    method: 'clients/register',
    summary: 'Register a client',
    params: z
        .object({
        name: ClientApp,
        groups: z.array(GroupName).optional(),
        /** Hangar extension: register into this project's `.vscode/mcp.json`. */
        project_root: AbsolutePath.optional(),
    })
        .refine(projectRootSupported, PROJECT_ROOT_UNSUPPORTED),
    result: RegisteredClient,
    rest: { verb: 'POST', path: '/api/v1beta/clients', status: 200 },
    errors: [400, 404, 500],
    example: { name: 'vscode' },
});
/**
 * Registers several clients at once. Unlike `clients/register`, omitted `groups` means the
 * legacy global registration (every running workload), not `default`.
 */
export const RegisterClients = operation({
    method: 'clients/registerMany',
    summary: 'Register several clients',
    params: BulkClientParams,
    result: z.array(RegisteredClient),
    rest: { verb: 'POST', path: '/api/v1beta/clients/register', status: 200 },
    errors: [400, 404, 500],
    example: { names: ['vscode'] },
});
/**
 * Unregisters a client from every group and removes its workload entries from its
 * configuration. Hangar extension: with `project_root`, only that project's registration.
 */
export const UnregisterClient = operation({
    method: 'clients/unregister',
    summary: 'Unregister a client',
    params: z.object({ name: ClientApp, project_root: ProjectRootParam }).refine(projectRootSupported, PROJECT_ROOT_UNSUPPORTED),
    result: NoResult,
    rest: { verb: 'DELETE', path: '/api/v1beta/clients/{name}', status: 204, query: ['project_root'], response: 'empty' },
    errors: [400, 404, 500],
    example: { name: 'vscode' },
});
/**
 * Unregisters a client from one group, removing only that group's workloads from its
 * configuration. Hangar extension: with `project_root`, in that project's registration.
 */
export const UnregisterClientFromGroup = operation({
    method: 'clients/unregisterFromGroup',
    summary: 'Unregister a client from a group',
    params: z
        .object({ name: ClientApp, group: GroupName, project_root: ProjectRootParam })
        .refine(projectRootSupported, PROJECT_ROOT_UNSUPPORTED),
    result: NoResult,
    rest: {
        verb: 'DELETE',
        path: '/api/v1beta/clients/{name}/groups/{group}',
        status: 204,
        query: ['project_root'],
        response: 'empty',
    },
    errors: [400, 404, 500],
    example: { name: 'vscode', group: 'default' },
});
/** Unregisters several clients; with `groups`, only from those groups. */
export const UnregisterClients = operation({
    method: 'clients/unregisterMany',
    summary: 'Unregister several clients',
    params: BulkClientParams,
    result: NoResult,
    rest: { verb: 'POST', path: '/api/v1beta/clients/unregister', status: 204, response: 'empty' },
    errors: [400, 404, 500],
    example: { names: ['vscode'] },
});
/** Reports, for every supported client, whether it is installed here and whether it is registered. */
export const DiscoverClients = operation({
    method: 'clients/discover',
    summary: 'List all clients status',
    params: NoParams,
    result: z.object({ clients: z.array(ClientAppStatus) }),
    rest: { verb: 'GET', path: '/api/v1beta/discovery/clients', status: 200 },
    errors: [500],
    example: {},
});
//# sourceMappingURL=protocol.clients.js.map