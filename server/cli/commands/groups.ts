/**
 * `hangar group ls|create|info|rm`.
 */
import type { Command } from 'commander';
import { type Group } from '../../../protocol/protocol.groups.js';
import { addCommands, printJson, printTable, type Cli, type CommandFactory } from '../cli.js';

const groupColumns = { name: (g: Group) => g.name, clients: (g: Group) => g.registered_clients, skills: (g: Group) => g.skills };

function listGroups(group: Command, cli: Cli): Command {
	return group
		.command('ls')
		.alias('list')
		.description('List groups')
		.option('--json', 'print JSON')
		.action(async (options: { json?: boolean }) => {
			const { groups } = await cli.call('groups/list', {});
			if (options.json) return printJson(groups);
			printTable(groups, groupColumns, 'No groups.');
		});
}

function createGroup(group: Command, cli: Cli): Command {
	return group
		.command('create')
		.description('Create a group')
		.argument('<name>', 'lowercase letters, digits, "_", "-" and single spaces')
		.action(async (name: string) => {
			await cli.call('groups/create', { name });
			process.stdout.write(`Group ${name} created.\n`);
		});
}

function showGroup(group: Command, cli: Cli): Command {
	return group
		.command('info')
		.description('Show a group')
		.argument('<name>')
		.option('--json', 'print JSON')
		.action(async (name: string, options: { json?: boolean }) => {
			const found = await cli.call('groups/get', { name });
			if (options.json) return printJson(found);
			printTable([found], groupColumns, '');
		});
}

function deleteGroup(group: Command, cli: Cli): Command {
	return group
		.command('rm')
		.alias('delete')
		.description('Delete a group (its workloads move to "default" unless --with-workloads)')
		.argument('<name>')
		.option('--with-workloads', 'delete the group\'s workloads too')
		.action(async (name: string, options: { withWorkloads?: boolean }) => {
			await cli.call('groups/delete', { name, 'with-workloads': options.withWorkloads ?? false });
			process.stdout.write(`Group ${name} deleted.\n`);
		});
}

function groupCommand(program: Command, cli: Cli): Command {
	const group = program.command('group').description('Manage groups of workloads, clients and skills');
	addCommands(group, cli, [listGroups, createGroup, showGroup, deleteGroup]);
	return group;
}

/** The area's top-level command. */
export const groupCommands: readonly CommandFactory[] = [groupCommand];
