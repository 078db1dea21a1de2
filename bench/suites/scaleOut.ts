/**
 * Proxy replicas behind HAProxy, sessions shared through Redis: `tools/call` (echo) from the
 * lean client (one 2025-06-18 session, its calls spread round-robin over the replicas) to an
 * HTTP server that takes 5 ms per call without using the CPU, through 1, 2 and 3 replicas,
 * and to the server directly (the bound: what the server and the client alone allow). CPU
 * per call is the workload's proxy processes' (supervisor and replicas) and HAProxy's; Redis
 * commands per call show that the replicas do not go to Redis per message (a session is read
 * once by each replica that serves it). Rounds alternate between fronts.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { Redis } from 'ioredis';
import { cpuSecondsOf, openSession, type LeanSession } from '../lean.js';
import { benchEnv, freePort, peer, runHangar, spawnHttp, stopChild } from '../processes.js';
import { calls } from '../rounds.js';
import { median, ms, percentile, perSecond, type Table } from '../stats.js';

const SERVER_DELAY_MS = 5;
const PHASES = [
	{ label: '16 connections', connections: 16, calls: 3_200 },
	{ label: '64 connections', connections: 64, calls: 6_400 },
] as const;
const ROUNDS = 4;
const WARM_UP = 640;

interface Front {
	readonly name: string;
	/** The front's own processes (the proxy, or the supervisor and replicas), and its load balancer's. */
	pids(): Promise<{ proxies: number[]; balancer: number[] }>;
	readonly session: LeanSession;
	stop(): Promise<void>;
}

interface Tally {
	latencies: number[];
	milliseconds: number;
	cpuSeconds: number;
	balancerCpuSeconds: number;
	redisCommands: number;
}

/** Pids of workload `name`'s proxy processes, and of its HAProxy. */
async function pidsOf(name: string): Promise<{ proxies: number[]; balancer: number[] }> {
	const found = { proxies: [] as number[], balancer: [] as number[] };
	for (const entry of await readdir('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		const argv = (await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).split('\0');
		if (argv.includes('proxy') && argv.includes(name)) found.proxies.push(Number(entry));
		else if (argv.some((arg) => arg.endsWith(`/${name}.haproxy.cfg`))) found.balancer.push(Number(entry));
	}
	return found;
}

async function cpuOf(pids: readonly number[]): Promise<number> {
	let seconds = 0;
	for (const pid of pids) {
		try {
			seconds += cpuSecondsOf(pid);
		} catch {
			// exited
		}
	}
	return seconds;
}

async function startRedis(): Promise<{ address: string; client: Redis; stop(): Promise<void> }> {
	const port = await freePort();
	const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] });
	await new Promise<void>((resolve, reject) => {
		let output = '';
		child.stdout!.on('data', (chunk: Buffer) => {
			output += chunk.toString();
			if (output.includes('Ready to accept connections')) resolve();
		});
		child.once('error', reject);
		child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
	});
	child.stdout!.resume();
	const client = new Redis({ port, host: '127.0.0.1' });
	return { address: `127.0.0.1:${port}`, client, stop: async () => (client.disconnect(), await stopChild(child)) };
}

/** Redis commands served so far (INFO stats), less the INFO itself. */
async function redisCommands(client: Redis): Promise<number> {
	const info = await client.info('stats');
	return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0);
}

async function hangarReplicas(replicas: number, serverUrl: string, redisAddress: string): Promise<Front> {
	const env = benchEnv();
	const name = `bench-scale-${replicas}`;
	const flags = replicas > 1 ? ['--replicas', String(replicas), '--session-redis', redisAddress] : [];
	const created = JSON.parse(await runHangar(['run', serverUrl, '--name', name, '--json', ...flags], env)) as { url: string };
	return {
		name: replicas === 1 ? "Hangar's proxy, one process" : `Hangar, ${replicas} replicas behind HAProxy, sessions in Redis`,
		pids: () => pidsOf(name),
		session: await openSession(created.url),
		stop: async () => {
			await runHangar(['rm', name], env).catch(() => undefined);
		},
	};
}

export async function scaleOut(): Promise<Table[]> {
	const server = await spawnHttp([peer('instant-mcp'), '--http', '--delay-ms', String(SERVER_DELAY_MS)]);
	const redis = await startRedis();
	const fronts: Front[] = [];
	try {
		fronts.push({ name: `the server directly (${SERVER_DELAY_MS} ms per call; the bound)`, pids: async () => ({ proxies: [], balancer: [] }), session: await openSession(server.url), stop: async () => undefined });
		for (const replicas of [1, 2, 3]) fronts.push(await hangarReplicas(replicas, server.url, redis.address));
		for (const front of fronts) await calls(front.session, 16, WARM_UP);

		const tallies = fronts.map(() => PHASES.map((): Tally => ({ latencies: [], milliseconds: 0, cpuSeconds: 0, balancerCpuSeconds: 0, redisCommands: 0 })));
		for (let round = 0; round < ROUNDS; round++) {
			for (const [phaseIndex, phase] of PHASES.entries()) {
				for (let offset = 0; offset < fronts.length; offset++) {
					const index = (offset + round) % fronts.length;
					const front = fronts[index]!;
					const tally = tallies[index]![phaseIndex]!;
					const pids = await front.pids();
					const [cpuBefore, balancerBefore, commandsBefore] = [await cpuOf(pids.proxies), await cpuOf(pids.balancer), await redisCommands(redis.client)];
					const started = performance.now();
					await calls(front.session, phase.connections, phase.calls / ROUNDS, tally);
					tally.milliseconds += performance.now() - started;
					tally.cpuSeconds += (await cpuOf(pids.proxies)) - cpuBefore;
					tally.balancerCpuSeconds += (await cpuOf(pids.balancer)) - balancerBefore;
					tally.redisCommands += (await redisCommands(redis.client)) - commandsBefore - 1;
				}
			}
		}
		const rate = (tally: Tally) => tally.latencies.length / (tally.milliseconds / 1000);
		const rows = fronts.map((front, index) => [
			front.name,
			...PHASES.flatMap((_, phaseIndex) => {
				const tally = tallies[index]![phaseIndex]!;
				const perCall = (seconds: number) => (index === 0 ? '—' : `${Math.round((seconds * 1e6) / tally.latencies.length)} µs`);
				const commands = index === 0 ? '—' : (tally.redisCommands / tally.latencies.length).toFixed(3);
				return [ms(median(tally.latencies)), ms(percentile(tally.latencies, 99)), perSecond(rate(tally)), perCall(tally.cpuSeconds), index > 1 ? perCall(tally.balancerCpuSeconds) : '—', commands];
			}),
		]);
		const [, one, two, three] = tallies;
		const verdicts = PHASES.map(
			(phase, phaseIndex) =>
				`${phase.label}: 2 and 3 replicas at ${(rate(two![phaseIndex]!) / rate(one![phaseIndex]!)).toFixed(2)}× and ${(rate(three![phaseIndex]!) / rate(one![phaseIndex]!)).toFixed(2)}× one proxy's throughput, at ${(rate(one![phaseIndex]!) / rate(tallies[0]![phaseIndex]!)).toFixed(2)}× the bound for one`,
		);
		return [
			{
				title: `tools/call (echo) from a lean client (one 2025-06-18 session, round-robin over the replicas) to an HTTP server taking ${SERVER_DELAY_MS} ms per call: ${PHASES.map((phase) => `${phase.label} (${phase.calls.toLocaleString('en-US')} calls)`).join(', ')}, ${ROUNDS} alternating rounds; CPU per call of the workload's proxy processes (supervisor and replicas) and of HAProxy`,
				columns: ['front', ...PHASES.flatMap((phase) => [`${phase.label} p50`, 'p99', 'calls/s', 'proxies CPU/call', 'HAProxy CPU/call', 'Redis cmds/call'])],
				rows,
				verdicts,
			},
		];
	} finally {
		for (const front of fronts) {
			front.session.close();
			await front.stop();
		}
		server.stop();
		await redis.stop();
	}
}
