/**
 * The workload proxy's data plane: `tools/call` (echo) through Hangar's proxy, against the same
 * containerised stdio server (`docker run -i --rm hangar-test/everything:1 stdio`) fronted by
 * `supergateway` and `mcp-proxy`, and an SDK stdio client talking to it directly (the limit).
 * Every client is the official MCP SDK's; HTTP clients use Streamable HTTP.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { benchEnv, runHangar } from '../processes.js';
import { median, ms, percentile, perSecond, verdict, type Table } from '../stats.js';

const IMAGE = 'hangar-test/everything:1';
const DOCKER_RUN = ['docker', 'run', '-i', '--rm', IMAGE, 'stdio'];
const WARM_UP = 300;
const SEQUENTIAL = 3_000;
const CLIENTS = 16;
const PER_CLIENT = 300;

interface Target {
	readonly name: string;
	/** A new client (or, for the direct limit, the one client every caller shares). */
	client(): Promise<Client>;
	stop(): Promise<void>;
}

interface Measure {
	readonly p50: number;
	readonly p99: number;
	readonly rate: number;
}

const require = createRequire(import.meta.url);

/** The script of an npm package's command, run with this Node. */
function binOf(pkg: string): string {
	const manifest = require.resolve(`${pkg}/package.json`);
	const { bin } = require(manifest) as { bin: string | Record<string, string> };
	return join(dirname(manifest), typeof bin === 'string' ? bin : Object.values(bin)[0]!);
}

function freePort(): Promise<number> {
	return new Promise((resolve) => {
		const server = createServer();
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address() as { port: number };
			server.close(() => resolve(port));
		});
	});
}

async function httpClient(url: string): Promise<Client> {
	const client = new Client({ name: 'bench', version: '1.0.0' });
	await client.connect(new StreamableHTTPClientTransport(new URL(url)));
	return client;
}

/** Retries `connect` until the server behind `url` answers. */
async function firstClient(url: string, timeoutMs = 60_000): Promise<Client> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		try {
			return await httpClient(url);
		} catch (error) {
			if (Date.now() > deadline) throw error;
			await new Promise((resolve) => setTimeout(resolve, 250));
		}
	}
}

function stopChild(child: ChildProcess): Promise<void> {
	return new Promise((resolve) => {
		if (child.exitCode !== null) return resolve();
		child.once('exit', () => resolve());
		child.kill('SIGTERM');
		setTimeout(() => child.kill('SIGKILL'), 8_000).unref();
	});
}

async function hangar(): Promise<Target> {
	const env = benchEnv();
	const created = JSON.parse(await runHangar(['run', IMAGE, '--name', 'bench', '--transport', 'stdio', '--json', '--', 'stdio'], env)) as { url: string };
	return {
		name: "Hangar's proxy",
		client: () => httpClient(created.url),
		stop: async () => {
			await runHangar(['rm', 'bench'], env);
			await rm(env.HANGAR_HOME!, { recursive: true, force: true });
		},
	};
}

async function peer(name: string, pkg: string, args: (port: number) => string[]): Promise<Target> {
	const port = await freePort();
	const child = spawn(process.execPath, [binOf(pkg), ...args(port)], { stdio: ['ignore', 'ignore', 'ignore'] });
	const url = `http://127.0.0.1:${port}/mcp`;
	const first = await firstClient(url);
	let handed = false;
	return {
		name,
		client: async () => {
			if (handed) return httpClient(url);
			handed = true;
			return first;
		},
		stop: () => stopChild(child),
	};
}

async function direct(): Promise<Target> {
	const client = new Client({ name: 'bench', version: '1.0.0' });
	await client.connect(new StdioClientTransport({ command: DOCKER_RUN[0]!, args: DOCKER_RUN.slice(1), stderr: 'ignore' }));
	return { name: 'direct SDK stdio client (the limit)', client: async () => client, stop: () => client.close() };
}

const echo = (client: Client) => client.callTool({ name: 'echo', arguments: { message: 'hello from the benchmark' } });

async function sequential(target: Target): Promise<Measure> {
	const client = await target.client();
	for (let index = 0; index < WARM_UP; index++) await echo(client);
	const latencies: number[] = [];
	const started = performance.now();
	for (let index = 0; index < SEQUENTIAL; index++) {
		const sent = performance.now();
		await echo(client);
		latencies.push(performance.now() - sent);
	}
	const seconds = (performance.now() - started) / 1000;
	return { p50: median(latencies), p99: percentile(latencies, 99), rate: SEQUENTIAL / seconds };
}

async function concurrent(target: Target): Promise<Measure> {
	const clients = await Promise.all(Array.from({ length: CLIENTS }, () => target.client()));
	await Promise.all(clients.map(async (client) => {
		for (let index = 0; index < 20; index++) await echo(client);
	}));
	const latencies: number[] = [];
	const started = performance.now();
	await Promise.all(
		clients.map(async (client) => {
			for (let index = 0; index < PER_CLIENT; index++) {
				const sent = performance.now();
				await echo(client);
				latencies.push(performance.now() - sent);
			}
		}),
	);
	const seconds = (performance.now() - started) / 1000;
	return { p50: median(latencies), p99: percentile(latencies, 99), rate: (CLIENTS * PER_CLIENT) / seconds };
}

async function measure(start: () => Promise<Target>): Promise<{ name: string; sequential: Measure; concurrent: Measure }> {
	const target = await start();
	try {
		return { name: target.name, sequential: await sequential(target), concurrent: await concurrent(target) };
	} finally {
		await target.stop();
	}
}

export async function workloads(): Promise<Table[]> {
	const results = [
		await measure(hangar),
		await measure(() => peer('supergateway 4 (stateful Streamable HTTP)', 'supergateway', (port) => ['--stdio', DOCKER_RUN.join(' '), '--outputTransport', 'streamableHttp', '--stateful', '--port', String(port), '--logLevel', 'none'])),
		await measure(() => peer('mcp-proxy 6 (Streamable HTTP)', 'mcp-proxy', (port) => ['--port', String(port), '--host', '127.0.0.1', '--server', 'stream', '--', ...DOCKER_RUN])),
		await measure(direct),
	];
	const [ours, supergateway, mcpProxy, limit] = results as [(typeof results)[0], (typeof results)[0], (typeof results)[0], (typeof results)[0]];
	const fasterPeer = (pick: (result: (typeof results)[0]) => number) => Math.max(pick(supergateway), pick(mcpProxy));
	return [
		{
			title: `tools/call (echo) through a proxy to \`docker run -i\` of the same stdio server: sequential (${SEQUENTIAL.toLocaleString('en-US')} calls) and ${CLIENTS} concurrent clients (${PER_CLIENT} calls each)`,
			columns: ['front', 'sequential p50', 'sequential p99', 'sequential', `${CLIENTS} clients p50`, `${CLIENTS} clients`],
			rows: results.map((result) => [
				result.name,
				ms(result.sequential.p50),
				ms(result.sequential.p99),
				perSecond(result.sequential.rate),
				ms(result.concurrent.p50),
				perSecond(result.concurrent.rate),
			]),
			verdicts: [
				verdict('sequential throughput vs the faster peer', ours.sequential.rate / fasterPeer((result) => result.sequential.rate), 2, true),
				verdict('sequential throughput vs direct', ours.sequential.rate / limit.sequential.rate, 0.5, true),
				`p50 added over direct: ${ms(ours.sequential.p50 - limit.sequential.p50)} (target ≤ 0.300 ms) — ${ours.sequential.p50 - limit.sequential.p50 <= 0.3 ? 'met' : 'MISSED'}`,
				verdict(`${CLIENTS}-client throughput vs the faster peer`, ours.concurrent.rate / fasterPeer((result) => result.concurrent.rate), 2, true),
			],
		},
	];
}
