/**
 * The Docker runtime against the real Docker Engine (started by scripts/test-services.sh),
 * with the locally built `hangar-test/everything` image, and `/health` reporting the engine.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type RequestListener } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Health } from '../protocol/protocol.system.js';
import { CreateWorkload, ListWorkloads } from '../protocol/protocol.workloads.js';
import { silentProgress } from '../server/context.js';
import { DockerRuntime } from '../server/runtime/docker.js';
import { readLine, sendInitialize } from './support/attachment.js';
import { hangarErrorOf } from './support/errors.js';
import { createTestHome, type TestHome } from './support/home.js';
import { spawnDaemon, startServe } from './support/processes.js';
import { callRest } from './support/rest.js';

const run = promisify(execFile);
const IMAGE = 'hangar-test/everything:1';
const runtime = new DockerRuntime();
const suffix = randomBytes(4).toString('hex');
const label = { 'hangar.test': suffix };
const created: string[] = [];

afterAll(async () => {
	await Promise.all(created.map((id) => runtime.remove(id)));
});

/** An engine that is not Docker's or Podman's (a fault neither produces), on a unix socket: the paths it was asked for. */
async function startEngine(answer: RequestListener): Promise<{ socket: string; paths: string[]; close(): Promise<void> }> {
	const dir = await mkdtemp(join(tmpdir(), 'hangar-engine-'));
	const socket = join(dir, 'engine.sock');
	const paths: string[] = [];
	const server = createServer((request, response) => {
		paths.push(request.url!);
		answer(request, response);
	});
	await new Promise<void>((resolve) => server.listen(socket, resolve));
	return { socket, paths, close: async () => (await new Promise<void>((resolve) => server.close(() => resolve())), await rm(dir, { recursive: true, force: true })) };
}

async function createStdioServer(name: string): Promise<string> {
	const id = await runtime.create({
		name: `hangar-runtime-test-${name}-${suffix}`,
		image: IMAGE,
		args: ['stdio'],
		env: { GREETING: 'hello' },
		labels: label,
		interactive: true,
		mounts: [],
		network: 'none',
		restartPolicy: 'no',
	});
	created.push(id);
	return id;
}

describe('DockerRuntime', () => {
	it('reports the engine, with the version its /version answer gives', async () => {
		const info = await runtime.info();
		const { stdout } = await run('docker', ['version', '--format', '{{.Server.Version}}']);
		expect(info).toMatchObject({ name: 'docker', version: stdout.trim() });
	});

	it('asks /version of an engine whose /_ping does not name it', async () => {
		const engine = await startEngine((request, response) => {
			if (request.url === '/_ping') return void response.end('OK');
			if (request.url === '/version') return void response.setHeader('Content-Type', 'application/json').end(JSON.stringify({ Version: '27.1.0', Components: [] }));
			response.writeHead(404).end();
		});
		try {
			expect(await new DockerRuntime({ DOCKER_HOST: `unix://${engine.socket}` }).info()).toMatchObject({ name: 'docker', version: '27.1.0' });
			expect(engine.paths).toEqual(['/_ping', '/version']);
		} finally {
			await engine.close();
		}
	});

	it('creates, starts, attaches, lists, inspects, reads logs, stops and removes a container', async () => {
		const id = await createStdioServer('lifecycle');
		expect(await runtime.inspect(id)).toMatchObject({ id, state: 'created', labels: label });
		await runtime.start(id);
		await runtime.start(id); // starting a running container is fine
		const attachment = await runtime.attach(id);
		sendInitialize(attachment, 7);
		const answer = await readLine(attachment);
		expect(answer).toMatchObject({ id: 7, result: { serverInfo: { name: 'mcp-servers/everything' } } });
		// The container's command once more, as a second server process with its own stdio.
		const again = await runtime.execCommand(id);
		sendInitialize(again, 8);
		expect(await readLine(again)).toMatchObject({ id: 8, result: { serverInfo: { name: 'mcp-servers/everything' } } });
		again.close();

		const listed = await runtime.list(label);
		expect(listed.map((container) => container.id)).toContain(id);
		expect(listed.find((container) => container.id === id)?.state).toBe('running');
		// The server's stderr and its JSON-RPC output both reach the container log; stderrOnly keeps the first.
		expect(await runtime.logs(id, 100)).toContain('"id":7');
		const stderr = await runtime.logs(id, 100, { stderrOnly: true });
		expect(stderr).toContain('Starting default (STDIO) server');
		expect(stderr).not.toContain('"id":7');

		attachment.close();
		await attachment.closed;
		expect((await runtime.inspect(id))?.state).toBe('running'); // closing the attach does not stop the server

		await runtime.stop(id, 5);
		expect((await runtime.inspect(id))?.state).toBe('exited');
		await runtime.stop(id, 5); // stopping a stopped container is fine
		await runtime.remove(id);
		expect(await runtime.inspect(id)).toBeUndefined();
		await runtime.remove(id); // so is removing a missing one
	});

	it('publishes an HTTP server on loopback only', async () => {
		const id = await runtime.create({
			name: `hangar-runtime-test-http-${suffix}`,
			image: IMAGE,
			args: ['streamableHttp'],
			env: {},
			labels: label,
			interactive: false,
			publishPort: 3001,
			mounts: [],
			network: 'bridge',
			restartPolicy: 'no',
		});
		created.push(id);
		await runtime.start(id);
		const endpoint = await runtime.endpoint(id, 3001);
		expect(endpoint.host).toBe('127.0.0.1');
		expect(endpoint.port).toBeGreaterThan(0);
	});

	it('knows which images exist, and a pull of an unknown image is a 404', async () => {
		expect(await runtime.imageExists(IMAGE)).toBe(true);
		expect(await runtime.imageExists(`hangar-test/missing-${suffix}:1`)).toBe(false);
		const error = await hangarErrorOf(runtime.pullImage(`hangar-test/missing-${suffix}:1`, silentProgress, new AbortController().signal));
		expect(error).toMatchObject({ status: 404, code: 'image_not_found' });
	});

	it('answers 503 when no engine listens at DOCKER_HOST', async () => {
		const absent = new DockerRuntime({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' });
		const error = await hangarErrorOf(absent.info());
		expect(error).toMatchObject({ status: 503, code: 'runtime_unavailable' });
		expect(error.message).toContain('DOCKER_HOST');
	});
});

describe('GET /health and system/health', () => {
	let home: TestHome;
	beforeAll(async () => (home = await createTestHome()));
	afterAll(() => home.dispose());

	it('is 204 while the engine answers; the RPC report names it', async () => {
		const serve = await startServe(home.env);
		try {
			const response = await fetch(`${serve.url}/health`);
			expect(response.status).toBe(204);
		} finally {
			await serve.stop();
		}
		const daemon = spawnDaemon(home.env);
		try {
			await daemon.client.initialize('health-test');
			expect(await daemon.client.request(Health, {})).toMatchObject({ status: 'ok', runtime: { name: 'docker' } });
		} finally {
			await daemon.stop();
		}
	});

	it('is 503 when no engine answers; so is a create, which leaves nothing behind', async () => {
		const serve = await startServe({ ...home.env, DOCKER_HOST: 'unix:///nonexistent/docker.sock' });
		try {
			const response = await fetch(`${serve.url}/health`);
			expect(response.status).toBe(503);
			expect(await response.json()).toMatchObject({ code: 'runtime_unavailable' });
			const created = await callRest(serve.url, CreateWorkload, { name: 'no-engine', image: 'hangar-test/everything:1', transport: 'stdio' });
			expect(created).toMatchObject({ status: 503, body: { code: 'runtime_unavailable' } });
			expect((await callRest(serve.url, ListWorkloads, { all: true })).body).toEqual({ workloads: [] });
		} finally {
			await serve.stop();
		}
	});
});
