/**
 * The proxy against this machine's bound, seen by a lean client (bench/lean.ts) instead of the
 * SDK's: `tools/call` (echo) to the same containerised stdio server through Hangar's proxy
 * (plain, and with authentication + authorization on), supergateway, mcp-proxy and a minimal
 * bridge of the same build as Hangar's (node:http + one engine attach); below them the engine
 * attach with no HTTP at all, and a node:http server that answers at once (no container).
 * Sequential, then 16 and 64 connections on one session; rounds alternate between fronts (then
 * telemetry's A/B in paired bursts, bench/rounds.ts, with more processes a side). CPU per call
 * is the front process's own, from /proc (the `docker run -i` client the peers relay through is
 * not counted).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { AUDIENCE, startIssuer } from '../issuer.js';
import { openSession } from '../lean.js';
import { benchEnv, binOf, freePort, peer as peerScript, proxyRecord, runHangar, spawnHttp, stopChild } from '../processes.js';
import { alternatingRounds, cpuPerCallOf, pairedBursts, pairedRatio, PHASES, pooled, rateOf, spread, startWarm, type Cycle, type Front } from '../rounds.js';
import { median, ms, percentile, perSecond, verdict, type Table } from '../stats.js';

export const IMAGE = 'hangar-test/everything:1';
export const DOCKER_RUN = ['docker', 'run', '-i', '--rm', IMAGE, 'stdio'];
const ROUNDS = 4;
const run = promisify(execFile);
/** Cycles of the telemetry A/B (see `pairedBursts`). */
const CYCLES = 20;
/**
 * Processes a side in telemetry's A/B. Two processes of the same build differ by up to 15 % here
 * and keep their difference for as long as they run (the spread lines show it), which no number
 * of cycles averages out: with two a side it swayed the verdicts by about 5 %.
 */
export const SIDE_PROCESSES = 4;

/** Calls `work` until it succeeds, for up to `timeoutMs` (a server that is still starting). */
export async function retry<T>(work: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
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
	const record = await proxyRecord(env.HANGAR_HOME!, name);
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

export async function npmPeer(label: string, pkg: string, args: (port: number) => string[]): Promise<Front> {
	const port = await freePort();
	const child = spawn(process.execPath, [binOf(pkg), ...args(port)], { stdio: ['ignore', 'ignore', 'ignore'] });
	return { name: label, pid: child.pid, session: await retry(() => openSession(`http://127.0.0.1:${port}/mcp`)), stop: () => stopChild(child) };
}

/** A detached container of the image with stdin open, for the fronts that attach through the engine. */
async function startContainer(): Promise<string> {
	const { stdout } = await run('docker', ['run', '-d', '-i', '--rm', IMAGE, 'stdio']);
	return stdout.trim();
}

export async function minimalBridge(name: string): Promise<Front> {
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

/** An OTLP/HTTP collector on loopback that accepts and drops everything. */
export async function startCollector(): Promise<{ url: string; close(): void }> {
	const server = createServer((request, response) => {
		request.resume();
		request.once('end', () => response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}


/**
 * The telemetry A/B's processes beyond the table's two a side (`SIDE_PROCESSES - 2` of each),
 * measured in its bursts only: starts of one off and one on, in turn.
 */
export function moreSideStarts(off: (index: number) => Promise<Front>, on: (index: number) => Promise<Front>): Array<() => Promise<Front>> {
	return Array.from({ length: SIDE_PROCESSES - 2 }, (_, index) => [() => off(index), () => on(index)]).flat();
}

/** The A/B's two sides: the table's processes of each, and those `moreSideStarts` started (off, on, off, …). */
export function sidesOf(off: readonly Front[], on: readonly Front[], more: readonly Front[]): [Front[], Front[]] {
	return [
		[...off, ...more.filter((_, index) => index % 2 === 0)],
		[...on, ...more.filter((_, index) => index % 2 === 1)],
	];
}

/** Telemetry on (side b) against off (side a), from paired bursts: the medians of the cycles' ratios. */
export function telemetryVerdicts(label: string, cycles: readonly Cycle[]): string[] {
	const throughput = pairedRatio(cycles, rateOf);
	const cpu = pairedRatio(cycles, cpuPerCallOf);
	const middle = ({ quartiles: [low, high] }: { quartiles: [number, number] }) => `middle half of ${cycles.length} paired cycles of ${SIDE_PROCESSES} processes a side ${low.toFixed(2)}–${high.toFixed(2)}×`;
	return [
		verdict(`${label}: throughput with telemetry on vs off`, throughput.median, 0.95, true, middle(throughput)),
		verdict(`${label}: CPU per call with telemetry on vs off`, cpu.median, 1.05, false, middle(cpu)),
	];
}

export async function proxyBound(): Promise<Table[]> {
	const issuer = await startIssuer();
	const folder = await mkdtemp(join(tmpdir(), 'hangar-bench-bound-'));
	const policies = join(folder, 'authz.json');
	await writeFile(policies, JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies: ['permit(principal, action == Action::"call_tool", resource == Tool::"echo");'], entities_json: '[]' } }));
	const token = await issuer.sign('RS256', 'rita');
	const collector = await startCollector();
	// Two processes of each front a verdict compares (telemetry's, `SIDE_PROCESSES`): two
	// identical processes differ by up to 15 % on this machine (the spread lines show it), so a
	// verdict compares one side's processes, pooled (telemetry's, in paired bursts), with the other's.
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
	const more = moreSideStarts(
		(index) => hangar(`bench-bound-more-${index}`, "Hangar's proxy, another process"),
		(index) => hangar(`bench-bound-traced-more-${index}`, "Hangar's proxy, telemetry on, another process", ['--otel-endpoint', collector.url, '--otel-enable-prometheus-metrics-path']),
	);
	const all: Front[] = [];
	try {
		await startWarm([...keys.map((key) => starts[key]), ...more], all);
		const fronts = all.slice(0, keys.length);
		const tallies = await alternatingRounds(fronts, ROUNDS);
		const front = (key: keyof typeof starts) => fronts[keys.indexOf(key)]!;
		const [off, on] = sidesOf([front('ours'), front('oursAgain')], [front('traced'), front('tracedAgain')], all.slice(keys.length));
		const telemetry: Cycle[][] = [];
		for (const phase of PHASES) telemetry.push(await pairedBursts(off, on, phase, CYCLES));
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
			const faster = Math.max(rateOf(tally('supergateway', index)), rateOf(tally('mcpProxy', index)));
			return [
				verdict(`${phase.label}: throughput vs the minimal bridge`, rateOf(ours) / rateOf(bridge), 0.9, true),
				verdict(`${phase.label}: CPU per call vs the minimal bridge`, cpuPerCallOf(ours) / cpuPerCallOf(bridge), 1.2),
				verdict(`${phase.label}: throughput with security on vs off`, rateOf(secure) / rateOf(ours), 0.9, true),
				...telemetryVerdicts(phase.label, telemetry[index]!),
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
		for (const front of all) {
			front.session.close();
			await front.stop();
		}
		issuer.stop();
		collector.close();
		await rm(folder, { recursive: true, force: true });
	}
}
