/**
 * `hangar client ls|register|unregister`.
 */
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { CLIENT_APPS, noProjectFileMessage, PROJECT_CONFIG_CLIENTS, PROJECT_CONFIG_FILES } from '../../../protocol/clientApps.js';
import type { ClientApp } from '../../../protocol/common.js';
import { HangarError } from '../../../protocol/errors.js';
import { addCommands, collect, printJson, printTable, type Cli, type CommandFactory } from '../cli.js';

function listClients(client: Command, cli: Cli): Command {
	return client
		.command('ls')
		.alias('list')
		.description('List every supported client: installed here, registered into which groups and projects')
		.option('--project <dir>', "the clients with a project file, and their registrations for <dir>")
		.option('--json', 'print JSON')
		.action(async (options: { json?: boolean; project?: string }) => {
			if (options.project !== undefined) return listProject(cli, resolve(options.project), options.json ?? false);
			const [{ clients: statuses }, registered] = await Promise.all([cli.call('clients/discover', {}), cli.call('clients/list', {})]);
			const rows = statuses.map((status) => {
				const entries = registered.filter((entry) => entry.name === status.client_type);
				const userWide = entries.find((entry) => entry.project_root === undefined);
				return {
					name: status.client_type,
					installed: status.installed,
					registered: status.registered,
					groups: userWide?.groups ?? [],
					projects: entries.flatMap((entry) =>
						entry.project_root ? [{ project_root: entry.project_root, groups: entry.groups ?? [] }] : [],
					),
					supports_skills: status.supports_skills ?? false,
					supports_plugins: status.supports_plugins ?? false,
				};
			});
			if (options.json) return printJson(rows);
			printTable(
				rows,
				{
					name: (row) => row.name,
					installed: (row) => (row.installed ? 'yes' : 'no'),
					groups: (row) => (row.registered && row.groups.length === 0 ? 'all workloads' : row.groups),
					projects: (row) => row.projects.map((project) => project.project_root),
					skills: (row) => (row.supports_skills ? 'yes' : 'no'),
				},
				'No clients.',
			);
		});
}

function registerClient(client: Command, cli: Cli): Command {
	return client
		.command('register')
		.description("Register clients into groups: their configs then list the groups' running workloads")
		.argument('<names...>', 'client ids, e.g. vscode cursor claude-code (see `hangar client ls`)')
		.option('-g, --group <group>', 'group to register into (repeatable; default "default")', collect)
		.option('--project <dir>', "register into the client's project file under <dir> instead (see `hangar client ls --project`)")
		// Names are checked by the operation's schema (an unknown id is a one-line 400).
		.action(async (names: ClientApp[], options: { group?: string[]; project?: string }) => {
			if (options.project !== undefined) requireProjectFiles(names);
			const groups = options.group ?? ['default'];
			if (options.project !== undefined || names.length === 1) {
				const project_root = options.project === undefined ? undefined : resolve(options.project);
				for (const name of names) await cli.call('clients/register', { name, groups, ...(project_root ? { project_root } : {}) });
			} else {
				await cli.call('clients/registerMany', { names, groups });
			}
			const where = options.project === undefined ? '' : ` for project ${resolve(options.project)}`;
			process.stdout.write(
				`Registered ${names.join(', ')} in ${groups.length > 1 ? 'groups' : 'group'} ${groups.join(', ')}${where}.\n`,
			);
		});
}

function unregisterClient(client: Command, cli: Cli): Command {
	return client
		.command('unregister')
		.alias('rm')
		.description('Unregister clients (from one group with --group) and remove their Hangar entries')
		.argument('<names...>', 'client ids, e.g. vscode claude-code')
		.option('-g, --group <group>', 'only from this group')
		.option('--project <dir>', "the registration in the client's project file under <dir> instead of the user-wide one")
		.action(async (names: ClientApp[], options: { group?: string; project?: string }) => {
			if (options.project !== undefined) requireProjectFiles(names);
			const project = options.project === undefined ? {} : { project_root: resolve(options.project) };
			// The API answers 204 either way, as ToolHive's does; the CLI says when nothing changed,
			// before changing anything.
			const listed = await cli.call('clients/list', {});
			const missing = names.filter(
				(name) =>
					CLIENT_APPS.includes(name) &&
					!listed.some(
						(entry) =>
							entry.name === name &&
							entry.project_root === project.project_root &&
							(options.group === undefined || (entry.groups ?? []).includes(options.group)),
					),
			);
			if (missing.length) {
				const where = `${options.group === undefined ? '' : ` in group '${options.group}'`}${project.project_root ? ` for project ${project.project_root}` : ''}`;
				const which = missing.map((name) => `'${name}'`).join(', ');
				throw new HangarError(404, `client${missing.length > 1 ? 's' : ''} ${which} ${missing.length > 1 ? 'are' : 'is'} not registered${where}; see hangar client ls`, 'client_not_registered');
			}
			for (const name of names) {
				if (options.group !== undefined) await cli.call('clients/unregisterFromGroup', { name, group: options.group, ...project });
				else await cli.call('clients/unregister', { name, ...project });
			}
			process.stdout.write(`Unregistered ${names.join(', ')}${options.group === undefined ? '' : ` from group ${options.group}`}.\n`);
		});
}

function clientCommand(program: Command, cli: Cli): Command {
	const client = program
		.command('client')
		.description('Register MCP clients (VS Code, Cursor, Claude Code…) and see which are installed');
	addCommands(client, cli, [listClients, registerClient, unregisterClient]);
	return client;
}

/** The area's top-level command. */
export const clientCommands: readonly CommandFactory[] = [clientCommand];

/** `--project` with a client that has no project file: the API's 400, naming the flag. */
function requireProjectFiles(names: readonly string[]): void {
	const without = names.find((name) => CLIENT_APPS.includes(name as ClientApp) && PROJECT_CONFIG_FILES[name as ClientApp] === undefined);
	if (without !== undefined) throw HangarError.badRequest(`invalid --project: ${noProjectFileMessage(without)}`, 'invalid_project_root');
}

/** `hangar client ls --project DIR`: each client with a project file, its file there and the groups registered into it. */
async function listProject(cli: Cli, given: string, json: boolean): Promise<void> {
	// Registrations are kept under the real path of their folder.
	const root = await realpath(given).catch(() => given);
	const registered = await cli.call('clients/list', {});
	const rows = PROJECT_CONFIG_CLIENTS.map((name) => {
		const entry = registered.find((item) => item.name === name && item.project_root === root);
		return { name, file: PROJECT_CONFIG_FILES[name]!, registered: entry !== undefined, groups: entry?.groups ?? [] };
	});
	if (json) return printJson({ project_root: root, clients: rows });
	printTable(
		rows,
		{
			name: (row) => row.name,
			file: (row) => row.file,
			registered: (row) => (row.registered ? 'yes' : 'no'),
			groups: (row) => row.groups,
		},
		'No clients.',
	);
}
