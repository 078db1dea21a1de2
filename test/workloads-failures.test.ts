/**
 * Workloads that go wrong: an update whose new configuration cannot run (the old workload
 * keeps running), a server that exits before it answers (reported at once, with why), a
 * remote URL that cannot be reached, and a create cancelled at every step (nothing left
 * behind). Real Docker Engine, real proxy processes, a real daemon.
 */
import { createServer, type Server } from 'node:http';
import { access } from 'node:fs/promises';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HangarError } from '../protocol/errors.js';
import { contextFor, type Progress } from '../server/context.js';
import { Notifier } from '../server/environment.js';
import { GroupStore } from '../server/groups/store.js';
import { createLogger } from '../server/log.js';
import { DockerRuntime } from '../server/runtime/docker.js';
import { resolvePaths } from '../server/store/paths.js';
import { isPortFree } from '../server/workloads/portAllocator.js';
import { WorkloadService } from '../server/workloads/service.js';
import { connect, EVERYTHING, startRemoteServer, textOf, uniqueName, waitFor } from './fixtures/workloads/helpers.js';
import { hangarErrorOf } from './support/errors.js';
import { createTestHome, type TestHome } from './support/home.js';
import { HANGAR_BIN, runHangar } from './support/processes.js';
import { spawnRawDaemon } from './support/raw-daemon.js';

let home: TestHome;
let service: WorkloadService;
const runtime = new DockerRuntime();
const hangar = (...args: string[]) => runHangar(args, home.env);

beforeAll(async () => {
	home = await createTestHome();
	const paths = resolvePaths(home.env);
	const groups = new GroupStore(paths);
	service = new WorkloadService({
		environment: { paths, log: createLogger('test', 'warn'), notifier: new Notifier() },
		runtime,
		catalog: { findServer: async () => undefined },
		secrets: {
			resolve: async (name) => {
				if (name === 'token') return 'value-1';
				throw HangarError.notFound(`secret ${name} not found`);
			},
		},
		clients: { syncWorkloads: async () => undefined },
		groups: { exists: async (name) => (await groups.find(name)) !== undefined },
		proxyEntry: HANGAR_BIN,
		env: home.env,
	});
});

afterAll(async () => {
	const { workloads } = await service.list({ all: true });
	await service.deleteMany({ names: workloads.map((workload) => workload.name) });
	await service.idle();
	await home.dispose();
}, 120_000);

const quiet = () => contextFor(new AbortController().signal);

async function echo(port: number, message: string): Promise<string> {
	const client = await connect(`http://127.0.0.1:${port}/mcp`, 'streamable-http');
	try {
		return textOf(await client.callTool({ name: 'echo', arguments: { message } }));
	} finally {
		await client.close();
	}
}

async function statusOf(name: string) {
	return (await service.list({ all: true })).workloads.find((workload) => workload.name === name);
}

/** Asserts that no trace of workload `name` is left: record, status, container, network, port. */
async function expectNothingLeft(name: string, port?: number): Promise<void> {
	expect(await statusOf(name)).toBeUndefined();
	await expect(access(join(home.path, 'state', 'runconfigs', `${name}.json`))).rejects.toThrow();
	expect(await runtime.list({ 'hangar.name': name })).toEqual([]);
	expect(await runtime.networkGateway(`hangar-${name}-${service.store.instance}`)).toBeUndefined();
	if (port) expect(await isPortFree(port, '127.0.0.1')).toBe(true);
}

describe('an update is all or nothing', { timeout: 180_000 }, () => {
	it('a secret the provider does not have: 404, and the workload keeps running with its old configuration', async () => {
		const name = uniqueName('edit-secret');
		const { port } = await service.create({ name, image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], env_vars: { A: '1' } }, quiet());
		const error = await hangarErrorOf(
			service.update({ name, image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], env_vars: { A: '2' }, secrets: [{ name: 'nosuch', target: 'TOKEN' }] }, quiet()),
		);
		expect(error).toMatchObject({ status: 404, message: 'secret nosuch not found' });
		expect(await statusOf(name)).toMatchObject({ status: 'running', port });
		expect(await service.get(name)).toMatchObject({ env_vars: { A: '1' }, secrets: [] });
		expect(await echo(port, 'still here')).toBe('Echo: still here');
		// And a restart brings back the configuration that was kept.
		await service.restart(name);
		await service.idle();
		expect(await statusOf(name)).toMatchObject({ status: 'running' });
	});

	it('a new configuration whose server exits: the error says why, and the previous one runs again', async () => {
		const name = uniqueName('edit-exit');
		const { port } = await service.create({ name, image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'] }, quiet());
		const error = await hangarErrorOf(service.update({ name, image: EVERYTHING, transport: 'stdio', cmd_arguments: ['bad-args'] }, quiet()));
		expect(error).toMatchObject({ status: 502, code: 'server_failed', message: expect.stringContaining('exited') });
		expect(error.message).toContain('previous configuration');
		expect(await service.get(name)).toMatchObject({ cmd_arguments: ['stdio'] });
		expect(await statusOf(name)).toMatchObject({ status: 'running', port });
		expect(await echo(port, 'back')).toBe('Echo: back');
	});

	it('hangar edit with a bad secret fails with exit 1 and leaves the workload running', async () => {
		const name = uniqueName('edit-cli');
		expect((await hangar('run', EVERYTHING, '--name', name, '--transport', 'stdio', '--', 'stdio')).code).toBe(0);
		const edit = await hangar('edit', name, '--secret', 'nosuch,target=TOKEN');
		// No secrets provider is set up here: resolving the secret fails all the same, before anything is touched.
		expect(edit).toMatchObject({ code: 1, stderr: expect.stringContaining('secret') });
		const listed = JSON.parse((await hangar('ls', '--json')).stdout) as Array<{ name: string; status: string }>;
		expect(listed.find((workload) => workload.name === name)).toMatchObject({ status: 'running' });
		expect(JSON.parse((await hangar('export', name)).stdout)).not.toHaveProperty('secrets');
		expect((await hangar('restart', name)).code).toBe(0);
	});
});

describe('a server that never comes up', { timeout: 180_000 }, () => {
	it('hangar run exits 1 at once with the server\'s last lines and the logs command; the status says why', async () => {
		const name = uniqueName('bad-args');
		const run = await hangar('run', EVERYTHING, '--name', name, '--transport', 'stdio', '--', 'bad-args');
		expect(run.code).toBe(1);
		expect(run.stderr).toContain('Unknown transport: bad-args');
		expect(run.stderr).toContain(`hangar logs ${name}`);
		const listed = JSON.parse((await hangar('ls', '--all', '--json')).stdout) as Array<{ name: string; status: string; status_context: string }>;
		expect(listed.find((workload) => workload.name === name)).toMatchObject({ status: 'error', status_context: expect.stringContaining('the server exited') });
		// The container stays (stopped) so its output can be read.
		expect((await hangar('logs', name)).stdout).toContain('Unknown transport: bad-args');
	});

	it('a stdio image started as an HTTP server is diagnosed as such', async () => {
		const name = uniqueName('stdio-as-http');
		await service.create({ name, image: EVERYTHING, transport: 'streamable-http' }, quiet());
		const summary = await statusOf(name);
		expect(summary).toMatchObject({ status: 'error', status_context: expect.stringContaining('--transport stdio') });
		expect(summary!.status_context).toContain(`hangar logs ${name}`);
	});
});

describe('a remote server that cannot be reached', { timeout: 60_000 }, () => {
	it('is reported in error with the reason, not running; once reachable a restart brings it up', async () => {
		const name = uniqueName('nxdomain');
		await service.create({ name, url: 'http://nosuch-host.invalid/mcp' }, quiet());
		expect(await statusOf(name)).toMatchObject({ status: 'error', status_context: expect.stringContaining('nosuch-host.invalid does not resolve') });

		const refused = uniqueName('refused');
		const closed = createServer();
		await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
		const port = (closed.address() as AddressInfo).port;
		await new Promise((resolve) => closed.close(resolve));
		await service.create({ name: refused, url: `http://127.0.0.1:${port}/mcp` }, quiet());
		expect(await statusOf(refused)).toMatchObject({ status: 'error', status_context: expect.stringContaining('refused') });

		const up = createServer((_request, response) => response.writeHead(404).end());
		await new Promise<void>((resolve) => up.listen(port, '127.0.0.1', resolve));
		try {
			await service.restart(refused);
			await service.idle();
			expect(await statusOf(refused)).toMatchObject({ status: 'running' });
		} finally {
			up.close();
		}
	});

	it('any HTTP answer counts as up', async () => {
		const remote = await startRemoteServer('streamable');
		try {
			const name = uniqueName('reachable');
			await service.create({ name, url: remote.url.replace(/\/api\/mcp$/, '/not-found') }, quiet());
			expect(await statusOf(name)).toMatchObject({ status: 'running' });
		} finally {
			remote.stop();
		}
	});
});

/** A registry that answers the version check and never anything else: a pull that hangs. */
async function hangingRegistry(): Promise<{ image: string; pulls: () => number; close(): void }> {
	let pulls = 0;
	const sockets = new Set<Socket>();
	const server: Server = createServer((request, response) => {
		if (request.url === '/v2/') {
			response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
			return;
		}
		pulls++; // and no answer
	});
	server.on('connection', (socket) => sockets.add(socket));
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		image: `127.0.0.1:${port}/hangs/server:1`,
		pulls: () => pulls,
		close: () => {
			for (const socket of sockets) socket.destroy();
			server.close();
		},
	};
}

/** A context whose progress reports are collected, and a way to cancel at the first matching one. */
function cancellableAt(step: RegExp): { context: ReturnType<typeof contextFor>; reached: () => boolean } {
	const controller = new AbortController();
	let reached = false;
	const progress: Progress = {
		begin: () => undefined,
		report: (message) => {
			if (!reached && message && step.test(message)) {
				reached = true;
				setTimeout(() => controller.abort(), 200);
			}
		},
		end: () => undefined,
	};
	return { context: contextFor(controller.signal, progress), reached: () => reached };
}

describe('cancelling a create', { timeout: 120_000 }, () => {
	it('during the image pull: 499 at once, nothing left behind', async () => {
		const registry = await hangingRegistry();
		try {
			const name = uniqueName('cancel-pull');
			const { context, reached } = cancellableAt(/pulling/);
			const error = await hangarErrorOf(service.create({ name, image: registry.image, transport: 'stdio' }, context));
			expect(reached()).toBe(true);
			expect(error).toMatchObject({ status: 499 });
			await expectNothingLeft(name);
		} finally {
			registry.close();
		}
	});

	it('while the proxy waits for the server: 499, nothing left behind (container, network, record, port)', async () => {
		const name = uniqueName('cancel-proxy');
		// The server speaks on another port than the one it is reached on: it never answers.
		const { context, reached } = cancellableAt(/starting the proxy/);
		const pending = service.create(
			{ name, image: EVERYTHING, transport: 'streamable-http', target_port: 9, cmd_arguments: ['streamableHttp'], permission_profile: { network: { outbound: { allow_host: ['example.com'] } } } },
			context,
		);
		const port = await waitFor(async () => (await service.store.configs.get(name))?.port || undefined, 'the port to be chosen');
		const error = await hangarErrorOf(pending);
		expect(reached()).toBe(true);
		expect(error).toMatchObject({ status: 499 });
		await expectNothingLeft(name, port);
	});

	it('over the daemon, with window/workDoneProgress/cancel and $/cancelRequest', async () => {
		const registry = await hangingRegistry();
		const daemon = spawnRawDaemon(home.env);
		try {
			daemon.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: null, capabilities: {} } });
			await daemon.next((message) => message.id === 1);
			daemon.send({ jsonrpc: '2.0', method: 'initialized', params: {} });
			const name = uniqueName('cancel-daemon');
			daemon.send({ jsonrpc: '2.0', id: 2, method: 'workloads/create', params: { name, image: registry.image, transport: 'stdio', workDoneToken: 'create-1' } });
			await waitFor(async () => registry.pulls() > 0, 'the pull to reach the registry', 60_000);
			daemon.send({ jsonrpc: '2.0', method: 'window/workDoneProgress/cancel', params: { token: 'create-1' } });
			const answer = await daemon.next((message) => message.id === 2, 30_000);
			expect(answer).toMatchObject({ error: { code: -32800 } });
			await expectNothingLeft(name);

			// $/cancelRequest while the proxy waits for a server that never answers.
			const waiting = uniqueName('cancel-request');
			daemon.send({
				jsonrpc: '2.0',
				id: 3,
				method: 'workloads/create',
				params: { name: waiting, image: EVERYTHING, transport: 'streamable-http', target_port: 9, cmd_arguments: ['streamableHttp'], workDoneToken: 'create-2' },
			});
			await daemon.next((message) => message.method === '$/progress' && JSON.stringify(message.params).includes('starting the proxy'), 60_000);
			const port = (await service.store.configs.get(waiting))?.port;
			daemon.send({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 3 } });
			expect(await daemon.next((message) => message.id === 3, 30_000)).toMatchObject({ error: { code: -32800 } });
			await expectNothingLeft(waiting, port);
		} finally {
			daemon.child.kill();
			registry.close();
		}
	});
});
