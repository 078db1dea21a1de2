/**
 * The workload proxy's data plane: `tools/call` (echo) through Hangar's proxy, against the same
 * containerised stdio server (`docker run -i --rm hangar-test/everything:1 stdio`) fronted by
 * `supergateway` and `mcp-proxy`, and an SDK stdio client talking to it directly (the limit).
 * A second table (suites/proxyBound.ts) measures the same fronts with a lean client.
 * Every client is the official MCP SDK's; HTTP clients use Streamable HTTP.
 *
 * Two floors with no container behind them bound what any HTTP front can reach with this
 * client: the SDK client against a server that answers at once, over Streamable HTTP and over
 * stdio. A front can do no better than the direct client plus the difference between the two.
 */
import { spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { benchEnv, binOf, entryOf, freePort, peer as peerScript, runHangar, spawnHttp, stopChild } from '../processes.js';
import { median, ms, percentile, perSecond, verdict, type Table } from '../stats.js';
import { proxyBound, SIDE_PROCESSES } from './proxyBound.js';

const IMAGE = 'hangar-test/everything:1';
const DOCKER_RUN = ['docker', 'run', '-i', '--rm', IMAGE, 'stdio'];
const WARM_UP = 1_000;
/** Fronts are measured in alternating rounds, so that drifts in the machine's speed hit every front alike. */
const ROUNDS = 6;
/** Cycles of telemetry's A/B (see `telemetryVerdicts`). */
const CYCLES = 20;
const SEQUENTIAL = 3_000;
const CLIENTS = 16;
const PER_CLIENT = 300;

/** What the benchmark asks of a client, whichever SDK and revision it is. */
interface CallingClient {
	callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
}

interface Target {
	readonly name: string;
	/** A new client (or, over stdio, the one client every caller shares). */
	client(): Promise<CallingClient>;
	stop(): Promise<void>;
}

interface Measure {
	readonly p50: number;
	readonly p99: number;
	readonly rate: number;
}

interface Result {
	readonly name: string;
	readonly sequential: Measure;
	readonly concurrent: Measure;
}

type Phase = 'sequential' | 'concurrent';


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


/** The SDK 2.x client pinned to MCP 2026-07-28: stateless, no handshake. */
async function modernClient(url: string): Promise<CallingClient> {
	const client = new ModernClient({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
	await client.connect(new ModernHttpTransport(new URL(url)));
	return client;
}

/**
 * Hangar's proxy in front of the image: shared sessions (the default), isolated sessions, or
 * another build of Hangar (`HANGAR_BENCH_BASELINE`: a checkout with `dist/` built) for an A/B;
 * its clients are the SDK 1.x client, or `connect` (the 2026-07-28 client).
 */
function hangar(name: string, options: { flags?: readonly string[]; cli?: string; connect?: (url: string) => Promise<CallingClient> } = {}): () => Promise<Target> {
	return async () => {
		const env = benchEnv();
		const args = ['run', IMAGE, '--name', 'bench', '--transport', 'stdio', ...(options.flags ?? []), '--json', '--', 'stdio'];
		const created = JSON.parse(await runHangar(args, env, options.cli)) as { url: string };
		const connect = options.connect ?? httpClient;
		return {
			name,
			client: () => connect(created.url),
			stop: async () => {
				await runHangar(['rm', 'bench'], env, options.cli);
				await rm(env.HANGAR_HOME!, { recursive: true, force: true });
			},
		};
	};
}

/**
 * Hangar's proxy with traces and metrics on: OTLP/HTTP to a collector on loopback that accepts
 * and drops everything, and Prometheus' /metrics (not scraped, its cost is the recording).
 */
async function hangarTraced(): Promise<Target> {
	const collector = createServer((request, response) => {
		request.resume();
		request.once('end', () => response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'));
	});
	await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
	const { port } = collector.address() as AddressInfo;
	const flags = ['--otel-endpoint', `http://127.0.0.1:${port}`, '--otel-enable-prometheus-metrics-path'];
	const target = await hangar("Hangar's proxy, telemetry on (traces, metrics, /metrics)", { flags })();
	return {
		...target,
		stop: async () => {
			await target.stop();
			collector.close();
		},
	};
}

const BASELINE = process.env.HANGAR_BENCH_BASELINE;

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

async function instantHttp(): Promise<Target> {
	const server = await spawnHttp([peerScript('instant-mcp'), '--http']);
	return {
		name: 'floor: SDK client over Streamable HTTP, answered at once (no container)',
		client: () => httpClient(server.url),
		stop: async () => server.stop(),
	};
}

async function instantStdio(): Promise<Target> {
	const client = new Client({ name: 'bench', version: '1.0.0' });
	await client.connect(new StdioClientTransport({ command: process.execPath, args: [peerScript('instant-mcp')], stderr: 'ignore' }));
	return { name: 'floor: SDK client over stdio, answered at once (no container)', client: async () => client, stop: () => client.close() };
}

const echo = (client: CallingClient) => client.callTool({ name: 'echo', arguments: { message: 'hello from the benchmark' } });

/** A front under measurement: its clients, and the latencies and time spent on it so far. */
class Subject {
	readonly sequential = { latencies: [] as number[], milliseconds: 0 };
	readonly concurrent = { latencies: [] as number[], milliseconds: 0 };

	private constructor(
		readonly target: Target,
		private readonly single: CallingClient,
		private readonly many: readonly CallingClient[],
	) {}

	/** Starts a front and warms its clients; a front that fails on the way is stopped, not left running. */
	static async start(start: () => Promise<Target>): Promise<Subject> {
		const target = await start();
		try {
			const single = await target.client();
			const many = await Promise.all(Array.from({ length: CLIENTS }, () => target.client()));
			for (let index = 0; index < WARM_UP; index++) await echo(single);
			await Promise.all(many.map(async (client) => {
				for (let index = 0; index < WARM_UP / CLIENTS; index++) await echo(client);
			}));
			return new Subject(target, single, many);
		} catch (error) {
			await target.stop();
			throw error;
		}
	}

	async sequentialRound(calls: number): Promise<void> {
		const started = performance.now();
		for (let index = 0; index < calls; index++) {
			const sent = performance.now();
			await echo(this.single);
			this.sequential.latencies.push(performance.now() - sent);
		}
		this.sequential.milliseconds += performance.now() - started;
	}

	async concurrentRound(callsPerClient: number): Promise<void> {
		const started = performance.now();
		await Promise.all(
			this.many.map(async (client) => {
				for (let index = 0; index < callsPerClient; index++) {
					const sent = performance.now();
					await echo(client);
					this.concurrent.latencies.push(performance.now() - sent);
				}
			}),
		);
		this.concurrent.milliseconds += performance.now() - started;
	}

	result(): Result {
		const measure = ({ latencies, milliseconds }: { latencies: number[]; milliseconds: number }): Measure => ({
			p50: median(latencies),
			p99: percentile(latencies, 99),
			rate: latencies.length / (milliseconds / 1000),
		});
		return { name: this.target.name, sequential: measure(this.sequential), concurrent: measure(this.concurrent) };
	}
}

/** Starts and warms every front, then measures them in rounds, each round in a new order. */
async function measureAll(starts: ReadonlyArray<() => Promise<Target>>): Promise<Result[]> {
	const subjects: Subject[] = [];
	try {
		for (const start of starts) subjects.push(await Subject.start(start));
		for (let round = 0; round < ROUNDS; round++) {
			const order = subjects.map((_, index) => subjects[(index + round) % subjects.length]!);
			for (const subject of order) await subject.sequentialRound(SEQUENTIAL / ROUNDS);
			for (const subject of order) await subject.concurrentRound(PER_CLIENT / ROUNDS);
		}
		return subjects.map((subject) => subject.result());
	} finally {
		for (const subject of subjects) await subject.target.stop();
	}
}

/**
 * Telemetry on against off with this client: `SIDE_PROCESSES` processes of each, in short bursts
 * that alternate between them, each cycle in the reverse order of the one before (A B A B,
 * B A B A), as the lean table's A/B (bench/rounds.ts); the verdicts read the median of the
 * cycles' throughput ratios. The rounds above, with one process of each, cannot tell
 * telemetry's cost: the SDK client spends a core of its own, and two processes of one front
 * differ by up to 15 %.
 */
async function telemetryVerdicts(): Promise<string[]> {
	const subjects: Subject[] = [];
	try {
		for (let index = 0; index < SIDE_PROCESSES; index++) subjects.push(await Subject.start(hangar("Hangar's proxy, another process")), await Subject.start(hangarTraced));
		const ratios = { sequential: [] as number[], concurrent: [] as number[] };
		for (let cycle = 0; cycle <= CYCLES; cycle++) {
			const order = cycle % 2 ? [...subjects].reverse() : subjects;
			for (const phase of ['sequential', 'concurrent'] as const) {
				const sides = [0, 1].map(() => ({ calls: 0, milliseconds: 0 }));
				for (const subject of order) {
					const { latencies, milliseconds } = subject[phase];
					const [callsBefore, millisecondsBefore] = [latencies.length, milliseconds];
					await (phase === 'sequential' ? subject.sequentialRound(SEQUENTIAL / 10) : subject.concurrentRound(PER_CLIENT / 10));
					// Every second one is traced.
					const side = sides[subjects.indexOf(subject) % 2]!;
					side.calls += subject[phase].latencies.length - callsBefore;
					side.milliseconds += subject[phase].milliseconds - millisecondsBefore;
				}
				const [off, on] = sides.map((side) => side.calls / side.milliseconds) as [number, number];
				if (cycle > 0) ratios[phase].push(on / off);
			}
		}
		const middle = (values: number[]) => `middle half of ${CYCLES} paired cycles of ${SIDE_PROCESSES} processes a side ${percentile(values, 25).toFixed(2)}–${percentile(values, 75).toFixed(2)}×`;
		return [
			verdict('sequential throughput, telemetry on vs off', median(ratios.sequential), 0.95, true, middle(ratios.sequential)),
			verdict(`${CLIENTS}-client throughput, telemetry on vs off`, median(ratios.concurrent), 0.95, true, middle(ratios.concurrent)),
		];
	} finally {
		for (const subject of subjects) await subject.target.stop();
	}
}

export async function workloads(): Promise<Table[]> {
	// Node 20's fetch hangs an abort listener per request on the SDK transport's long-lived
	// signal and drops it only when the request is collected: thousands pile up, by design.
	setMaxListeners(0);
	const results = await measureAll([
		hangar("Hangar's proxy"),
		() => peer('supergateway 4 (stateful Streamable HTTP)', 'supergateway', (port) => ['--stdio', DOCKER_RUN.join(' '), '--outputTransport', 'streamableHttp', '--stateful', '--port', String(port), '--logLevel', 'none']),
		() => peer('mcp-proxy 6 (Streamable HTTP)', 'mcp-proxy', (port) => ['--port', String(port), '--host', '127.0.0.1', '--server', 'stream', '--', ...DOCKER_RUN]),
		direct,
		instantHttp,
		instantStdio,
		// One process per session (the sequential client's and each concurrent client's, all open at
		// once) beside the container's own, which keeps its first handshake.
		hangar("Hangar's proxy, isolated sessions (one server process per client)", { flags: ['--session-mode', 'isolated', '--max-server-processes', String(CLIENTS + 2)] }),
		hangarTraced,
		// A 2026 call of a client that may be asked back (elicitation, sampling, roots) runs on a
		// process of its own beside the container's (docs/proxy.md): one per concurrent client.
		hangar("Hangar's proxy, MCP 2026-07-28 clients (SDK 2.x, stateless) of the same server", { connect: modernClient, flags: ['--max-server-processes', String(CLIENTS + 1)] }),
		...(BASELINE ? [hangar(`Hangar's proxy, baseline build (${BASELINE})`, { cli: entryOf(BASELINE) })] : []),
	]);
	const [ours, supergateway, mcpProxy, limit, httpFloor, stdioFloor, , , , baseline] = results as [Result, Result, Result, Result, Result, Result, Result, Result, Result, Result | undefined];
	const fasterPeer = (phase: Phase) => Math.max(supergateway[phase].rate, mcpProxy[phase].rate);
	// The best any HTTP front could do: the direct client, with the SDK's stdio transport swapped
	// for its HTTP transport. Time per call adds up the same way whether it is spent waiting
	// (sequential) or on the machine's two busy cores (concurrent).
	const bestRate = (phase: Phase) => 1 / (1 / limit[phase].rate + 1 / httpFloor[phase].rate - 1 / stdioFloor[phase].rate);
	const leastAddedP50 = httpFloor.sequential.p50 - stdioFloor.sequential.p50;
	const addedP50 = ours.sequential.p50 - limit.sequential.p50;
	const ceiling = (ratio: number) => `any HTTP front with this client: at most ${ratio.toFixed(2)}×`;
	return [
		{
			title: `The SDK client: tools/call (echo) through a proxy to \`docker run -i\` of the same stdio server: sequential (${SEQUENTIAL.toLocaleString('en-US')} calls) and ${CLIENTS} concurrent clients (${PER_CLIENT} calls each)`,
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
				verdict('sequential throughput vs the faster peer', ours.sequential.rate / fasterPeer('sequential'), 2, true, ceiling(bestRate('sequential') / fasterPeer('sequential'))),
				verdict('sequential throughput vs direct', ours.sequential.rate / limit.sequential.rate, 0.5, true, ceiling(bestRate('sequential') / limit.sequential.rate)),
				`p50 added over direct: ${ms(addedP50)} (target ≤ 0.300 ms; any HTTP front with this client: at least ${ms(leastAddedP50)}) — ${addedP50 <= 0.3 ? 'met' : 'MISSED'}`,
				verdict(`${CLIENTS}-client throughput vs the faster peer`, ours.concurrent.rate / fasterPeer('concurrent'), 2, true, ceiling(bestRate('concurrent') / fasterPeer('concurrent'))),
				...(await telemetryVerdicts()),
				...(baseline
					? (['sequential', 'concurrent'] as const).map((phase) => verdict(`${phase} throughput vs the baseline build`, ours[phase].rate / baseline[phase].rate, 0.95, true))
					: []),
			],
		},
		...(await proxyBound()),
	];
}
