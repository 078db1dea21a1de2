import { CreateGroup, DeleteGroup, GetGroup, ListGroups } from '../../../protocol/protocol.groups.js';
import { printJson, printTable } from '../cli.js';
const groupColumns = { name: (g) => g.name, clients: (g) => g.registered_clients, skills: (g) => g.skills };
export function registerGroupCommands(program, cli) {
    const group = program.command('group').description('Manage groups of workloads, clients and skills');
    group
        .command('ls')
        .alias('list')
        .description('List groups')
        .option('--json', 'print JSON')
        .action(async (options) => {
        const { groups } = await cli.call(ListGroups, {});
        if (options.json)
            return printJson(groups);
        printTable(groups, groupColumns, 'No groups.');
    });
    group
        .command('create')
        .description('Create a group')
        .argument('<name>', 'lowercase letters, digits, "_", "-" and single spaces')
        .action(async (name) => {
        await cli.call(CreateGroup, { name });
        process.stdout.write(`Group ${name} created.\n`);
    });
    group
        .command('info')
        .description('Show a group')
        .argument('<name>')
        .option('--json', 'print JSON')
        .action(async (name, options) => {
        const found = await cli.call(GetGroup, { name });
        if (options.json)
            return printJson(found);
        printTable([found], groupColumns, '');
    });
    group
        .command('rm')
        .alias('delete')
        .description('Delete a group (its workloads move to "default" unless --with-workloads)')
        .argument('<name>')
        .option('--with-workloads', 'delete the group\'s workloads too')
        .action(async (name, options) => {
        await cli.call(DeleteGroup, { name, 'with-workloads': options.withWorkloads ?? false });
        process.stdout.write(`Group ${name} deleted.\n`);
    });
}
//# sourceMappingURL=groups.js.map