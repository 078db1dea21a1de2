/**
 * Clients: MCP client applications (VS Code, Cursor, Claude Code, …) whose configuration files
 * list the running workloads of the groups they are registered into.
 */
import { z } from 'zod';
import { noProjectFileMessage, PROJECT_CONFIG_CLIENTS, PROJECT_CONFIG_FILES } from './clientApps.js';
import { AbsolutePath, ClientApp, GroupName, NoParams, NoResult } from './common.js';
import { operation } from './operation.js';

/** A registered client and the groups it is registered into (spec 2.1). */
export const RegisteredClient = z.object({
	name: ClientApp,
	groups: z.array(z.string()).optional(),
	/** Hangar extension: present on a per-project registration (the client's file under `project_root`). */
	project_root: z.string().optional(),
});
export type RegisteredClient = z.infer<typeof RegisteredClient>;

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
export type ClientAppStatus = z.infer<typeof ClientAppStatus>;

export { noProjectFileMessage, PROJECT_CONFIG_CLIENTS, PROJECT_CONFIG_FILES };

/** `project_root` (Hangar extension): the per-project registration to change instead of the user-wide one. */
const ProjectRootParam = AbsolutePath.optional();

/** A `project_root` for a client without a project file is a 400 naming the field. */
function requireProjectFile(params: { name: string; project_root?: string | undefined }, context: z.RefinementCtx): void {
	if (params.project_root === undefined || PROJECT_CONFIG_FILES[params.name as ClientApp] !== undefined) return;
	context.addIssue({ code: 'custom', message: noProjectFileMessage(params.name), path: ['project_root'] });
}

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
 * into its configuration. Hangar extension: `project_root` writes the groups into the client's
 * project file under that folder (`PROJECT_CONFIG_FILES`) instead of the user-wide configuration.
 */
export const RegisterClient = operation({
	method: 'clients/register',
	summary: 'Register a client',
	params: z
		.object({
			name: ClientApp,
			groups: z.array(GroupName).optional(),
			/** Hangar extension: register into this project's file of the client (`PROJECT_CONFIG_FILES`). */
			project_root: AbsolutePath.optional(),
		})
		.superRefine(requireProjectFile),
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
	params: z.object({ name: ClientApp, project_root: ProjectRootParam }).superRefine(requireProjectFile),
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
		.superRefine(requireProjectFile),
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
