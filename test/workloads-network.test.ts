/**
 * Permission profiles on the network, with the real engine: `none` cuts a container off;
 * outbound allow-lists put it on an isolated network whose only way out is the workload's
 * egress proxy, which lets through the listed hosts and ports and nothing else. The MCP side
 * keeps working for stdio and HTTP servers alike.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateWorkload, DeleteWorkloads, ListWorkloads } from '../protocol/protocol.workloads.js';
import { connect, EVERYTHING, textOf, uniqueName, waitFor } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { spawnDaemon, type DaemonProcess } from './support/processes.js';
import { listen } from './support/registry.js';

const run = promisify(execFile);
let home: TestHome;
let daemon: DaemonProcess;
const servers: Server[] = [];

async function hostServer(answer: string): Promise<number> {
	const server = createServer((_, response) => response.end(answer));
	servers.push(server);
	return listen(server);
}

/** Runs a script with node inside the workload's container. */
async function inContainer(name: string, script: string): Promise<Record<string, string>> {
	const { stdout } = await run('docker', ['exec', containerOf(name), 'node', '-e', script], { timeout: 30_000 });
	return JSON.parse(stdout) as Record<string, string>;
}

const containers = new Map<string, string>();
const containerOf = (name: string) => containers.get(name)!;

async function create(params: Record<string, unknown>): Promise<{ name: string; port: number }> {
	const name = uniqueName(String(params.name));
	const { port } = await daemon.client.request(CreateWorkload, { ...params, name } as never);
	const { stdout } = await run('docker', ['ps', '--filter', `label=hangar.name=${name}`, '--format', '{{.Names}}']);
	containers.set(name, stdout.trim());
	return { name, port };
}

/** What a server in the container sees when it goes out: through the proxy in HTTP_PROXY, and directly. */
const PROBE = (allowed: number, denied: number) => `
const http = require('http'), net = require('net');
const proxy = process.env.HTTP_PROXY ? new URL(process.env.HTTP_PROXY) : undefined;
const via = (url) => new Promise((resolve) => {
	if (!proxy) return resolve('no proxy');
	http.get({ host: proxy.hostname, port: proxy.port, path: url }, (res) => {
		let body = ''; res.on('data', (c) => (body += c)); res.on('end', () => resolve(res.statusCode + ' ' + body.trim()));
	}).on('error', (e) => resolve('error ' + e.code));
});
const tunnel = (port) => new Promise((resolve) => {
	if (!proxy) return resolve('no proxy');
	const socket = net.connect(Number(proxy.port), proxy.hostname, () => socket.write('CONNECT 127.0.0.1:' + port + ' HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n'));
	socket.once('data', (data) => { resolve(String(data).split('\\r\\n')[0]); socket.destroy(); });
	socket.on('error', (e) => resolve('error ' + e.code));
});
const direct = () => new Promise((resolve) => {
	const socket = net.connect({ host: '1.1.1.1', port: 80 });
	socket.setTimeout(2000, () => { socket.destroy(); resolve('timeout'); });
	socket.on('connect', () => { socket.destroy(); resolve('connected'); });
	socket.on('error', (e) => resolve('error ' + e.code));
});
(async () => console.log(JSON.stringify({ allowed: await via('http://127.0.0.1:${allowed}/'), denied: await via('http://127.0.0.1:${denied}/'), tunnel: await tunnel(${allowed}), tunnelDenied: await tunnel(${denied}), direct: await direct() })))();
`;

beforeAll(async () => {
	home = await createTestHome();
	daemon = spawnDaemon(home.env);
	await daemon.client.initialize('network-test');
});

afterAll(async () => {
	const { workloads } = await daemon.client.request(ListWorkloads, { all: true });
	if (workloads.length) {
		await daemon.client.request(DeleteWorkloads, { names: workloads.map((workload) => workload.name) });
		await waitFor(async () => (await daemon.client.request(ListWorkloads, { all: true })).workloads.length === 0, 'cleanup', 60_000);
	}
	for (const server of servers) server.close();
	await daemon?.stop();
	await home?.dispose();
}, 120_000);

describe('outbound allow-lists', { timeout: 120_000 }, () => {
	it('let through only the listed host and port, over HTTP and CONNECT; nothing goes out directly', async () => {
		const [allowed, denied] = await Promise.all([hostServer('reachable'), hostServer('secret')]);
		const workload = await create({
			name: 'isolated',
			image: EVERYTHING,
			transport: 'stdio',
			cmd_arguments: ['stdio'],
			permission_profile: { network: { outbound: { allow_host: ['127.0.0.1'], allow_port: [allowed] } } },
		});
		const seen = await inContainer(workload.name, PROBE(allowed, denied));
		expect(seen).toEqual({
			allowed: '200 reachable',
			denied: expect.stringMatching(/^403 /),
			tunnel: 'HTTP/1.1 200 Connection Established',
			tunnelDenied: 'HTTP/1.1 403 Forbidden',
			direct: expect.not.stringMatching(/^connected$/),
		});
		const client = await connect(`http://127.0.0.1:${workload.port}/mcp`, 'streamable-http');
		try {
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'isolated' } }))).toBe('Echo: isolated');
		} finally {
			await client.close();
		}
		const { stdout } = await run('docker', ['network', 'ls', '--filter', `name=${containerOf(workload.name)}`, '--format', '{{.Name}} {{.Internal}}']);
		expect(stdout.trim()).toBe(`${containerOf(workload.name)} true`);
	});

	it('an HTTP server on an isolated network is still reached by its proxy', async () => {
		const workload = await create({
			name: 'isolated-http',
			image: EVERYTHING,
			transport: 'streamable-http',
			target_port: 3001,
			cmd_arguments: ['streamableHttp'],
			permission_profile: { network: { outbound: { allow_host: [] } } },
		});
		const client = await connect(`http://127.0.0.1:${workload.port}/mcp`, 'streamable-http');
		try {
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'inside' } }))).toBe('Echo: inside');
		} finally {
			await client.close();
		}
	});
});

describe('network mode none', { timeout: 120_000 }, () => {
	it('cuts a stdio server off the network; the proxy still reaches it', async () => {
		const workload = await create({ name: 'offline', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], permission_profile: { network: { mode: 'none' } } });
		const { stdout } = await run('docker', ['inspect', '--format', '{{.HostConfig.NetworkMode}}', containerOf(workload.name)]);
		expect(stdout.trim()).toBe('none');
		expect((await inContainer(workload.name, PROBE(1, 2))).direct).not.toBe('connected');
		const client = await connect(`http://127.0.0.1:${workload.port}/mcp`, 'streamable-http');
		try {
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'offline' } }))).toBe('Echo: offline');
		} finally {
			await client.close();
		}
	});

	it('is refused for a server that must be reached over the network', async () => {
		const error = await daemon.client
			.request(CreateWorkload, { name: uniqueName('unreachable'), image: EVERYTHING, transport: 'sse', target_port: 3001, permission_profile: { network: { mode: 'none' } } })
			.catch((failure: Error & { status: number }) => failure);
		expect(error).toMatchObject({ status: 400, message: expect.stringContaining('permission_profile.network.mode') });
	});
});
