/**
 * Workload operations over the daemon (RPC) and `hangar serve` (REST), with the real Docker
 * Engine: validation and statuses of create, every status a workload goes through (watched
 * as `workloads/didChange`), list, detail, export, update, logs, single and bulk stop,
 * restart and delete, group deletion, and the repairs reconcile makes when a daemon starts.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HangarError } from '../protocol/errors.js';
import { CreateGroup, DeleteGroup } from '../protocol/protocol.groups.js';
import {
	CreateWorkload,
	DeleteWorkload,
	DeleteWorkloads,
	ExportWorkload,
	GetWorkload,
	GetWorkloadLogs,
	GetWorkloadProxyLogs,
	GetWorkloadStatus,
	ListWorkloads,
	RestartWorkload,
	RestartWorkloads,
	StopWorkload,
	StopWorkloads,
	UpdateWorkload,
	WorkloadsDidChange,
	type WorkloadSummary,
} from '../protocol/protocol.workloads.js';
import { DockerRuntime } from '../server/runtime/docker.js';
import { isAlive } from '../server/store/lock.js';
import { resolvePaths } from '../server/store/paths.js';
import { WorkloadStore } from '../server/runspec/store.js';
import { connect, EVERYTHING, startRemoteServer, textOf, uniqueName, waitFor, type RemoteServer } from './fixtures/workloads/helpers.js';
import { hangarErrorOf } from './support/errors.js';
import { createTestHome, type TestHome } from './support/home.js';
import { spawnDaemon, startServe, type DaemonProcess, type ServeProcess } from './support/processes.js';
import { listen } from './support/registry.js';
import { callRest } from './support/rest.js';
import { toolhiveResponseSchema, toolhiveViolations } from './support/toolhive-openapi.js';

const runtime = new DockerRuntime();
let home: TestHome;
let daemon: DaemonProcess;
let serve: ServeProcess;
let remote: RemoteServer;
const changes: Array<{ name: string; status: string; status_context?: string }> = [];
/** The status last announced for each workload (`changes` is emptied by tests that count theirs). */
const announced = new Map<string, string>();

beforeAll(async () => {
	home = await createTestHome();
	[serve, remote] = await Promise.all([startServe(home.env), startRemoteServer('streamable')]);
	daemon = spawnDaemon(home.env);
	await daemon.client.initialize('workloads-test');
	daemon.client.onNotification(WorkloadsDidChange, (change) => {
		changes.push(change);
		announced.set(change.name, change.status);
	});
}, 60_000);

afterAll(async () => {
	const { workloads } = await daemon.client.request(ListWorkloads, { all: true });
	if (workloads.length) {
		await daemon.client.request(DeleteWorkloads, { names: workloads.map((workload) => workload.name) });
		await waitFor(async () => (await list({ all: true })).length === 0, 'cleanup', 120_000);
	}
	remote?.stop();
	await Promise.all([daemon?.stop(), serve?.stop()]);
	await home?.dispose();
}, 180_000);

const rpc = () => daemon.client;

async function list(params: { all?: boolean; group?: string } = {}): Promise<WorkloadSummary[]> {
	return (await rpc().request(ListWorkloads, params)).workloads;
}

async function summary(name: string): Promise<WorkloadSummary | undefined> {
	return (await list({ all: true })).find((workload) => workload.name === name);
}

async function statusOf(name: string): Promise<string | undefined> {
	return (await summary(name))?.status;
}

async function proxyPid(name: string): Promise<number> {
	const record = JSON.parse(await readFile(join(home.path, 'data', 'proxies', `${name}.json`), 'utf8')) as { pid: number };
	return record.pid;
}

function stdioWorkload(prefix: string, extra: Record<string, unknown> = {}) {
	return { name: uniqueName(prefix), image: EVERYTHING, transport: 'stdio' as const, cmd_arguments: ['stdio'], ...extra };
}

/** A daemon started and stopped: it reconciles in the background, as at the start of an editor session. */
async function reconcileWithNewDaemon(until: () => Promise<boolean>, what: string): Promise<void> {
	const second = spawnDaemon(home.env);
	try {
		await second.client.initialize('reconcile');
		await waitFor(async () => (await until()) || undefined, what, 60_000);
	} finally {
		await second.stop();
	}
}

describe('create: validation and statuses', { timeout: 60_000 }, () => {
	it.each([
		[{ image: EVERYTHING, transport: 'carrier-pigeon' }, 'transport'],
		[{ image: EVERYTHING, volumes: ['relative:/data'] }, 'volumes[0]'],
		[{ image: EVERYTHING, volumes: ['/definitely/not/here:/data'] }, 'volumes[0]'],
		[{ image: EVERYTHING, env_vars: { 'NOT-VALID': 'x' } }, 'env_vars.NOT-VALID'],
		[{ image: EVERYTHING, url: 'http://127.0.0.1:1/mcp' }, 'url'],
		[{ url: 'http://169.254.169.254/latest' }, 'url'],
		[{ url: 'file:///etc/passwd' }, 'url'],
		[{ image: 'npx://Not A Package' }, 'image'],
		[{ image: 'go://notamodule' }, 'image'],
		[{ image: EVERYTHING, runtime_config: { builder_image: 'node:24-slim' } }, 'runtime_config'],
		[{ image: 'Not An Image!' }, 'image'],
		[{ image: EVERYTHING, labels: { 'hangar.name': 'x' } }, 'labels.hangar.name'],
		[{ image: EVERYTHING, permission_profile: { privileged: true } }, 'permission_profile.privileged'],
		[{ image: EVERYTHING, host: 'example.com' }, 'host'],
		[{ image: EVERYTHING, restart_policy: 'sometimes' }, 'restart_policy'],
		[{ image: EVERYTHING, tools_override: { echo: {} } }, 'tools_override'],
	])('400 naming the field for %j', async (body, field) => {
		const response = await callRest(serve.url, CreateWorkload, { name: uniqueName('bad'), ...body });
		expect(response.status).toBe(400);
		expect((response.body as { message: string }).message).toContain(field);
	});

	it('404 for an image that cannot be had, an unknown registry server, an unknown group; nothing is left behind', async () => {
		const names = [uniqueName('noimage'), uniqueName('noserver'), uniqueName('nogroup')];
		const image = await callRest(serve.url, CreateWorkload, { name: names[0], image: `hangar-test/missing-${Date.now()}:1` });
		expect(image.status).toBe(404);
		expect(image.body).toMatchObject({ code: 'image_not_found' });
		const server = await callRest(serve.url, CreateWorkload, { name: names[1], registry: 'default', server: 'io.github.example/missing' });
		expect(server.status).toBe(404);
		const group = await callRest(serve.url, CreateWorkload, { name: names[2], image: EVERYTHING, group: 'no-such-group' });
		expect(group.status).toBe(404);
		// Other tests' workloads may be there: none of these three is.
		const ours = (name: string | undefined) => names.includes(name ?? '');
		expect((await list({ all: true })).filter((workload) => ours(workload.name))).toEqual([]);
		const containers = await runtime.list({ 'hangar.instance': new WorkloadStore(resolvePaths(home.env)).instance });
		expect(containers.filter((container) => ours(container.labels['hangar.name']))).toEqual([]);
	});

	it('400 for an explicit proxy port that is busy', async () => {
		const blocker = createServer();
		const port = await listen(blocker);
		try {
			const response = await callRest(serve.url, CreateWorkload, { name: uniqueName('busy'), url: remote.url, proxy_port: port });
			expect(response.status).toBe(400);
			expect(response.body).toMatchObject({ message: expect.stringContaining('proxy_port') });
		} finally {
			blocker.close();
		}
	});

	it('409 for a taken name; of two concurrent creates of one name exactly one wins', async () => {
		const name = uniqueName('twice');
		const [first, second] = await Promise.all([
			callRest(serve.url, CreateWorkload, { name, url: remote.url }),
			rpc().request(CreateWorkload, { name, url: remote.url }).then(
				(result) => ({ status: 201, body: result }),
				(error: HangarError) => ({ status: error.status, body: { message: error.message } }),
			),
		]);
		expect([first.status, second.status].sort()).toEqual([201, 409]);
		expect([first, second].find((outcome) => outcome.status === 409)?.body).toMatchObject({ message: `workload with name ${name} already exists` });
		const again = await callRest(serve.url, CreateWorkload, { name, url: remote.url });
		expect(again.status).toBe(409);
		expect((await list({ all: true })).filter((workload) => workload.name === name)).toHaveLength(1);
	});
});

describe('a workload\'s life', { timeout: 120_000 }, () => {
	const params = stdioWorkload('life', { env_vars: { GREETING: 'hello' }, labels: { team: 'tools' } });
	const { name } = params;
	let created: { name: string; port: number };
	let createdStatuses: string[];
	let port: number;

	beforeAll(async () => {
		created = await rpc().request(CreateWorkload, params);
		port = created.port;
		createdStatuses = changes.filter((change) => change.name === name).map((change) => change.status);
	}, 120_000);

	// Each test starts from the workload running as created, whatever the test before it did to it
	// (stopped, updated, broken or deleted it), and its last status announced.
	beforeEach(async () => {
		const { current } = await waitFor(async () => {
			const current = await summary(name);
			return !['starting', 'stopping', 'removing'].includes(current?.status ?? '') && { current };
		}, 'the workload to settle');
		if (!current) await rpc().request(CreateWorkload, { ...params, proxy_port: port });
		else if ((await rpc().request(GetWorkload, { name })).env_vars?.GREETING !== 'hello') await rpc().request(UpdateWorkload, params);
		else if (current.status !== 'running') await rpc().request(RestartWorkload, { name });
		await waitFor(async () => (await statusOf(name)) === 'running' && announced.get(name) === 'running', 'running as created, and announced');
	}, 120_000);

	/** Stops the workload and waits until it is stopped, and announced so (the status is written before it is announced). */
	async function stop(): Promise<void> {
		expect(await rpc().request(StopWorkload, { name })).toBeNull();
		await waitFor(async () => (await statusOf(name)) === 'stopped' && announced.get(name) === 'stopped', 'stopped, and announced');
	}

	it('create: 201 with the port, statuses starting then running', async () => {
		expect(created).toEqual({ name, port: expect.any(Number) });
		expect(port).toBeGreaterThanOrEqual(10_000);
		expect(createdStatuses).toEqual(['starting', 'running']);
		const listed = await summary(name);
		expect(listed).toMatchObject({
			name,
			package: EVERYTHING,
			url: `http://127.0.0.1:${port}/mcp`,
			port,
			transport_type: 'stdio',
			proxy_mode: 'streamable-http',
			status: 'running',
			group: 'default',
			labels: { team: 'tools' },
			remote: false,
		});
		expect((await runtime.list({ 'hangar.name': name }))[0]?.labels).toMatchObject({ 'hangar.group': 'default', 'hangar.transport': 'stdio', 'hangar.port': String(port) });
	});

	it('detail, export (ToolHive\'s RunConfig shape), status, logs', async () => {
		expect(await rpc().request(GetWorkload, { name })).toMatchObject({ name, image: EVERYTHING, transport: 'stdio', proxy_port: port, env_vars: { GREETING: 'hello' }, cmd_arguments: ['stdio'], network_isolation: true });
		const detail = await callRest(serve.url, GetWorkload, { name });
		expect(toolhiveViolations(toolhiveResponseSchema('GET', '/api/v1beta/workloads/{name}', 200), detail.body)).toEqual([]);
		const status = await callRest(serve.url, GetWorkloadStatus, { name });
		expect(toolhiveViolations(toolhiveResponseSchema('GET', '/api/v1beta/workloads/{name}/status', 200), status.body)).toEqual([]);
		const exported = await callRest(serve.url, ExportWorkload, { name });
		expect(exported.status).toBe(200);
		expect(exported.body).toMatchObject({ schema_version: 'v0.1.0', name, image: EVERYTHING, port, transport: 'stdio', cmd_args: ['stdio'], env_vars: { GREETING: 'hello' }, group: 'default' });
		expect(toolhiveViolations(toolhiveResponseSchema('GET', '/api/v1beta/workloads/{name}/export', 200), exported.body)).toEqual([]);
		expect(await rpc().request(GetWorkloadStatus, { name })).toEqual({ status: 'running' });
		const logs = await waitFor(async () => {
			const answer = await callRest(serve.url, GetWorkloadLogs, { name });
			return String(answer.body).includes('Starting default (STDIO) server') && answer;
		}, "the server's start-up line in its logs");
		expect(logs.headers.get('content-type')).toBe('text/plain');
		expect(await rpc().request(GetWorkloadProxyLogs, { name })).toContain(`listening on http://127.0.0.1:${port}`);
	});

	it('stop: 202 at once, then stopping and stopped; listed only with all', async () => {
		changes.length = 0;
		await stop();
		expect(changes.filter((change) => change.name === name).map((change) => change.status)).toEqual(['stopping', 'stopped']);
		expect((await list()).map((workload) => workload.name)).not.toContain(name);
		expect((await runtime.list({ 'hangar.name': name }))[0]?.state).toBe('exited');
	});

	it('restart: back on the same port', async () => {
		await stop();
		changes.length = 0;
		expect(await rpc().request(RestartWorkload, { name })).toBeNull();
		await waitFor(async () => (await statusOf(name)) === 'running' && changes.some((change) => change.name === name && change.status === 'running'), 'running again, and announced');
		expect((await summary(name))?.port).toBe(port);
		expect(changes.filter((change) => change.name === name).map((change) => change.status)).toEqual(['starting', 'running']);
		const client = await connect(`http://127.0.0.1:${port}/mcp`, 'streamable-http');
		try {
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'back' } }))).toBe('Echo: back');
		} finally {
			await client.close();
		}
	});

	it('update: 200 with the same port; the server is recreated with the new configuration', async () => {
		const updated = await callRest(serve.url, UpdateWorkload, { ...params, env_vars: { GREETING: 'bonjour' } });
		expect(updated).toMatchObject({ status: 200, body: { name, port } });
		const client = await connect(`http://127.0.0.1:${port}/mcp`, 'streamable-http');
		try {
			expect(textOf(await client.callTool({ name: 'get-env', arguments: {} }))).toContain('"GREETING": "bonjour"');
		} finally {
			await client.close();
		}
		expect((await callRest(serve.url, UpdateWorkload, { name: uniqueName('ghost'), image: EVERYTHING })).status).toBe(404);
	});

	it('unhealthy when its proxy dies; a starting daemon restarts the proxy on the same port', async () => {
		const pid = await proxyPid(name);
		process.kill(pid, 'SIGKILL');
		await waitFor(async () => (await rpc().request(GetWorkloadStatus, { name })).status === 'unhealthy', 'unhealthy');
		expect(await summary(name)).toMatchObject({ status: 'unhealthy', status_context: 'the proxy is not running' });
		await reconcileWithNewDaemon(async () => (await statusOf(name)) === 'running', 'proxy restarted');
		expect(await proxyPid(name)).not.toBe(pid);
		expect((await summary(name))?.port).toBe(port);
		const client = await connect(`http://127.0.0.1:${port}/mcp`, 'streamable-http');
		try {
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'repaired' } }))).toBe('Echo: repaired');
		} finally {
			await client.close();
		}
	});

	it('a change made by another process is reported too', async () => {
		changes.length = 0;
		const stopped = await callRest(serve.url, StopWorkload, { name });
		expect(stopped.status).toBe(202);
		expect(stopped.body).toBeUndefined();
		await waitFor(async () => changes.some((change) => change.name === name && change.status === 'stopped'), 'didChange stopped');
		expect((await callRest(serve.url, RestartWorkload, { name })).status).toBe(202);
		await waitFor(async () => changes.some((change) => change.name === name && change.status === 'running'), 'didChange running');
	});

	it('delete: 202 at once, removing, then gone with its container', async () => {
		changes.length = 0;
		expect(await rpc().request(DeleteWorkload, { name })).toBeNull();
		await waitFor(async () => (await summary(name)) === undefined, 'deleted');
		// The notification travels apart from the list's answer: it may come just after.
		await waitFor(async () => changes.some((change) => change.name === name && change.status_context === 'removed'), 'didChange removed');
		expect(changes.filter((change) => change.name === name).map((change) => `${change.status}${change.status_context === 'removed' ? ' (removed)' : ''}`)).toEqual([
			'removing',
			'removing (removed)',
		]);
		expect(await runtime.list({ 'hangar.name': name })).toEqual([]);
		expect((await callRest(serve.url, GetWorkload, { name })).status).toBe(404);
		expect((await callRest(serve.url, DeleteWorkload, { name })).status).toBe(404);
		expect((await callRest(serve.url, GetWorkloadProxyLogs, { name })).status).toBe(404);
	});
});

describe('reconcile after a crash or a reboot', { timeout: 180_000 }, () => {
	it('marks a workload whose container vanished as error', async () => {
		const params = stdioWorkload('vanish');
		await rpc().request(CreateWorkload, params);
		const [container] = await runtime.list({ 'hangar.name': params.name });
		await runtime.remove(container!.id);
		await waitFor(async () => (await statusOf(params.name)) === 'error', 'error');
		expect((await summary(params.name))?.status_context).toMatch(/container is gone/);
		const proxyGone = async () => readFile(join(home.path, 'data', 'proxies', `${params.name}.json`)).then(() => false, () => true);
		expect(await proxyGone()).toBe(false); // the proxy keeps trying to reattach
		await reconcileWithNewDaemon(proxyGone, 'the orphaned proxy ended');
		expect(await rpc().request(GetWorkloadStatus, { name: params.name })).toEqual({ status: 'error' });
	});

	it('brings back workloads whose restart policy says so, and marks the others stopped', async () => {
		const kept = stdioWorkload('kept');
		const dropped = stdioWorkload('dropped', { restart_policy: 'no' });
		const remoteKept = { name: uniqueName('remote-kept'), url: remote.url };
		const ports = await Promise.all([kept, dropped, remoteKept].map(async (params) => (await rpc().request(CreateWorkload, params as never)).port));
		// A reboot: every process gone, containers stopped.
		for (const params of [kept, dropped, remoteKept]) process.kill(await proxyPid(params.name), 'SIGKILL');
		for (const params of [kept, dropped]) await runtime.stop((await runtime.list({ 'hangar.name': params.name }))[0]!.id, 5);
		await reconcileWithNewDaemon(
			async () => (await statusOf(kept.name)) === 'running' && (await statusOf(dropped.name)) === 'stopped' && (await statusOf(remoteKept.name)) === 'running',
			'reconciled',
		);
		expect((await summary(kept.name))?.port).toBe(ports[0]);
		expect((await summary(remoteKept.name))?.port).toBe(ports[2]);
		expect((await summary(dropped.name))?.status_context).toMatch(/exited/);
		const client = await connect(`http://127.0.0.1:${ports[0]}/mcp`, 'streamable-http');
		try {
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'after reboot' } }))).toBe('Echo: after reboot');
		} finally {
			await client.close();
		}
	});
});

describe('lists, groups and bulk operations', { timeout: 240_000 }, () => {
	it('lists 50 workloads, filters by group, and deletes them in bulk: 202 at once, then gone', async () => {
		await rpc().request(CreateGroup, { name: 'fifty' });
		const names = Array.from({ length: 50 }, (_, index) => `fifty-${String(index).padStart(2, '0')}-${Date.now() % 100_000}`);
		const queue = [...names];
		await Promise.all(
			Array.from({ length: 5 }, async () => {
				for (let name = queue.shift(); name; name = queue.shift()) await rpc().request(CreateWorkload, { name, url: remote.url, group: 'fifty' });
			}),
		);
		const grouped = await list({ group: 'fifty' });
		expect(grouped.map((workload) => workload.name).sort()).toEqual(names);
		expect(grouped.every((workload) => workload.status === 'running' && workload.remote)).toBe(true);
		expect(new Set(grouped.map((workload) => workload.port)).size).toBe(50);
		const rest = await callRest(serve.url, ListWorkloads, { all: true, group: 'fifty' });
		expect(toolhiveViolations(toolhiveResponseSchema('GET', '/api/v1beta/workloads', 200), rest.body)).toEqual([]);

		const deleted = await callRest(serve.url, DeleteWorkloads, { group: 'fifty' });
		expect(deleted.status).toBe(202);
		// Whatever is still listed is on its way out (a deletion finishing during the list leaves it out:
		// test/workloads-observer.test.ts).
		const right = await list({ all: true, group: 'fifty' });
		expect(right.filter((workload) => workload.status !== 'removing').map(({ name, status, status_context }) => ({ name, status, status_context }))).toEqual([]);
		await waitFor(async () => (await list({ all: true, group: 'fifty' })).length === 0, 'bulk delete', 120_000);
	});

	it('bulk requests name exactly one of names and group, and the group must exist', async () => {
		for (const body of [{}, { names: ['a'], group: 'default' }, { group: 'no-such-group' }]) {
			const response = await callRest(serve.url, StopWorkloads, body);
			expect(response.status).toBe(400);
		}
		expect((await callRest(serve.url, ListWorkloads, { group: 'no-such-group' })).status).toBe(404);
	});

	it('bulk stop and restart', async () => {
		await rpc().request(CreateGroup, { name: 'pair' });
		const names = [uniqueName('pair'), uniqueName('pair')];
		for (const name of names) await rpc().request(CreateWorkload, { name, url: remote.url, group: 'pair' });
		expect((await callRest(serve.url, StopWorkloads, { group: 'pair' })).status).toBe(202);
		await waitFor(async () => (await list({ all: true, group: 'pair' })).every((workload) => workload.status === 'stopped'), 'stopped');
		expect(await list({ group: 'pair' })).toEqual([]);
		expect((await callRest(serve.url, RestartWorkloads, { names })).status).toBe(202);
		await waitFor(async () => (await list({ group: 'pair' })).filter((workload) => workload.status === 'running').length === 2, 'running');
	});

	it('deleting a group moves its workloads to default, or deletes them with-workloads', async () => {
		await rpc().request(CreateGroup, { name: 'moving' });
		await rpc().request(CreateGroup, { name: 'doomed' });
		const moved = uniqueName('moved');
		const doomed = uniqueName('doomed');
		await rpc().request(CreateWorkload, { name: moved, url: remote.url, group: 'moving' });
		await rpc().request(CreateWorkload, { name: doomed, url: remote.url, group: 'doomed' });
		await rpc().request(DeleteGroup, { name: 'moving' });
		expect((await summary(moved))?.group).toBe('default');
		await rpc().request(DeleteGroup, { name: 'doomed', 'with-workloads': true });
		expect(await summary(doomed)).toBeUndefined();
		const error = await hangarErrorOf(rpc().request(DeleteGroup, { name: 'doomed' }));
		expect(error.status).toBe(404);
	});
});

describe('a daemon that ends right after a stop or a delete', { timeout: 60_000 }, () => {
	/** A second daemon, as an editor window's, with a remote workload of its own running. */
	async function daemonWithWorkload(): Promise<{ ending: DaemonProcess; name: string; pid: number }> {
		const ending = spawnDaemon(home.env);
		await ending.client.initialize('ending');
		const name = uniqueName('ending');
		await ending.client.request(CreateWorkload, { name, url: remote.url });
		await waitFor(async () => (await statusOf(name)) === 'running', `${name} running`);
		return { ending, name, pid: await proxyPid(name) };
	}

	it('shutdown and exit just after a delete: the delete is done first, its proxy stopped', async () => {
		const { ending, name, pid } = await daemonWithWorkload();
		expect(await ending.client.request(DeleteWorkload, { name })).toBeNull();
		await ending.client.shutdown();
		expect(await ending.exited()).toBe(0);
		expect(isAlive(pid)).toBe(false);
		expect(await summary(name)).toBeUndefined();
	});

	it('SIGTERM just after a stop: the stop is done first, then it exits with 143', async () => {
		const { ending, name, pid } = await daemonWithWorkload();
		expect(await ending.client.request(StopWorkload, { name })).toBeNull();
		ending.child.kill('SIGTERM');
		expect(await ending.exited()).toBe(143);
		expect(isAlive(pid)).toBe(false);
		expect(await statusOf(name)).toBe('stopped');
		await ending.stop();
	});
});
