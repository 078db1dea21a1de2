/**
 * Registries: a search page over a 10,000-server registry through the daemon (target p50 ≤ 5 ms,
 * next to the daemon's bare round trip), and the cold load of the embedded registry in a fresh
 * process (target ≤ 30 ms, next to reading and parsing its file alone).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HANGAR, benchEnv, spawnRpc } from '../processes.js';
import { median, ms, percentile } from '../stats.js';
const SERVERS = 10_000;
const REQUESTS = 2_000;
const COLD_RUNS = 20;
const SEARCH_TARGET_MS = 5;
const COLD_TARGET_MS = 30;
const EMBEDDED_MODULE = fileURLToPath(new URL('../../server/registry/embedded.js', import.meta.url));
function target(label, value, limit) {
    return `${label}: ${ms(value)} (target ≤ ${limit} ms) — ${value <= limit ? 'met' : 'MISSED'}`;
}
/** A registry file in the upstream format with SERVERS servers; every tenth mentions "zebra". */
function writeBulkRegistry(folder) {
    const servers = Array.from({ length: SERVERS }, (_, index) => {
        const id = String(index).padStart(5, '0');
        return {
            name: `io.example.bench/server-${id}`,
            description: `Benchmark server ${id}${index % 10 === 0 ? ' (zebra)' : ''}`,
            version: '1.0.0',
            packages: [{ registryType: 'oci', identifier: `ghcr.io/example/bench-${id}:1.0.0`, transport: { type: 'stdio' } }],
        };
    });
    const path = join(folder, 'bench-registry.json');
    writeFileSync(path, JSON.stringify({ version: '1.0.0', meta: { last_updated: new Date().toISOString() }, data: { servers } }));
    return path;
}
async function latencies(request) {
    for (let index = 0; index < 200; index++)
        await request();
    const samples = [];
    for (let index = 0; index < REQUESTS; index++) {
        const started = performance.now();
        await request();
        samples.push(performance.now() - started);
    }
    return samples;
}
async function search() {
    const env = benchEnv();
    const registry = writeBulkRegistry(env.HANGAR_HOME);
    const daemon = spawnRpc([HANGAR, 'daemon'], env);
    const rpc = daemon.connection;
    await rpc.sendRequest('initialize', { processId: process.pid, capabilities: {} });
    await rpc.sendRequest('registries/list', {}); // the services and the embedded registry are loaded
    const loadStarted = performance.now();
    await rpc.sendRequest('registries/update', { name: 'default', local_path: registry });
    const loadMs = performance.now() - loadStarted;
    await rpc.sendRequest('registries/add', { name: 'builtin-copy', source: registry, priority: 2000 });
    const floor = await latencies(() => rpc.sendRequest('system/version', {}));
    const query = await latencies(() => rpc.sendRequest('catalog/listServers', { registryName: 'default', q: 'zebra', page: 3, limit: 50 }));
    const browse = await latencies(() => rpc.sendRequest('catalog/listServers', { registryName: 'default', page: 150, limit: 50 }));
    const spanning = await latencies(() => rpc.sendRequest('catalog/listServers', { registryName: 'all', q: 'ZEBRA', limit: 50 }));
    const lookup = await latencies(() => rpc.sendRequest('registries/getServer', { name: 'default', serverName: 'server-09999' }));
    await daemon.stop();
    const row = (label, samples) => [label, ms(median(samples)), ms(percentile(samples, 99))];
    return {
        title: `Registry search over ${SERVERS.toLocaleString('en-US')} servers via RPC (${REQUESTS.toLocaleString('en-US')} sequential requests)`,
        columns: ['request', 'p50', 'p99'],
        rows: [
            row('system/version (the daemon round trip)', floor),
            row('catalog/listServers q=zebra, page 3 of 50', query),
            row('catalog/listServers, page 150 of 50, no query', browse),
            row('catalog/listServers across "all" (2 registries, 20,000 servers)', spanning),
            row('registries/getServer by short name (legacy shape)', lookup),
            ['registries/update to the 10,000-server file (read, parse, index)', ms(loadMs), '-'],
        ],
        verdicts: [target('search page p50', median(query), SEARCH_TARGET_MS)],
    };
}
/** Runs `script` in a fresh Node process and returns the number it prints. */
function timeInFreshProcess(script) {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
        let output = '';
        child.stdout.on('data', (chunk) => (output += chunk.toString()));
        child.once('error', reject);
        child.once('exit', (code) => (code === 0 ? resolve(Number(output)) : reject(new Error(`timing script exited with ${code}`))));
    });
}
async function coldLoad() {
    const module = JSON.stringify(EMBEDDED_MODULE);
    const file = JSON.stringify(fileURLToPath(new URL('../../../server/registry/embedded/registry.json', import.meta.url)));
    const scripts = {
        parseOnly: `import { readFileSync } from 'node:fs'; const t = performance.now(); JSON.parse(readFileSync(${file}, 'utf8')); process.stdout.write(String(performance.now() - t));`,
        load: `const { embeddedCatalog } = await import(${module}); const t = performance.now(); embeddedCatalog(); process.stdout.write(String(performance.now() - t));`,
        importAndLoad: `const t = performance.now(); const { embeddedCatalog } = await import(${module}); embeddedCatalog(); process.stdout.write(String(performance.now() - t));`,
    };
    const runs = async (script) => {
        await timeInFreshProcess(script); // warm the file-system cache
        const samples = [];
        for (let index = 0; index < COLD_RUNS; index++)
            samples.push(await timeInFreshProcess(script));
        return samples;
    };
    const parseOnly = await runs(scripts.parseOnly);
    const load = await runs(scripts.load);
    const importAndLoad = await runs(scripts.importAndLoad);
    const row = (label, samples) => [label, ms(median(samples)), ms(percentile(samples, 90))];
    return {
        title: `Cold load of the embedded registry (fresh process each time, median of ${COLD_RUNS})`,
        columns: ['step', 'median', 'p90'],
        rows: [
            row('read + JSON.parse of registry.json alone', parseOnly),
            row('embeddedCatalog(): read, parse, validate, index', load),
            row('import the registry modules, then embeddedCatalog()', importAndLoad),
        ],
        verdicts: [target('embedded registry load', median(load), COLD_TARGET_MS)],
    };
}
export async function registry() {
    return [await search(), await coldLoad()];
}
//# sourceMappingURL=registry.js.map