/**
 * The sync hook the workloads service calls, driven in-process with a list of running
 * workloads the test controls (the workloads service is another area's). Everything else is
 * real: client configuration files under a temporary HOME, the state store, the locks.
 */
import { chmod, lstat, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLIENT_APPS, type ClientApp } from '../protocol/common.js';
import { HangarError } from '../protocol/errors.js';
import { ClientsService } from '../server/clients/service.js';
import type { RunningWorkloads, WorkloadEndpoint } from '../server/clients/workloads.js';
import { Notifier, type Environment } from '../server/environment.js';
import { GroupStore } from '../server/groups/store.js';
import { resolvePaths } from '../server/store/paths.js';
import { CLIENT_FACTS, userEntry } from './fixtures/clients/facts.js';

let root: string;
let home: string;
let running: WorkloadEndpoint[];
let warnings: string[];
let groups: GroupStore;
let clients: ClientsService;

beforeEach(async () => {
	root = await mkdtemp(join(tmpdir(), 'hangar-clients-sync-'));
	home = join(root, 'home');
	await mkdir(home);
	running = [];
	warnings = [];
	const environment: Environment = {
		paths: resolvePaths({ HANGAR_HOME: join(root, 'hangar') }),
		log: { debug() {}, info() {}, warn: (message) => warnings.push(message), error: (message) => warnings.push(message) },
		notifier: new Notifier(),
	};
	const workloads: RunningWorkloads = { list: async () => running.map((workload) => ({ ...workload })) };
	groups = new GroupStore(environment.paths);
	clients = new ClientsService(environment, groups, workloads, { home, platform: 'linux' });
});
afterEach(() => rm(root, { recursive: true, force: true }));

const workload = (
	name: string,
	port: number,
	group = 'default',
	transport: WorkloadEndpoint['transport'] = 'streamable-http',
) => ({
	name,
	group,
	url: transport === 'sse' ? `http://127.0.0.1:${port}/sse#${name}` : `http://127.0.0.1:${port}/mcp`,
	transport,
});
const configOf = (client: ClientApp) => join(home, CLIENT_FACTS[client].file);
const read = (path: string) => readFile(path, 'utf8');
const entriesOf = async (client: ClientApp) => CLIENT_FACTS[client].entries(await read(configOf(client)));

async function seed(client: ClientApp, text = CLIENT_FACTS[client].seed, mode = 0o644): Promise<string> {
	const path = configOf(client);
	await mkdir(dirname(path), { recursive: true });
	await writeFile(path, text);
	await chmod(path, mode);
	return path;
}

describe.each(CLIENT_APPS.map((client) => ({ client })))('$client', ({ client }) => {
	const facts = CLIENT_FACTS[client];

	it('lists a workload that appears, follows its port, and drops it when it goes, leaving the file as it was', async () => {
		const path = await seed(client);
		await clients.register(client, ['default']);
		expect(await read(path), 'registering with nothing running changes nothing').toBe(facts.seed);

		running = [workload('fetch', 41001)];
		await clients.syncWorkloads();
		let entries = await entriesOf(client);
		expect(entries.fetch).toEqual(facts.expected('fetch', 'http://127.0.0.1:41001/mcp', 'streamable-http'));
		expect(entries.mine).toEqual(userEntry(client));

		running = [workload('fetch', 41002), workload('events', 41003, 'default', 'sse')];
		await clients.syncWorkloads();
		entries = await entriesOf(client);
		expect(entries.fetch).toEqual(facts.expected('fetch', 'http://127.0.0.1:41002/mcp', 'streamable-http'));
		expect(entries.events).toEqual(facts.expected('events', 'http://127.0.0.1:41003/sse#events', 'sse'));
		expect(Object.keys(entries).sort()).toEqual([...Object.keys(facts.entries(facts.seed)), 'events', 'fetch'].sort());

		running = [];
		await clients.syncWorkloads();
		expect(await read(path), 'byte-for-byte the user file').toBe(facts.seed);
		expect((await stat(path)).mode & 0o777).toBe(0o644);
		expect(warnings).toEqual([]);
	});

	it('creates a missing file 0600 in new folders 0700, and unregistering removes its entries', async () => {
		await clients.register(client, ['default']);
		running = [workload('fetch', 41010)];
		await clients.syncWorkloads();
		const path = configOf(client);
		expect((await stat(path)).mode & 0o777).toBe(0o600);
		if (dirname(path) !== home) expect((await stat(dirname(path))).mode & 0o777).toBe(0o700);
		expect((await entriesOf(client)).fetch).toEqual(facts.expected('fetch', 'http://127.0.0.1:41010/mcp', 'streamable-http'));

		await clients.unregister(client);
		expect(await entriesOf(client)).toEqual({});
		expect(await clients.list()).toEqual([]);
	});
});

describe('groups decide what a client lists', () => {
	it('lists the workloads of its groups only; unregistering from one group removes only that group’s', async () => {
		await groups.create('frontend');
		await groups.create('backend');
		running = [workload('ui', 42001, 'frontend'), workload('api', 42002, 'backend'), workload('other', 42003, 'default')];
		await clients.register('cursor', ['frontend', 'backend']);
		expect(Object.keys(await entriesOf('cursor')).sort()).toEqual(['api', 'ui']);
		expect((await groups.get('frontend')).registered_clients).toEqual(['cursor']);

		await clients.unregisterFromGroup('cursor', 'backend');
		expect(Object.keys(await entriesOf('cursor'))).toEqual(['ui']);
		expect(await clients.list()).toEqual([{ name: 'cursor', groups: ['frontend'] }]);

		await clients.unregister('cursor');
		expect(await entriesOf('cursor')).toEqual({});
		expect((await groups.get('frontend')).registered_clients).toEqual([]);
	});

	it('a group with an aggregate is listed through it once, not with every member beside it', async () => {
		await groups.create('dev');
		const aggregate = { ...workload('dev-all', 42021, 'dev'), aggregates: 'dev' };
		running = [workload('ev1', 42022, 'dev'), workload('mem', 42023, 'dev'), aggregate, workload('other', 42024, 'default')];
		await clients.register('cursor', ['dev']);
		expect(Object.keys(await entriesOf('cursor'))).toEqual(['dev-all']);
		await clients.registerMany(['zed'], undefined);
		expect(Object.keys(await entriesOf('zed')).sort()).toEqual(['dev-all', 'other']);
		// The aggregate stopped: its members come back.
		running = running.filter((endpoint) => endpoint !== aggregate);
		await clients.syncWorkloads();
		expect(Object.keys(await entriesOf('cursor')).sort()).toEqual(['ev1', 'mem']);
	});

	it('a client registered without groups lists every running workload', async () => {
		await groups.create('backend');
		running = [workload('api', 42010, 'backend'), workload('other', 42011, 'default')];
		expect(await clients.registerMany(['codex', 'zed'], undefined)).toEqual([{ name: 'codex' }, { name: 'zed' }]);
		expect(Object.keys(await entriesOf('codex')).sort()).toEqual(['api', 'other']);
		expect(Object.keys(await entriesOf('zed')).sort()).toEqual(['api', 'other']);
		expect((await clients.discover()).find((status) => status.client_type === 'zed')?.registered).toBe(true);
	});

	it('an unknown group is a 404 and nothing is recorded', async () => {
		const error = await clients.register('cursor', ['default', 'missing']).catch((e: unknown) => e);
		expect(error).toMatchObject({ status: 404, message: "group 'missing' not found" });
		expect(await clients.list()).toEqual([]);
	});
});

describe('entries Hangar did not write', () => {
	it('are never updated or removed, even when a workload has the same name', async () => {
		const path = await seed('cursor', '{\n  "mcpServers": {\n    "fetch": { "command": "my-own-fetch" }\n  }\n}\n');
		const before = await read(path);
		running = [workload('fetch', 43001), workload('time', 43002)];
		await clients.register('cursor', ['default']);
		const entries = await entriesOf('cursor');
		expect(entries.fetch).toEqual({ command: 'my-own-fetch' });
		expect(entries.time).toEqual({ url: 'http://127.0.0.1:43002/mcp', type: 'http' });
		expect(warnings.join('\n')).toMatch(/already has an entry "fetch" that Hangar did not write/);

		running = [];
		await clients.syncWorkloads();
		expect(await read(path)).toBe(before);
	});

	it('keep fields the user added to an entry Hangar wrote when its URL changes', async () => {
		running = [workload('fetch', 43010)];
		await clients.register('vscode', ['default']);
		const path = configOf('vscode');
		await writeFile(path, (await read(path)).replace('"type": "http"', '"type": "http",\n        "headers": { "X-Team": "a" }'));
		running = [workload('fetch', 43011)];
		await clients.syncWorkloads();
		expect((await entriesOf('vscode')).fetch).toEqual({
			url: 'http://127.0.0.1:43011/mcp',
			type: 'http',
			headers: { 'X-Team': 'a' },
		});
	});
});

describe('per-project VS Code configuration', () => {
	it('writes <project>/.vscode/mcp.json and leaves the user-wide file alone', async () => {
		const project = join(root, 'project');
		await mkdir(project);
		await groups.create('proj');
		running = [workload('db', 44001, 'proj'), workload('other', 44002, 'default')];
		expect(await clients.register('vscode', ['proj'], project)).toEqual({
			name: 'vscode',
			groups: ['proj'],
			project_root: project,
		});
		const file = join(project, '.vscode', 'mcp.json');
		expect(JSON.parse(await read(file))).toEqual({ servers: { db: { url: 'http://127.0.0.1:44001/mcp', type: 'http' } } });
		expect((await stat(join(project, '.vscode'))).mode & 0o777).toBe(0o700);
		await expect(stat(configOf('vscode'))).rejects.toThrow();
		expect(await clients.list()).toEqual([{ name: 'vscode', groups: ['proj'], project_root: project }]);

		// VS Code Insiders reads the same file: both registrations' workloads are listed.
		await clients.register('vscode-insider', ['default'], project);
		expect(Object.keys(JSON.parse(await read(file)).servers).sort()).toEqual(['db', 'other']);
		await clients.unregister('vscode-insider', project);
		expect(Object.keys(JSON.parse(await read(file)).servers)).toEqual(['db']);

		running = [];
		await clients.syncWorkloads();
		expect(JSON.parse(await read(file))).toEqual({ servers: {} });
	});

	it('keeps another client\'s project file in step as workloads come and go (Gemini CLI: httpUrl, url for SSE)', async () => {
		const project = join(root, 'gemini-project');
		await mkdir(project);
		await clients.register('gemini-cli', ['default'], project);
		const file = join(project, '.gemini', 'settings.json');
		await expect(stat(file), 'nothing running, nothing written').rejects.toThrow();

		running = [workload('fetch', 44101), workload('events', 44102, 'default', 'sse')];
		await clients.syncWorkloads();
		expect(JSON.parse(await read(file))).toEqual({
			mcpServers: { fetch: { httpUrl: 'http://127.0.0.1:44101/mcp' }, events: { url: 'http://127.0.0.1:44102/sse#events' } },
		});
		running = [workload('fetch', 44103)];
		await clients.syncWorkloads();
		expect(JSON.parse(await read(file))).toEqual({ mcpServers: { fetch: { httpUrl: 'http://127.0.0.1:44103/mcp' } } });
		await expect(stat(join(home, '.gemini')), 'the user-wide file is not touched').rejects.toThrow();
	});

	it('does not follow a .vscode symlink out of the project', async () => {
		const project = join(root, 'cloned');
		const elsewhere = join(root, 'elsewhere');
		await mkdir(project);
		await mkdir(elsewhere);
		await symlink(elsewhere, join(project, '.vscode'));
		running = [workload('fetch', 44010)];
		const error = await clients.register('vscode', undefined, project).catch((e: unknown) => e);
		expect(error).toMatchObject({ status: 400, message: expect.stringContaining('outside the project') });
		await expect(stat(join(elsewhere, 'mcp.json'))).rejects.toThrow();
		expect(await clients.list()).toEqual([]);
	});

	it('refuses a project root that is not a folder, and clients without project files', async () => {
		await expect(clients.register('vscode', undefined, join(root, 'nope'))).rejects.toMatchObject({
			status: 400,
			message: expect.stringContaining('project_root'),
		});
		await expect(clients.register('windsurf', undefined, root)).rejects.toMatchObject({ status: 400, message: expect.stringContaining('project_root') });
	});
});

describe('files users can trust', () => {
	it('writes through a symlinked config to its target', async () => {
		const dotfiles = join(root, 'dotfiles');
		await mkdir(dotfiles);
		await writeFile(join(dotfiles, 'claude.json'), '{ "numStartups": 4 }\n');
		await symlink(join(dotfiles, 'claude.json'), join(home, '.claude.json'));
		running = [workload('fetch', 45001)];
		await clients.register('claude-code', ['default']);
		expect((await lstat(join(home, '.claude.json'))).isSymbolicLink()).toBe(true);
		expect(await readlink(join(home, '.claude.json'))).toBe(join(dotfiles, 'claude.json'));
		expect(JSON.parse(await read(join(dotfiles, 'claude.json')))).toMatchObject({
			numStartups: 4,
			mcpServers: { fetch: { type: 'http' } },
		});
	});

	it('treats an empty file as empty', async () => {
		await seed('cursor', '');
		running = [workload('fetch', 45010)];
		await clients.register('cursor', ['default']);
		expect(JSON.parse(await read(configOf('cursor')))).toEqual({
			mcpServers: { fetch: { url: 'http://127.0.0.1:45010/mcp', type: 'http' } },
		});
	});

	it('does not create a client folder when there is nothing to write', async () => {
		await clients.register('cursor', ['default']);
		await clients.syncWorkloads();
		await expect(stat(join(home, '.cursor'))).rejects.toThrow();
	});

	it.each([
		['cursor', '{\n  "mcpServers": {\n    "a": 1,,\n  }\n}\n', /mcp\.json:3:12: invalid JSON/],
		['goose', 'extensions:\n  a: [1, 2\nother: 1\n', /config\.yaml:3:\d+: invalid YAML/],
		['codex', 'model = "o3"\n[mcp_servers.a\nurl = "x"\n', /config\.toml:2:\d+: invalid TOML/],
		['continue', 'mcpServers:\n  fetch: {}\n', /config\.yaml: "mcpServers" is not a list/],
	] as const)('a malformed %s file is an error naming file and line, and stays untouched', async (client, text, message) => {
		const path = await seed(client, text);
		running = [workload('fetch', 45020)];
		const error = await clients.register(client, ['default']).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(HangarError);
		expect((error as HangarError).status).toBe(400);
		expect((error as HangarError).message).toContain(path);
		expect((error as HangarError).message).toMatch(message);
		expect(await read(path)).toBe(text);
		expect(await clients.list(), 'nothing recorded').toEqual([]);
	});

	it('a file broken after registration is reported by the sync and left alone; other clients still update', async () => {
		running = [workload('fetch', 45030)];
		await clients.register('cursor', ['default']);
		await clients.register('kiro', ['default']);
		const broken = '{ "mcpServers": { "fetch": ';
		await writeFile(configOf('cursor'), broken);
		running = [workload('fetch', 45031)];
		await clients.syncWorkloads();
		expect(await read(configOf('cursor'))).toBe(broken);
		expect((await entriesOf('kiro')).fetch).toEqual({ url: 'http://127.0.0.1:45031/mcp' });
		expect(warnings.join('\n')).toMatch(/mcp\.json:1:\d+: invalid JSON/);
	});
});

describe('installed: what Hangar wrote does not count', () => {
	const installed = async (client: ClientApp) => (await clients.discover()).find((status) => status.client_type === client)?.installed;

	it('VS Code and Claude Code stay not installed after Hangar writes their configuration files', async () => {
		running = [workload('fetch', 4101)];
		for (const client of ['vscode', 'claude-code'] as const) {
			expect(await installed(client)).toBe(false);
			await clients.register(client, ['default']);
			expect(Object.keys(await entriesOf(client))).toContain('fetch');
			expect(await installed(client), client).toBe(false);
		}
	});

	it('they count as installed once the client itself wrote there, and when the folder was there before Hangar', async () => {
		running = [workload('fetch', 4101)];
		await clients.register('vscode', ['default']);
		await clients.register('claude-code', ['default']);
		await writeFile(join(dirname(configOf('vscode')), 'settings.json'), '{}');
		const claude = JSON.parse(await read(configOf('claude-code'))) as Record<string, unknown>;
		await writeFile(configOf('claude-code'), JSON.stringify({ ...claude, numStartups: 1 }));
		expect(await installed('vscode')).toBe(true);
		expect(await installed('claude-code')).toBe(true);

		await mkdir(dirname(configOf('cursor')), { recursive: true });
		await clients.register('cursor', ['default']);
		expect(await installed('cursor')).toBe(true);
	});
});
