/**
 * The doors' own cost: daemon start-up, RPC round trips and REST throughput, each next to
 * its physical limit measured in the same run (`node -e 0`, a bare vscode-jsonrpc server, a
 * bare node:http server).
 */
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { HANGAR, benchEnv, peer, spawnHttp, spawnRpc } from '../processes.js';
import { median, ms, percentile, perSecond, verdict } from '../stats.js';
const SPAWNS = 20;
const ROUND_TRIPS = 3_000;
const REST_SECONDS = 3;
const REST_CONCURRENCY = 16;
/** Spawn → exit of `node ARGS` (stdout read and dropped). */
async function timeRun(args) {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env: benchEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.resume();
    await new Promise((resolve) => child.once('exit', resolve));
    return performance.now() - started;
}
const timeNodeStart = () => timeRun(['-e', '0']);
/** Spawn → `initialize` answered, and optionally → a first real request answered too. */
async function timeInitialize(args, firstRequest) {
    const started = performance.now();
    const server = spawnRpc(args, benchEnv());
    await server.connection.sendRequest('initialize', { processId: process.pid, capabilities: {} });
    if (firstRequest)
        await server.connection.sendRequest(firstRequest, {});
    const elapsed = performance.now() - started;
    await server.stop();
    return elapsed;
}
async function samples(count, measure) {
    await measure(); // warm the file-system cache
    const results = [];
    for (let index = 0; index < count; index++)
        results.push(await measure());
    return results;
}
async function startup() {
    const node = await samples(SPAWNS, timeNodeStart);
    const bare = await samples(SPAWNS, () => timeInitialize([peer('bare-jsonrpc')]));
    const hangar = await samples(SPAWNS, () => timeInitialize([HANGAR, 'daemon']));
    const firstCall = await samples(SPAWNS, () => timeInitialize([HANGAR, 'daemon'], 'groups/list'));
    return {
        title: `Daemon start: spawn → initialize answered (median of ${SPAWNS})`,
        columns: ['process', 'median', 'p90'],
        rows: [
            ['node -e 0 (exits)', ms(median(node)), ms(percentile(node, 90))],
            ['bare vscode-jsonrpc server', ms(median(bare)), ms(percentile(bare, 90))],
            ['hangar daemon', ms(median(hangar)), ms(percentile(hangar, 90))],
            ['hangar daemon, then groups/list answered', ms(median(firstCall)), ms(percentile(firstCall, 90))],
        ],
        verdicts: [verdict('hangar daemon vs bare vscode-jsonrpc', median(hangar) / median(bare), 1.5)],
    };
}
/** The CLI's own start: commands are loaded lazily, so help and version load almost nothing. */
async function cliStartup() {
    const node = await samples(SPAWNS, timeNodeStart);
    const help = await samples(SPAWNS, () => timeRun([HANGAR, '--help']));
    const version = await samples(SPAWNS, () => timeRun([HANGAR, 'version']));
    const groups = await samples(SPAWNS, () => timeRun([HANGAR, 'group', 'ls']));
    return {
        title: `CLI start: spawn → exit (median of ${SPAWNS})`,
        columns: ['process', 'median', 'p90'],
        rows: [
            ['node -e 0', ms(median(node)), ms(percentile(node, 90))],
            ['hangar --help', ms(median(help)), ms(percentile(help, 90))],
            ['hangar version', ms(median(version)), ms(percentile(version, 90))],
            ['hangar group ls (loads the services)', ms(median(groups)), ms(percentile(groups, 90))],
        ],
        verdicts: [
            verdict('hangar --help vs node -e 0', median(help) / median(node), 1.5),
            verdict('hangar version vs node -e 0', median(version) / median(node), 1.5),
        ],
    };
}
async function roundTrips(args, method) {
    const server = spawnRpc(args, benchEnv());
    await server.connection.sendRequest('initialize', { processId: process.pid, capabilities: {} });
    for (let index = 0; index < 300; index++)
        await server.connection.sendRequest(method, {});
    const latencies = [];
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
async function rpc() {
    const bare = await roundTrips([peer('bare-jsonrpc')], 'echo');
    const hangar = await roundTrips([HANGAR, 'daemon'], 'system/version');
    return {
        title: `Sequential RPC round trip (${ROUND_TRIPS.toLocaleString('en-US')} requests)`,
        columns: ['server', 'p50', 'p99', 'throughput'],
        rows: [
            ['bare vscode-jsonrpc (echo)', ms(bare.p50), ms(bare.p99), perSecond(bare.rate)],
            ['hangar daemon (system/version)', ms(hangar.p50), ms(hangar.p99), perSecond(hangar.rate)],
        ],
        verdicts: [verdict('hangar p50 vs bare', hangar.p50 / bare.p50, 1.3)],
    };
}
/** Requests per second with REST_CONCURRENCY keep-alive clients for REST_SECONDS. */
async function load(url) {
    const agent = new Agent({ keepAlive: true, maxSockets: REST_CONCURRENCY });
    const get = () => new Promise((resolve, reject) => {
        request(url, { agent }, (response) => {
            response.resume();
            response.once('end', resolve);
        })
            .once('error', reject)
            .end();
    });
    const run = async (seconds) => {
        const deadline = performance.now() + seconds * 1000;
        let completed = 0;
        await Promise.all(Array.from({ length: REST_CONCURRENCY }, async () => {
            while (performance.now() < deadline) {
                await get();
                completed++;
            }
        }));
        return completed / seconds;
    };
    await run(0.5); // warm up connections and the JIT
    const rate = await run(REST_SECONDS);
    agent.destroy();
    return rate;
}
async function rest() {
    const bare = await spawnHttp([peer('bare-http')]);
    const bareRate = await load(`${bare.url}/`);
    bare.stop();
    const hangar = await spawnHttp([HANGAR, 'serve', '--port', '0'], benchEnv());
    const hangarRate = await load(`${hangar.url}/api/v1beta/version`);
    hangar.stop();
    return {
        title: `REST GET throughput (${REST_CONCURRENCY} keep-alive clients, ${REST_SECONDS} s)`,
        columns: ['server', 'throughput'],
        rows: [
            ['bare node:http', perSecond(bareRate)],
            ['hangar serve (GET /api/v1beta/version)', perSecond(hangarRate)],
        ],
        verdicts: [verdict('hangar throughput vs bare', hangarRate / bareRate, 1 / 1.5, true)],
    };
}
export async function foundation() {
    return [await startup(), await cliStartup(), await rpc(), await rest()];
}
//# sourceMappingURL=foundation.js.map