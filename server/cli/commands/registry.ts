/**
 * `hangar registry ls|info|servers|server|check|skills|set|reset|refresh|add|rm`.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import {
	HANGAR_META,
	type ServerRecord,
} from '../../../protocol/protocol.catalog.js';
import {
	ALL_REGISTRIES,
	type RegistrySummary,
} from '../../../protocol/protocol.registries.js';
import { addCommands, printJson, printTable, type Cli, type CommandFactory } from '../cli.js';
import { integer } from '../values.js';
import { howItRuns, toLegacyServer, unrunnableReason } from '../../registry/convert.js';
import { PackageBuilder } from '../../packages/builder.js';
import { RuntimeDefaults } from '../../packages/defaults.js';
import { DockerRuntime } from '../../runtime/docker.js';
import { SecretsService } from '../../secrets/service.js';
import { ReadinessCheck, type Readiness } from '../../workloads/readiness.js';

interface ListOptions {
	registry?: string;
	page?: number;
	limit?: number;
	json?: boolean;
}

function listRegistries(registry: Command, cli: Cli): Command {
	return registry
		.command('ls')
		.alias('list')
		.description('List registries in precedence order')
		.option('--json', 'print JSON')
		.action(async (options: { json?: boolean }) => {
			const { registries } = await cli.call('registries/list', {});
			if (options.json) return printJson(registries);
			printTable(registries, summaryColumns, 'No registries.');
			for (const failed of registries.filter((entry) => entry.error)) process.stderr.write(`${failed.name}: ${failed.error}\n`);
		});
}

function showRegistry(registry: Command, cli: Cli): Command {
	return registry
		.command('info')
		.description('Show a registry (default: "default")')
		.argument('[name]', 'registry name', 'default')
		.option('--json', 'print JSON, with the whole registry content')
		.action(async (name: string, options: { json?: boolean }) => {
			const detail = await cli.call('registries/get', { name });
			if (options.json) return printJson(detail);
			const { registry: _content, ...summary } = detail;
			printFields({
				name: summary.name,
				type: summary.type,
				source: summary.source || '(built in)',
				version: summary.version,
				'last updated': summary.last_updated,
				servers: summary.server_count,
				'remote servers': summary.remote_server_count,
				skills: summary.skill_count,
				priority: summary.priority,
				auth: summary.auth_status,
			});
		});
}

function listServers(registry: Command, cli: Cli): Command {
	return registry
		.command('servers')
		.description('Search servers across all registries (or one with --registry)')
		.argument('[query]', 'case-insensitive text to find in names and descriptions')
		.option('--registry <name>', 'search only this registry')
		.option('--page <n>', 'page number, from 1', integer)
		.option('--limit <n>', 'servers per page (at most 200)', integer)
		.option('--json', 'print JSON')
		.action(async (query: string | undefined, options: ListOptions) => {
			const registryName = options.registry ?? ALL_REGISTRIES;
			const { servers, metadata } = await cli.call('catalog/listServers', { registryName, ...pageParams(query, options) });
			if (options.json) return printJson(servers);
			printTable(
				servers,
				{
					name: (server) => server.name,
					registry: (server) => registryOf(server) ?? registryName,
					kind: (server) => (server.packages?.length ? server.packages[0]!.registryType : 'remote'),
					transport: (server) => server.packages?.[0]?.transport?.type ?? server.remotes?.[0]?.type,
					description: (server) => server.description,
				},
				query ? `No servers match "${query}".` : 'No servers.',
			);
			printPageFooter(metadata);
		});
}

function showServer(registry: Command, cli: Cli): Command {
	return registry
		.command('server')
		.description('Show one server: full reverse-DNS name or a unique short name')
		.argument('<name>')
		.option('--registry <name>', 'look only in this registry')
		.option('--json', 'print JSON')
		.action(async (name: string, options: { registry?: string; json?: boolean }) => {
			const server = await cli.call('catalog/getServer', { registryName: options.registry ?? ALL_REGISTRIES, serverName: name });
			if (options.json) return printJson(server);
			printServer(server, options.registry);
		});
}

function checkServers(registry: Command, cli: Cli): Command {
	return registry
		.command('check')
		.description('Say of each server (or the named ones) whether it can run on this machine, and precisely why not')
		.argument('[names...]', 'full reverse-DNS names or unique short names (default: every server of every registry)')
		.option('--registry <name>', 'look only in this registry')
		.option('--json', 'print JSON')
		.action(async (names: string[], options: { registry?: string; json?: boolean }) => {
			const registryName = options.registry ?? ALL_REGISTRIES;
			const servers = names.length
				? await Promise.all(names.map((serverName) => cli.call('catalog/getServer', { registryName, serverName })))
				: await allServers(cli, registryName);
			const runtime = new DockerRuntime();
			const check = new ReadinessCheck(runtime, new PackageBuilder(runtime, new RuntimeDefaults(cli.environment.paths), new SecretsService(cli.environment)));
			const results = await mapLimited(servers, CHECKS_AT_ONCE, async (server) => ({ name: server.name, runs_as: howItRuns(server), ...(await checkServer(check, server)) }));
			if (options.json) return printJson(results);
			for (const result of results) {
				process.stdout.write(`${result.name}\n  ${result.verdict === 'runs' ? 'runs here' : 'cannot run here'}: ${result.reason}\n`);
				if (result.next) process.stdout.write(`  next: ${result.next}\n`);
				if (result.needs.length) process.stdout.write(`  needs: ${result.needs.join('; ')}\n`);
			}
			const running = results.filter((result) => result.verdict === 'runs').length;
			process.stdout.write(`${running} of ${results.length} servers can run here; ${results.length - running} cannot, each for the reason given.\n`);
		});
}

function listSkills(registry: Command, cli: Cli): Command {
	return registry
		.command('skills')
		.description('Search skills across all registries (or one with --registry)')
		.argument('[query]', 'case-insensitive text to find in names, namespaces and descriptions')
		.option('--registry <name>', 'search only this registry')
		.option('--page <n>', 'page number, from 1', integer)
		.option('--limit <n>', 'skills per page (at most 200)', integer)
		.option('--json', 'print JSON')
		.action(async (query: string | undefined, options: ListOptions) => {
			const registryName = options.registry ?? ALL_REGISTRIES;
			const { skills, metadata } = await cli.call('catalog/listSkills', { registryName, ...pageParams(query, options) });
			if (options.json) return printJson(skills);
			printTable(
				skills,
				{
					name: (skill) => (skill.namespace ? `${skill.namespace}/${skill.name}` : skill.name),
					registry: (skill) => registryOf(skill) ?? registryName,
					version: (skill) => skill.version,
					description: (skill) => skill.description,
				},
				query ? `No skills match "${query}".` : 'No skills.',
			);
			printPageFooter(metadata);
		});
}

function pointRegistry(registry: Command, cli: Cli): Command {
	return registry
		.command('set')
		.description('Point a registry at a registry file (path or URL) or an MCP Registry API URL')
		.argument('<source>', 'https://… URL, file://… URL or file path')
		.option('--name <name>', 'registry to change', 'default')
		.option('--allow-private-ip', 'allow plain http:// and private or loopback addresses')
		.action(async (source: string, options: { name: string; allowPrivateIp?: boolean }) => {
			const location = isUrl(source) ? { url: source } : { local_path: resolve(source) };
			const { type } = await cli.call('registries/update', {
				name: options.name,
				...location,
				...(options.allowPrivateIp ? { allow_private_ip: true } : {}),
			});
			process.stdout.write(`Registry ${options.name} now reads ${describeType(type)} ${location.url ?? location.local_path}.\n`);
		});
}

function resetRegistry(registry: Command, cli: Cli): Command {
	return registry
		.command('reset')
		.description('Point the default registry back at the built-in catalog')
		.action(async () => {
			await cli.call('registries/update', { name: 'default' });
			process.stdout.write('Registry default now uses the built-in catalog.\n');
		});
}

function refreshRegistry(registry: Command, cli: Cli): Command {
	return registry
		.command('refresh')
		.description('Fetch a remote registry again instead of using its cached copy')
		.argument('[name]', 'registry name', 'default')
		.action(async (name: string) => {
			await cli.call('registries/refresh', { name });
			process.stdout.write(`Registry ${name} refreshed.\n`);
		});
}

function addRegistry(registry: Command, cli: Cli): Command {
	return registry
		.command('add')
		.description('Add a named registry from a registry file (path or URL) or an MCP Registry API URL')
		.argument('<name>', 'lowercase letters, digits, ".", "_" and "-"')
		.argument('<source>', 'https://… URL, file://… URL or file path')
		.option('--priority <n>', 'search precedence: lower first (named registries default to 100, "default" to 1000)', integer)
		.option('--allow-private-ip', 'allow plain http:// and private or loopback addresses')
		.action(async (name: string, source: string, options: { priority?: number; allowPrivateIp?: boolean }) => {
			const added = await cli.call('registries/add', {
				name,
				source: isUrl(source) ? source : resolve(source),
				...(options.priority !== undefined ? { priority: options.priority } : {}),
				...(options.allowPrivateIp ? { allow_private_ip: true } : {}),
			});
			const counts = `${added.server_count ?? 0} servers, ${added.remote_server_count ?? 0} remote servers, ${added.skill_count ?? 0} skills`;
			process.stdout.write(`Registry ${added.name} added: ${counts}.\n`);
		});
}

function removeRegistry(registry: Command, cli: Cli): Command {
	return registry
		.command('rm')
		.alias('remove')
		.description('Remove a named registry')
		.argument('<name>')
		.action(async (name: string) => {
			await cli.call('registries/remove', { name });
			process.stdout.write(`Registry ${name} removed.\n`);
		});
}

function registryCommand(program: Command, cli: Cli): Command {
	const registry = program
		.command('registry')
		.description('Browse registries of MCP servers and skills, and choose where they come from');
	addCommands(registry, cli, [listRegistries, showRegistry, listServers, showServer, checkServers, listSkills, pointRegistry, resetRegistry, refreshRegistry, addRegistry, removeRegistry]);
	return registry;
}

/** The area's top-level command. */
export const registryCommands: readonly CommandFactory[] = [registryCommand];

const summaryColumns: Readonly<Record<string, (entry: RegistrySummary) => unknown>> = {
	name: (entry) => entry.name,
	type: (entry) => entry.type,
	source: (entry) => entry.source || '(built in)',
	servers: (entry) => (entry.error ? 'error' : entry.server_count),
	remote: (entry) => entry.remote_server_count,
	skills: (entry) => entry.skill_count,
	priority: (entry) => entry.priority,
	auth: (entry) => entry.auth_status,
};

function pageParams(query: string | undefined, options: ListOptions): { q?: string; page?: number; limit?: number } {
	return {
		...(query ? { q: query } : {}),
		...(options.page !== undefined ? { page: options.page } : {}),
		...(options.limit !== undefined ? { limit: options.limit } : {}),
	};
}

function isUrl(value: string): boolean {
	return /^[a-z][a-z0-9+.-]*:/i.test(value) && !/^[a-z]:[\\/]/i.test(value);
}

function describeType(type: string): string {
	return type === 'api' ? 'the MCP Registry API at' : type === 'url' ? 'the registry file at' : 'the registry file';
}

function registryOf(record: { _meta?: Record<string, unknown> | undefined }): string | undefined {
	const hangar = record._meta?.[HANGAR_META] as { registry?: string } | undefined;
	return hangar?.registry;
}

function printPageFooter(metadata: { total: number; page: number; limit: number }): void {
	const pages = Math.max(1, Math.ceil(metadata.total / metadata.limit));
	if (pages > 1) process.stderr.write(`Page ${metadata.page} of ${pages} (${metadata.total} in all); use --page for more.\n`);
}

function printServer(server: ServerRecord, registryName: string | undefined): void {
	const pkg = server.packages?.[0];
	const remote = server.remotes?.[0];
	printFields({
		name: server.name,
		registry: registryOf(server) ?? registryName,
		title: server.title,
		description: server.description,
		version: server.version,
		repository: server.repository?.url,
		package: pkg ? `${pkg.registryType} ${pkg.identifier}${pkg.version ? `@${pkg.version}` : ''}` : undefined,
		remote: remote ? remote.url : undefined,
		transport: pkg?.transport?.type ?? remote?.type,
		'runs as': howItRuns(server),
		env: pkg?.environmentVariables
			?.map((variable) => `${variable.name}${variable.isRequired ? ' (required)' : ''}${variable.isSecret ? ' (secret)' : ''}`)
			.join(', '),
		headers: remote?.headers?.map((header) => `${header.name}${header.isSecret ? ' (secret)' : ''}`).join(', '),
	});
}

/** Registry hosts and package registries are probed a few at a time. */
const CHECKS_AT_ONCE = 8;

async function allServers(cli: Cli, registryName: string): Promise<ServerRecord[]> {
	const servers: ServerRecord[] = [];
	for (let page = 1; ; page++) {
		const { servers: more, metadata } = await cli.call('catalog/listServers', { registryName, page, limit: 200 });
		servers.push(...more);
		if (page * metadata.limit >= metadata.total || !more.length) return servers;
	}
}

/** A record Hangar cannot turn into a workload at all says so; any other is checked on this machine. */
async function checkServer(check: ReadinessCheck, server: ServerRecord): Promise<Readiness> {
	const legacy = toLegacyServer(server);
	if (!legacy) return { verdict: 'cannot', reason: unrunnableReason(server)!, next: 'run one of its other distributions by hand, if it has one', needs: [] };
	return check.check(legacy.kind === 'image' ? { kind: 'image', server: legacy.server } : { kind: 'remote', server: legacy.server });
}

async function mapLimited<T, R>(items: readonly T[], limit: number, map: (item: T) => Promise<R>): Promise<R[]> {
	const results = new Array<R>(items.length);
	let next = 0;
	const worker = async () => {
		while (next < items.length) {
			const index = next++;
			results[index] = await map(items[index]!);
		}
	};
	await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
	return results;
}

function printFields(fields: Record<string, unknown>): void {
	const present = Object.entries(fields).filter(([, value]) => value !== undefined && value !== '');
	const width = Math.max(...present.map(([key]) => key.length));
	process.stdout.write(`${present.map(([key, value]) => `${`${key}:`.padEnd(width + 2)}${String(value)}`).join('\n')}\n`);
}
