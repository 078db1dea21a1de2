/**
 * The proxy against this machine's bound, seen by a lean client (bench/lean.ts) instead of the
 * SDK's: `tools/call` (echo) to the same containerised stdio server through Hangar's proxy
 * (plain, and with authentication + authorization on), supergateway, mcp-proxy and a minimal
 * bridge of the same build as Hangar's (node:http + one engine attach); below them the engine
 * attach with no HTTP at all, and a node:http server that answers at once (no container).
 * Sequential, then 16 and 64 connections on one session; rounds alternate between fronts. CPU
 * per call is the front process's own, from /proc (the `docker run -i` client the peers relay
 * through is not counted).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { AUDIENCE, startIssuer } from '../issuer.js';
import { cpuSecondsOf, openSession, type LeanSession } from '../lean.js';
import { benchEnv, binOf, freePort, peer as peerScript, runHangar, spawnHttp, stopChild } from '../processes.js';
import { median, ms, percentile, perSecond, verdict, type Table } from '../stats.js';

const IMAGE = 'hangar-test/everything:1';
const DOCKER_RUN = ['docker', 'run', '-i', '--rm', IMAGE, 'stdio'];
const WARM_UP = 500;
const ROUNDS = 4;
/** The pause before each front's round (see `alternatingRounds`). */
const SETTLE_MS = 300;
// Enough calls per round that each front runs for a while at its steady state: a front that
// waited through a heavier neighbour's round starts its own with cold caches and a shrunk heap.
export const PHASES = [
	{ label: 'sequential', connections: 1, calls: 4_000 },
	{ label: '16 connections', connections: 16, calls: 16_000 },
	{ label: '64 connections', connections: 64, calls: 25_600 },
] as const;

export interface Front {
	readonly name: string;
	/** The process whose CPU is the front's, if it is a process of its own. */
	readonly pid: number | undefined;
	readonly session: LeanSession;
	stop(): Promise<void>;
}

export interface Tally {
	latencies: number[];
	milliseconds: number;
	cpuSeconds: number;
}

const run = promisify(execFile);


async function retry<T>(work: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		try {
			return await work();
		} catch (error) {
			if (Date.now() > deadline) throw error;
			await new Promise((resolve) => setTimeout(resolve, 250));
		}
	}
}


/** Hangar's proxy for a new workload of the image; `flags` add settings (security, modes). */
export async function hangar(name: string, label: string, flags: string[] = [], headers: Record<string, string> = {}): Promise<Front> {
	const env = benchEnv();
	const created = JSON.parse(await runHangar(['run', IMAGE, '--name', name, '--transport', 'stdio', '--json', ...flags, '--', 'stdio'], env)) as { url: string };
	const record = JSON.parse(await readFile(join(env.HANGAR_HOME!, 'data', 'proxies', `${name}.json`), 'utf8')) as { pid: number };
	return {
		name: label,
		pid: record.pid,
		session: await retry(() => openSession(created.url, headers)),
		stop: async () => {
			await runHangar(['rm', name], env).catch(() => undefined);
			await rm(env.HANGAR_HOME!, { recursive: true, force: true });
		},
	};
}

async function npmPeer(label: string, pkg: string, args: (port: number) => string[]): Promise<Front> {
	const port = await freePort();
	const child = spawn(process.execPath, [binOf(pkg), ...args(port)], { stdio: ['ignore', 'ignore', 'ignore'] });
	return { name: label, pid: child.pid, session: await retry(() => openSession(`http://127.0.0.1:${port}/mcp`)), stop: () => stopChild(child) };
}

/** A detached container of the image with stdin open, for the fronts that attach through the engine. */
async function startContainer(): Promise<string> {
	const { stdout } = await run('docker', ['run', '-d', '-i', '--rm', IMAGE, 'stdio']);
	return stdout.trim();
}

async function minimalBridge(name: string): Promise<Front> {
	const container = await startContainer();
	const server = await spawnHttp([peerScript('minimal-bridge'), container]);
	return {
		name,
		pid: server.pid,
		session: await retry(() => openSession(server.url)),
		stop: async () => {
			server.stop();
			await run('docker', ['rm', '-f', container]).catch(() => undefined);
		},
	};
}

/** The engine attach alone, in this process: newline-delimited JSON-RPC with no HTTP. */
async function engineAttach(): Promise<Front> {
	const container = await startContainer();
	const docker = new Docker();
	const stream = await docker.getContainer(container).attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true });
	const stdout = new PassThrough();
	docker.modem.demuxStream(stream, stdout, new PassThrough().resume());
	const waiting = new Map<number, () => void>();
	let buffered = '';
	stdout.on('data', (chunk: Buffer) => {
		buffered += chunk.toString('utf8');
		for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
			const { id } = JSON.parse(buffered.slice(0, newline)) as { id?: number };
			buffered = buffered.slice(newline + 1);
			if (id !== undefined) waiting.get(id)?.();
			if (id !== undefined) waiting.delete(id);
		}
	});
	let nextId = 0;
	const send = (method: string, params: object) => {
		const id = nextId++;
		return new Promise<void>((resolve) => {
			waiting.set(id, resolve);
			stream.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
		});
	};
	await send('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lean-bench', version: '1.0.0' } });
	stream.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
	return {
		name: 'engine attach alone (no HTTP)',
		pid: undefined,
		session: { call: () => send('tools/call', { name: 'echo', arguments: { message: 'hello from the benchmark' } }), close: () => stream.end() },
		stop: async () => {
			stream.end();
			await run('docker', ['rm', '-f', container]).catch(() => undefined);
		},
	};
}

async function instantServer(): Promise<Front> {
	const server = await spawnHttp([peerScript('instant-mcp'), '--http']);
	return { name: 'node:http answering at once (no container)', pid: server.pid, session: await openSession(server.url), stop: async () => server.stop() };
}

export async function calls(session: LeanSession, connections: number, total: number, tally?: Tally): Promise<void> {
	const perConnection = Math.ceil(total / connections);
	await Promise.all(
		Array.from({ length: connections }, async () => {
			for (let index = 0; index < perConnection; index++) {
				const sent = performance.now();
				await session.call();
				tally?.latencies.push(performance.now() - sent);
			}
		}),
	);
}

/**
 * Starts every front, then warms each up, adding them to `fronts` once started (the caller
 * stops them). Warmed only once all have started, so that none waits through the others'
 * start-up after its warm-up.
 */
export async function startWarm(starts: ReadonlyArray<() => Promise<Front>>, fronts: Front[]): Promise<void> {
	for (const start of starts) fronts.push(await start());
	for (const front of fronts) {
		// Every phase once, so that the code each takes is optimised before the rounds.
		await calls(front.session, 1, WARM_UP);
		await calls(front.session, 16, WARM_UP * 4);
		await calls(front.session, 64, WARM_UP * 4);
	}
}

/**
 * The fronts' order in round `round`: a shuffle seeded by the round, the same in every run. Not
 * a rotation, which keeps each front behind the same neighbour in every round, and a front's
 * work after its round (a telemetry export, a collection) then always lands on the same one.
 */
export function orderOf(round: number, count: number): number[] {
	const order = Array.from({ length: count }, (_, index) => index);
	// mulberry32, a small well-mixed generator, seeded by the round.
	let state = round + 1;
	const random = () => {
		state = (state + 0x6d2b79f5) | 0;
		let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
		mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
		return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
	};
	for (let last = count - 1; last > 0; last--) {
		const pick = Math.floor(random() * (last + 1));
		[order[last], order[pick]] = [order[pick]!, order[last]!];
	}
	return order;
}

/**
 * Every phase over every front, in `rounds` rounds, each in its own order (see `orderOf`); one
 * tally per front and phase, CPU from the front's own process. Each round starts after a pause,
 * so that what the front before leaves running (a peer's collections, the engine relaying its
 * last output, a telemetry export) is over, then a tenth of its calls unmeasured: a front that
 * waited through other fronts' rounds has lost its caches to them, and the measure is of a
 * front at work.
 */
export async function alternatingRounds(fronts: readonly Front[], rounds: number): Promise<Tally[][]> {
	const tallies = fronts.map(() => PHASES.map((): Tally => ({ latencies: [], milliseconds: 0, cpuSeconds: 0 })));
	// Round 0 is not measured: the front warmed first has waited through every other's warm-up,
	// and paid 20–30 % more in its first rounds than an identical front warmed last.
	for (let round = 0; round <= rounds; round++) {
		for (const [phaseIndex, phase] of PHASES.entries()) {
			for (const index of orderOf(round * PHASES.length + phaseIndex, fronts.length)) {
				const front = fronts[index]!;
				const tally = round === 0 ? undefined : tallies[index]![phaseIndex]!;
				await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
				await calls(front.session, phase.connections, phase.calls / rounds / 10);
				const cpuBefore = front.pid ? cpuSecondsOf(front.pid) : 0;
				const started = performance.now();
				await calls(front.session, phase.connections, phase.calls / rounds, tally);
				if (!tally) continue;
				tally.milliseconds += performance.now() - started;
				if (front.pid) tally.cpuSeconds += cpuSecondsOf(front.pid) - cpuBefore;
			}
		}
	}
	return tallies;
}

/** An OTLP/HTTP collector on loopback that accepts and drops everything. */
export async function startCollector(): Promise<{ url: string; close(): void }> {
	const server = createServer((request, response) => {
		request.resume();
		request.once('end', () => response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

export function rateOf(tally: Tally): number {
	return tally.latencies.length / (tally.milliseconds / 1000);
}

/** The front process's CPU per call, in µs. */
export function cpuPerCallOf(tally: Tally): number {
	return (tally.cpuSeconds * 1e6) / tally.latencies.length;
}

/** Two processes of one front as one: their calls, time and CPU together. */
export function pooled(first: Tally, second: Tally): Tally {
	return { latencies: [...first.latencies, ...second.latencies], milliseconds: first.milliseconds + second.milliseconds, cpuSeconds: first.cpuSeconds + second.cpuSeconds };
}

/** How far the second of two identical fronts is from the first. */
export function spread(first: Tally, second: Tally): string {
	return `throughput ${(rateOf(second) / rateOf(first)).toFixed(2)}×, CPU per call ${(cpuPerCallOf(second) / cpuPerCallOf(first)).toFixed(2)}×`;
}

export async function proxyBound(): Promise<Table[]> {
	const issuer = await startIssuer();
	const folder = await mkdtemp(join(tmpdir(), 'hangar-bench-bound-'));
	const policies = join(folder, 'authz.json');
	await writeFile(policies, JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies: ['permit(principal, action == Action::"call_tool", resource == Tool::"echo");'], entities_json: '[]' } }));
	const token = await issuer.sign('RS256', 'rita');
	const collector = await startCollector();
	// Two processes of each front a verdict compares: two identical processes differ by up to
	// 15 % on this machine (the spread lines show it), so a verdict compares the two of one side,
	// pooled, with the two of the other.
	const starts = {
		ours: () => hangar('bench-bound', "Hangar's proxy"),
		secure: () => hangar('bench-bound-secure', "Hangar's proxy, authentication + authorization on", ['--oidc-issuer', issuer.url, '--oidc-audience', AUDIENCE, '--authz-config', policies], { Authorization: `Bearer ${token}` }),
		supergateway: () => npmPeer('supergateway 4', 'supergateway', (port) => ['--stdio', DOCKER_RUN.join(' '), '--outputTransport', 'streamableHttp', '--stateful', '--port', String(port), '--logLevel', 'none']),
		mcpProxy: () => npmPeer('mcp-proxy 6', 'mcp-proxy', (port) => ['--port', String(port), '--host', '127.0.0.1', '--server', 'stream', '--', ...DOCKER_RUN]),
		bridge: () => minimalBridge('minimal bridge (node:http + one engine attach)'),
		engine: engineAttach,
		instant: instantServer,
		// Traces and metrics by OTLP to a collector that drops them, and /metrics.
		traced: () => hangar('bench-bound-traced', "Hangar's proxy, telemetry on (traces at the default tenth, metrics, /metrics)", ['--otel-endpoint', collector.url, '--otel-enable-prometheus-metrics-path']),
		oursAgain: () => hangar('bench-bound-again', "Hangar's proxy, a second process"),
		bridgeAgain: () => minimalBridge('minimal bridge, a second process'),
		secureAgain: () => hangar('bench-bound-secure-again', "Hangar's proxy, authentication + authorization on, a second process", ['--oidc-issuer', issuer.url, '--oidc-audience', AUDIENCE, '--authz-config', policies], { Authorization: `Bearer ${token}` }),
		tracedAgain: () => hangar('bench-bound-traced-again', "Hangar's proxy, telemetry on, a second process", ['--otel-endpoint', collector.url, '--otel-enable-prometheus-metrics-path']),
	};
	const keys = Object.keys(starts) as Array<keyof typeof starts>;
	const fronts: Front[] = [];
	try {
		await startWarm(keys.map((key) => starts[key]), fronts);
		const tallies = await alternatingRounds(fronts, ROUNDS);
		const rows = fronts.map((front, index) => [
			front.name,
			...PHASES.flatMap((_, phaseIndex) => {
				const tally = tallies[index]![phaseIndex]!;
				return [ms(median(tally.latencies)), ms(percentile(tally.latencies, 99)), perSecond(rateOf(tally)), front.pid ? `${Math.round(cpuPerCallOf(tally))} µs` : '—'];
			}),
		]);
		const tally = (key: keyof typeof starts, phaseIndex: number) => tallies[keys.indexOf(key)]![phaseIndex]!;
		const verdicts = PHASES.flatMap((phase, index) => {
			const ours = pooled(tally('ours', index), tally('oursAgain', index));
			const bridge = pooled(tally('bridge', index), tally('bridgeAgain', index));
			const secure = pooled(tally('secure', index), tally('secureAgain', index));
			const traced = pooled(tally('traced', index), tally('tracedAgain', index));
			const faster = Math.max(rateOf(tally('supergateway', index)), rateOf(tally('mcpProxy', index)));
			return [
				verdict(`${phase.label}: throughput vs the minimal bridge`, rateOf(ours) / rateOf(bridge), 0.9, true),
				verdict(`${phase.label}: CPU per call vs the minimal bridge`, cpuPerCallOf(ours) / cpuPerCallOf(bridge), 1.2),
				verdict(`${phase.label}: throughput with security on vs off`, rateOf(secure) / rateOf(ours), 0.9, true),
				verdict(`${phase.label}: throughput with telemetry on vs off`, rateOf(traced) / rateOf(ours), 0.95, true),
				verdict(`${phase.label}: CPU per call with telemetry on vs off`, cpuPerCallOf(traced) / cpuPerCallOf(ours), 1.05),
				`${phase.label}: Hangar at ${(rateOf(ours) / faster).toFixed(2)}× the faster peer`,
				`${phase.label}: the spread, ${spread(tally('ours', index), tally('oursAgain', index))} between the two plain proxies, ${spread(tally('bridge', index), tally('bridgeAgain', index))} between the two bridges`,
			];
		});
		return [
			{
				title: `tools/call (echo) from a lean client (raw keep-alive HTTP, one session) to the same containerised stdio server: ${PHASES.map((phase) => `${phase.label} (${phase.calls.toLocaleString('en-US')} calls)`).join(', ')}, ${ROUNDS} alternating rounds after one unmeasured; CPU is the front process's own per call`,
				columns: ['front', ...PHASES.flatMap((phase) => [`${phase.label} p50`, 'p99', 'calls/s', 'CPU/call'])],
				rows,
				verdicts,
			},
		];
	} finally {
		for (const front of fronts) {
			front.session.close();
			await front.stop();
		}
		issuer.stop();
		collector.close();
		await rm(folder, { recursive: true, force: true });
	}
}
