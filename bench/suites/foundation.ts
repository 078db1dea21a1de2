/**
 * The doors' own cost: daemon start-up, RPC round trips and REST throughput, each next to
 * its physical limit measured in the same run (`node -e 0`, a bare vscode-jsonrpc server, a
 * bare node:http server).
 */
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { HANGAR, benchEnv, peer, runHangar, spawnHttp, spawnRpc } from '../processes.js';
import { median, ms, percentile, perSecond, verdict, type Table } from '../stats.js';

const SPAWNS = 20;
const ROUND_TRIPS = 3_000;
const REST_SECONDS = 3;
const REST_CONCURRENCY = 16;

/** Spawn → exit of `node ARGS` (stdout read and dropped). */
async function timeRun(args: readonly string[], env: NodeJS.ProcessEnv = benchEnv()): Promise<number> {
	const started = performance.now();
	const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
	child.stdout.resume();
	await new Promise((resolve) => child.once('exit', resolve));
	return performance.now() - started;
}

const timeNodeStart = () => timeRun(['-e', '0']);

/** Spawn → `initialize` answered, and optionally → a first real request answered too. */
async function timeInitialize(args: readonly string[], env: NodeJS.ProcessEnv, firstRequest?: string): Promise<number> {
	const started = performance.now();
	const server = spawnRpc(args, env);
	await server.connection.sendRequest('initialize', { processId: process.pid, capabilities: {} });
	if (firstRequest) await server.connection.sendRequest(firstRequest, {});
	const elapsed = performance.now() - started;
	await server.stop();
	return elapsed;
}

async function samples(count: number, measure: () => Promise<number>): Promise<number[]> {
	await measure(); // warm the file-system cache
	const results: number[] = [];
	for (let index = 0; index < count; index++) results.push(await measure());
	return results;
}

/**
 * The daemon's start as an editor's next window meets it: one home for all starts, so each
 * reads the code cache the first one wrote; one row shows the start without it.
 */
async function startup(): Promise<Table> {
	const env = benchEnv();
	const node = await samples(SPAWNS, timeNodeStart);
	const bare = await samples(SPAWNS, () => timeInitialize([peer('bare-jsonrpc')], env));
	const hangar = await samples(SPAWNS, () => timeInitialize([HANGAR, 'daemon'], env));
	const firstCall = await samples(SPAWNS, () => timeInitialize([HANGAR, 'daemon'], env, 'groups/list'));
	const uncached = await samples(SPAWNS, () => timeInitialize([HANGAR, 'daemon'], { ...env, NODE_DISABLE_COMPILE_CACHE: '1' }));
	return {
		title: `Daemon start: spawn → initialize answered (median of ${SPAWNS})`,
		columns: ['process', 'min', 'median', 'p90'],
		rows: [
			['node -e 0 (exits)', ms(Math.min(...node)), ms(median(node)), ms(percentile(node, 90))],
			['bare vscode-jsonrpc server', ms(Math.min(...bare)), ms(median(bare)), ms(percentile(bare, 90))],
			['hangar daemon', ms(Math.min(...hangar)), ms(median(hangar)), ms(percentile(hangar, 90))],
			['hangar daemon, then groups/list answered', ms(Math.min(...firstCall)), ms(median(firstCall)), ms(percentile(firstCall, 90))],
			['hangar daemon, no code cache', ms(Math.min(...uncached)), ms(median(uncached)), ms(percentile(uncached, 90))],
		],
		verdicts: [verdict('hangar daemon vs bare vscode-jsonrpc', median(hangar) / median(bare), 1.5)],
	};
}

/** The everyday commands, each as `hangar ARGS…`; info and logs read a stored workload. */
const EVERYDAY: readonly (readonly string[])[] = [
	['version'],
	['--help'],
	['ls'],
	['info', 'bench-remote'],
	['logs', 'bench-remote'],
	['client', 'ls'],
	['skill', 'ls'],
	['group', 'ls'],
];
/** What a shell's completion asks for `hangar info <TAB>`: the workload names. */
const COMPLETION = ['__complete', 'info', ''];

/**
 * The CLI's own start, each everyday command and completion against `node -e 0`, the samples of
 * all of them taken in turns (one of each per round) so that a busy machine slows them alike.
 * One home holds a remote workload (its server unreachable, so no proxy stays up) for `info` and
 * `logs` (which answers that a remote workload has no container logs: the same loading and
 * look-up). The first run of each (warming the file-system cache) writes the code cache that
 * the others read, as a user's second command does; one row shows `ls` without it.
 */
async function cliStartup(): Promise<Table> {
	const env = benchEnv();
	await runHangar(['run', 'http://127.0.0.1:9/mcp', '--name', 'bench-remote'], env).catch(() => undefined); // stored, in error
	const timeIn = (args: readonly string[]) => timeRun(args, env);
	const runs: { label: string; measure: () => Promise<number>; limit?: number }[] = [
		{ label: 'node -e 0', measure: timeNodeStart, limit: 1 },
		...EVERYDAY.map((args) => ({ label: `hangar ${args.join(' ')}`, measure: () => timeIn([HANGAR, ...args]), limit: 1.5 })),
		{ label: `hangar ${COMPLETION.join(' ')}'' (completion)`, measure: () => timeIn([HANGAR, ...COMPLETION]), limit: 1.3 },
		// What the first run of a build costs, before the code cache is written (no target).
		{ label: 'hangar ls, no code cache', measure: () => timeRun([HANGAR, 'ls'], { ...env, NODE_DISABLE_COMPILE_CACHE: '1' }) },
	];
	const samplesOf = runs.map((): number[] => []);
	for (const run of runs) await run.measure(); // warm the file-system cache
	for (let round = 0; round < SPAWNS; round++) {
		for (const [index, run] of runs.entries()) samplesOf[index]!.push(await run.measure());
	}
	await runHangar(['rm', 'bench-remote'], env).catch(() => undefined);
	const node = median(samplesOf[0]!);
	return {
		title: `CLI start: spawn → exit (${SPAWNS} runs each, in turns)`,
		columns: ['process', 'min', 'median', 'median vs node -e 0'],
		rows: runs.map((run, index) => [run.label, ms(Math.min(...samplesOf[index]!)), ms(median(samplesOf[index]!)), `${(median(samplesOf[index]!) / node).toFixed(2)}×`]),
		verdicts: runs.flatMap((run, index) => (index > 0 && run.limit !== undefined ? [verdict(`${run.label} vs node -e 0`, median(samplesOf[index]!) / node, run.limit)] : [])),
	};
}

async function roundTrips(args: readonly string[], method: string): Promise<{ p50: number; p99: number; rate: number }> {
	const server = spawnRpc(args, benchEnv());
	await server.connection.sendRequest('initialize', { processId: process.pid, capabilities: {} });
	for (let index = 0; index < 300; index++) await server.connection.sendRequest(method, {});
	const latencies: number[] = [];
	const started = performance.now();
	for (let index = 0; index < ROUND_TRIPS; index++) {
		const sent = performance.now();
		await server.connection.sendRequest(method, {});
		latencies.push(performance.now() - sent);
	}
	const seconds = (performance.now() - started) / 1000;
	await server.stop();
	return { p50: median(latencies), p99: percentile(latencies, 99), rate: ROUND_TRIPS / seconds };
}

async function rpc(): Promise<Table> {
	const bare = await roundTrips([peer('bare-jsonrpc')], 'echo');
	// A call that stays in Hangar (it reads the groups file): system/version asks the engine.
	const hangar = await roundTrips([HANGAR, 'daemon'], 'groups/list');
	return {
		title: `Sequential RPC round trip (${ROUND_TRIPS.toLocaleString('en-US')} requests)`,
		columns: ['server', 'p50', 'p99', 'throughput'],
		rows: [
			['bare vscode-jsonrpc (echo)', ms(bare.p50), ms(bare.p99), perSecond(bare.rate)],
			['hangar daemon (groups/list)', ms(hangar.p50), ms(hangar.p99), perSecond(hangar.rate)],
		],
		verdicts: [verdict('hangar p50 vs bare', hangar.p50 / bare.p50, 1.3)],
	};
}

/** Requests per second with REST_CONCURRENCY keep-alive clients for REST_SECONDS. */
async function load(url: string): Promise<number> {
	const agent = new Agent({ keepAlive: true, maxSockets: REST_CONCURRENCY });
	const get = () =>
		new Promise<void>((resolve, reject) => {
			request(url, { agent }, (response) => {
				response.resume();
				response.once('end', resolve);
			})
				.once('error', reject)
				.end();
		});
	const run = async (seconds: number) => {
		const deadline = performance.now() + seconds * 1000;
		let completed = 0;
		await Promise.all(
			Array.from({ length: REST_CONCURRENCY }, async () => {
				while (performance.now() < deadline) {
					await get();
					completed++;
				}
			}),
		);
		return completed / seconds;
	};
	await run(0.5); // warm up connections and the JIT
	const rate = await run(REST_SECONDS);
	agent.destroy();
	return rate;
}

async function rest(): Promise<Table> {
	const bare = await spawnHttp([peer('bare-http')]);
	const bareRate = await load(`${bare.url}/`);
	bare.stop();
	const hangar = await spawnHttp([HANGAR, 'serve', '--port', '0'], benchEnv());
	// As over RPC, a route that stays in Hangar: the version route asks the engine.
	const hangarRate = await load(`${hangar.url}/api/v1beta/groups`);
	hangar.stop();
	return {
		title: `REST GET throughput (${REST_CONCURRENCY} keep-alive clients, ${REST_SECONDS} s)`,
		columns: ['server', 'throughput'],
		rows: [
			['bare node:http', perSecond(bareRate)],
			['hangar serve (GET /api/v1beta/groups)', perSecond(hangarRate)],
		],
		verdicts: [verdict('hangar throughput vs bare', hangarRate / bareRate, 1 / 1.5, true)],
	};
}

export async function foundation(): Promise<Table[]> {
	return [await startup(), await cliStartup(), await rpc(), await rest()];
}
