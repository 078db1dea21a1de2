/**
 * Clients through the real doors: a spawned `hangar daemon` (JSON-RPC), `hangar serve`
 * (REST) and the `hangar client` CLI, all with a temporary HOME whose client folders the
 * tests create. Detection and registration for every client id, ToolHive's statuses and
 * shapes, malformed user files, and several processes registering at once.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLIENT_APPS, type ClientApp } from '../protocol/common.js';
import { HangarError } from '../protocol/errors.js';
import {
	DiscoverClients,
	ListClients,
	RegisterClient,
	RegisterClients,
	UnregisterClient,
	UnregisterClients,
} from '../protocol/protocol.clients.js';
import { CreateGroup, GetGroup } from '../protocol/protocol.groups.js';
import { configLockTarget } from '../server/clients/service.js';
import { withLock } from '../server/store/lock.js';
import { resolvePaths } from '../server/store/paths.js';
import { CLIENT_FACTS } from './fixtures/clients/facts.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar, spawnDaemon, startServe, type DaemonProcess, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';
import { TOOLHIVE_CLIENT_IDS } from './support/toolhive-openapi.js';

const DIST = fileURLToPath(new URL('../dist', import.meta.url));
const WORKER = fileURLToPath(new URL('./fixtures/clients/register-worker.mjs', import.meta.url));

let state: TestHome;
let home: string;
let env: NodeJS.ProcessEnv;
let daemon: DaemonProcess;
let serve: ServeProcess;

beforeAll(async () => {
	state = await createTestHome('hangar-clients-');
	home = join(state.path, 'home');
	await mkdir(home);
	env = { ...state.env, HOME: home };
	daemon = spawnDaemon(env);
	await daemon.client.initialize('clients-test');
	serve = await startServe(env);
});
afterAll(async () => {
	await Promise.all([daemon?.stop(), serve?.stop()]);
	await state?.dispose();
});

/**
 * Empties HOME and unregisters everything, so each test starts from nothing: Hangar's record of
 * the client folders it created goes too (a folder it made in the old HOME is not the test's).
 */
beforeEach(async () => {
	await rm(home, { recursive: true, force: true });
	await mkdir(home);
	const registered = (await daemon.client.request(ListClients, {})).filter((client) => client.project_root === undefined);
	if (registered.length) await daemon.client.request(UnregisterClients, { names: registered.map((client) => client.name) });
	await rm(join(resolvePaths(env).state, 'clients.json'), { force: true });
});

const hangar = (...args: string[]) => runHangar(args, env);
const rest = (row: Parameters<typeof callRest>[1], params: Record<string, unknown>) => callRest(serve.url, row, params);

describe('detection', () => {
	it.each(CLIENT_APPS.map((client) => ({ client })))('$client is installed once its folder exists', async ({ client }) => {
		const facts = CLIENT_FACTS[client];
		const before = await daemon.client.request(DiscoverClients, {});
		expect(before.clients.find((status) => status.client_type === client)?.installed).toBe(false);

		const target = join(home, facts.detect);
		if (facts.detectIsFile) await writeFile(target, '{}');
		else await mkdir(target, { recursive: true });
		const after = await daemon.client.request(DiscoverClients, {});
		expect(after.clients.find((status) => status.client_type === client)).toMatchObject({ installed: true, registered: false });
	});

	it('reports every client id once, with skills support as toolhive-facts §3.4 lists it', async () => {
		const response = await rest(DiscoverClients, {});
		expect(response.status).toBe(200);
		const statuses = (
			response.body as { clients: { client_type: string; supports_skills?: boolean; supports_plugins: boolean }[] }
		).clients;
		expect(statuses.map((status) => status.client_type).sort()).toEqual([...CLIENT_APPS].sort());
		const withoutSkills = statuses.filter((status) => !status.supports_skills).map((status) => status.client_type);
		expect(withoutSkills.sort()).toEqual(['amazon-q', 'continue', 'copilot-cli', 'lm-studio', 'vscode-server', 'windsurf-jetbrains', 'zed']);
		expect(
			statuses
				.filter((status) => status.supports_plugins)
				.map((status) => status.client_type)
				.sort(),
		).toEqual(['claude-code', 'codex']);
	});
});

describe("ToolHive's client ids and Hangar's own", () => {
	it("every id of ToolHive's ClientApp enum is accepted, in its order; Hangar's own (amazon-q) come after it", async () => {
		expect(CLIENT_APPS.slice(0, TOOLHIVE_CLIENT_IDS.length)).toEqual(TOOLHIVE_CLIENT_IDS);
		expect(CLIENT_APPS.slice(TOOLHIVE_CLIENT_IDS.length)).toEqual(['amazon-q']);
		const response = await rest(RegisterClients, { names: [...TOOLHIVE_CLIENT_IDS, 'amazon-q'] });
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect((await daemon.client.request(ListClients, {})).map((client) => client.name).sort()).toEqual([...CLIENT_APPS].sort());
	});
});

describe('registration over RPC', () => {
	it.each(CLIENT_APPS.map((client) => ({ client })))('$client: register, list, discover, unregister', async ({ client }) => {
		expect(await daemon.client.request(RegisterClient, { name: client })).toEqual({ name: client, groups: ['default'] });
		expect(await daemon.client.request(ListClients, {})).toContainEqual({ name: client, groups: ['default'] });
		expect((await daemon.client.request(GetGroup, { name: 'default' })).registered_clients).toContain(client);
		const discovered = await daemon.client.request(DiscoverClients, {});
		expect(discovered.clients.find((status) => status.client_type === client)?.registered).toBe(true);

		expect(await daemon.client.request(UnregisterClient, { name: client })).toBeNull();
		expect((await daemon.client.request(GetGroup, { name: 'default' })).registered_clients).not.toContain(client);
		// With nothing running there is nothing to write: the client's folder is not created.
		await expect(readFile(join(home, CLIENT_FACTS[client].file))).rejects.toThrow();
	});

	it('an unknown client id is a 400 naming it', async () => {
		const error = await daemon.client.request(RegisterClient, { name: 'notepad' as ClientApp }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(HangarError);
		expect(error).toMatchObject({ status: 400, message: expect.stringContaining('unsupported client type: notepad') });
	});
});

describe('REST, as ToolHive answers', () => {
	it('register returns 200 with the client; the list is a bare array', async () => {
		await daemon.client.request(CreateGroup, { name: 'rest-a' }).catch(() => undefined);
		const registered = await rest(RegisterClient, { name: 'cursor', groups: ['rest-a'] });
		expect(registered).toMatchObject({ status: 200, body: { name: 'cursor', groups: ['rest-a'] } });
		const listed = await rest(ListClients, {});
		expect(listed.status).toBe(200);
		expect(listed.body).toEqual([{ name: 'cursor', groups: ['rest-a'] }]);
	});

	it('bulk register answers [{name}…]; bulk unregister 204', async () => {
		const registered = await rest(RegisterClients, { names: ['vscode', 'zed'], groups: ['default'] });
		expect(registered).toMatchObject({ status: 200, body: [{ name: 'vscode' }, { name: 'zed' }] });
		expect((await daemon.client.request(GetGroup, { name: 'default' })).registered_clients).toEqual(['vscode', 'zed']);
		expect((await rest(UnregisterClients, { names: ['vscode', 'zed'] })).status).toBe(204);
		expect((await daemon.client.request(GetGroup, { name: 'default' })).registered_clients).toEqual([]);
	});

	it('DELETE /clients/{name}/groups/{group} removes one membership', async () => {
		await daemon.client.request(CreateGroup, { name: 'rest-b' }).catch(() => undefined);
		await daemon.client.request(RegisterClient, { name: 'kiro', groups: ['default', 'rest-b'] });
		const response = await fetch(`${serve.url}/api/v1beta/clients/kiro/groups/rest-b`, { method: 'DELETE' });
		expect(response.status).toBe(204);
		expect(await daemon.client.request(ListClients, {})).toEqual([{ name: 'kiro', groups: ['default'] }]);
	});

	it.each([
		['bulk register without names', 400, RegisterClients, { names: [] }, /names: at least one client name is required/],
		['an unknown group', 404, RegisterClient, { name: 'cursor', groups: ['ghosts'] }, /group 'ghosts' not found/],
		['an unknown client', 400, RegisterClient, { name: 'notepad' }, /unsupported client type: notepad/],
		[
			'project_root for a client without project files',
			400,
			RegisterClient,
			{ name: 'windsurf', project_root: '/tmp' },
			/project_root/,
		],
		[
			'a project_root that does not exist',
			400,
			RegisterClient,
			{ name: 'vscode', project_root: '/does/not/exist' },
			/project_root/,
		],
	] as const)('%s is a %i', async (_, status, row, params, message) => {
		const response = await rest(row, params);
		expect(response.status).toBe(status);
		expect((response.body as { message: string }).message).toMatch(message);
	});

	it('a project registration is listed with its root and removed with ?project_root=', async () => {
		const project = join(state.path, 'project');
		await mkdir(project, { recursive: true });
		expect(await rest(RegisterClient, { name: 'vscode', project_root: project })).toMatchObject({
			status: 200,
			body: { name: 'vscode', groups: ['default'], project_root: project },
		});
		expect(await daemon.client.request(ListClients, {})).toEqual([
			{ name: 'vscode', groups: ['default'], project_root: project },
		]);
		const response = await fetch(`${serve.url}/api/v1beta/clients/vscode?project_root=${encodeURIComponent(project)}`, {
			method: 'DELETE',
		});
		expect(response.status).toBe(204);
		expect(await daemon.client.request(ListClients, {})).toEqual([]);
	});
});

describe('CLI', () => {
	it('registers several clients, lists them as a table and as JSON, unregisters from one group', async () => {
		await mkdir(join(home, '.cursor'));
		await hangar('group', 'create', 'cli-a');
		expect(await hangar('client', 'register', 'cursor', 'codex', '--group', 'default', '--group', 'cli-a')).toMatchObject({
			code: 0,
			stdout: 'Registered cursor, codex in groups default, cli-a.\n',
		});
		const table = await hangar('client', 'ls');
		expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+INSTALLED\s+GROUPS\s+PROJECTS\s+SKILLS$/);
		expect(table.stdout).toMatch(/^cursor\s+yes\s+cli-a,default\s+-\s+yes$/m);
		expect(table.stdout).toMatch(/^zed\s+no\s+-\s+-\s+no$/m);

		expect((await hangar('client', 'unregister', 'codex', '--group', 'cli-a')).code).toBe(0);
		const listed = JSON.parse((await hangar('client', 'ls', '--json')).stdout) as {
			name: string;
			groups: string[];
			installed: boolean;
		}[];
		expect(listed).toHaveLength(CLIENT_APPS.length);
		expect(listed.find((client) => client.name === 'codex')).toMatchObject({ groups: ['default'], installed: false });
		expect(listed.find((client) => client.name === 'cursor')).toMatchObject({ groups: ['cli-a', 'default'], installed: true });
	});

	it('an unknown client is a one-line error with exit code 2', async () => {
		expect(await hangar('client', 'register', 'notepad')).toMatchObject({
			code: 2,
			stderr: `hangar: invalid name: unsupported client type: notepad (supported: ${CLIENT_APPS.join(', ')})\n`,
		});
	});

	it.each([
		['cursor', '{\n  "mcpServers": {\n    "x": }\n}\n', ':3:10: invalid JSON'],
		['continue', 'mcpServers:\n  - name: x\n   url: y\n', ':3:'],
		['mistral-vibe', '[[mcp_servers]]\nname = "x"\nname = "y"\n', ':3:'],
	] as const)(
		'a malformed %s file: register fails naming file and line, the file and the groups stay untouched',
		async (client, text, where) => {
			const path = join(home, CLIENT_FACTS[client].file);
			await mkdir(dirname(path), { recursive: true });
			await writeFile(path, text);
			const result = await hangar('client', 'register', client);
			expect(result.code).toBe(2);
			expect(result.stderr).toContain(`hangar: ${path}${where}`);
			expect(result.stderr).toMatch(/fix the file and try again \(Hangar left it untouched\)\n$/);
			expect(result.stderr.split('\n')).toHaveLength(2);
			expect(await readFile(path, 'utf8')).toBe(text);
			expect((await daemon.client.request(GetGroup, { name: 'default' })).registered_clients).not.toContain(client);
		},
	);
});

describe('several processes at once', () => {
	it('CLI processes registering different clients and groups lose nothing', async () => {
		const names = ['para-a', 'para-b'];
		for (const name of names) await hangar('group', 'create', name);
		const clients: ClientApp[] = ['cursor', 'zed', 'codex'];
		const runs = clients.flatMap((client) => names.map((group) => hangar('client', 'register', client, '--group', group)));
		const results = await Promise.all(runs);
		expect(results.filter((result) => result.code !== 0).map((result) => result.stderr)).toEqual([]);
		for (const group of names) {
			expect((await daemon.client.request(GetGroup, { name: group })).registered_clients?.sort()).toEqual([...clients].sort());
		}
	});

	it('processes registering one client into different groups while workloads run: its file lists every group’s workloads', async () => {
		const groups = ['race-1', 'race-2', 'race-3', 'race-4'];
		await Promise.all(groups.map((name) => daemon.client.request(CreateGroup, { name })));
		const running = groups.map((group, index) => ({
			name: `w-${group}`,
			group,
			url: `http://127.0.0.1:${46000 + index}/mcp`,
			transport: 'streamable-http',
		}));
		const config = join(home, '.cursor', 'mcp.json');
		// Hold the file's lock until every process has recorded its membership, so all of them
		// are inside their sync at once: each must see the others' groups, not a stale view.
		const workers = await withLock(configLockTarget(resolvePaths(env), config), async () => {
			const started = groups.map((group) => runWorker('cursor', [group], running));
			for (const group of groups)
				await until(
					async () => (await daemon.client.request(GetGroup, { name: group })).registered_clients?.includes('cursor') ?? false,
				);
			return started;
		});
		await Promise.all(workers);
		const file = JSON.parse(await readFile(join(home, '.cursor', 'mcp.json'), 'utf8')) as {
			mcpServers: Record<string, { url: string }>;
		};
		expect(Object.keys(file.mcpServers).sort()).toEqual(running.map((workload) => workload.name).sort());
		for (const { name, url } of running) expect(file.mcpServers[name]).toEqual({ url, type: 'http' });
	});
});

async function until(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!(await condition())) {
		if (Date.now() > deadline) throw new Error('timed out waiting');
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
}

function runWorker(client: string, groups: string[], running: unknown[]): Promise<void> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [WORKER, DIST, client, groups.join(','), JSON.stringify(running)], {
			env,
			stdio: ['ignore', 'ignore', 'pipe'],
		});
		let stderr = '';
		child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker for ${groups} failed: ${stderr}`))));
	});
}
