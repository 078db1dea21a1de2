/**
 * What keeping client configs in sync costs: the hook the workloads service calls when a
 * workload's port moves, with every client registered, next to its physical floor (atomically
 * rewriting the same files with nothing else done); and one config edit per format, next to
 * the same library's plain parse-and-stringify (which would lose comments and layout).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { CLIENT_APPS } from '../../protocol/common.js';
import { readConfig } from '../../server/clients/configFile.js';
import { reconcile } from '../../server/clients/reconcile.js';
import { ClientsService } from '../../server/clients/service.js';
import { clientDefinition, CLIENT_TABLE, userConfigPath } from '../../server/clients/table.js';
import { Notifier } from '../../server/environment.js';
import { GroupStore } from '../../server/groups/store.js';
import { writeFileAtomic } from '../../server/store/atomic.js';
import { resolvePaths } from '../../server/store/paths.js';
import { median, ms, percentile, verdict } from '../stats.js';
const WORKLOADS = 10;
const SYNCS = 40;
const EDITS = 2_000;
const quiet = { debug() { }, info() { }, warn() { }, error() { } };
function workloads(port) {
    return Array.from({ length: WORKLOADS }, (_, index) => ({
        name: `server-${index}`,
        group: 'default',
        url: `http://127.0.0.1:${index === 0 ? port : 41000 + index}/mcp`,
        transport: 'streamable-http',
    }));
}
async function sync() {
    const root = await mkdtemp(join(tmpdir(), 'hangar-bench-clients-'));
    const home = join(root, 'home');
    const paths = resolvePaths({ HANGAR_HOME: join(root, 'hangar') });
    let running = workloads(40000);
    const clients = new ClientsService({ paths, log: quiet, notifier: new Notifier() }, new GroupStore(paths), { list: async () => running }, { home, platform: 'linux' });
    await clients.registerMany([...CLIENT_APPS], ['default']);
    const hook = [];
    for (let index = 1; index <= SYNCS; index++) {
        running = workloads(40000 + index);
        const started = performance.now();
        await clients.syncWorkloads();
        hook.push(performance.now() - started);
    }
    const files = await Promise.all(CLIENT_TABLE.map(async (client) => readConfig(userConfigPath(client, home, 'linux'))));
    const floor = [];
    for (let index = 0; index < SYNCS; index++) {
        const started = performance.now();
        for (const file of files)
            await writeFileAtomic(file.writePath, file.text);
        floor.push(performance.now() - started);
    }
    await rm(root, { recursive: true, force: true });
    return {
        title: `Sync hook: one workload's port moves, ${CLIENT_APPS.length} clients registered, ${WORKLOADS} workloads (median of ${SYNCS})`,
        columns: ['what', 'median', 'p90'],
        rows: [
            [`atomic rewrite of the ${CLIENT_APPS.length} files only (floor)`, ms(median(floor)), ms(percentile(floor, 90))],
            ['ClientsService.syncWorkloads()', ms(median(hook)), ms(percentile(hook, 90))],
        ],
        verdicts: [verdict('sync hook vs atomic rewrite floor', median(hook) / median(floor), 2)],
    };
}
/** Median time of `work`, run `count` times after a warm-up. */
async function time(count, work) {
    for (let index = 0; index < 50; index++)
        await work();
    const samples = [];
    for (let index = 0; index < count; index++) {
        const started = performance.now();
        await work();
        samples.push(performance.now() - started);
    }
    return median(samples);
}
async function edits() {
    const added = workloads(40000);
    const cases = [
        { client: 'claude-code', plain: (text) => JSON.stringify(JSON.parse(text), null, 2) },
        { client: 'goose', plain: (text) => stringifyYaml(parseYaml(text)) },
        { client: 'codex', plain: (text) => stringifyToml(parseToml(text)) },
    ];
    const rows = [];
    const ratios = [];
    for (const { client, plain } of cases) {
        const shape = clientDefinition(client).config;
        // A realistic file: the client's servers plus settings of the user's own.
        const text = (await reconcile('', shape, added, new Set())).text;
        const next = workloads(40001);
        const managed = new Set(added.map((workload) => workload.name));
        const edit = await time(EDITS, () => reconcile(text, shape, next, managed));
        const baseline = await time(EDITS, () => plain(text));
        ratios.push(edit / baseline);
        rows.push([`${client} (${shape.format})`, ms(baseline), ms(edit)]);
    }
    return {
        title: `One config edit: a workload's URL changes in a file of ${WORKLOADS} entries (median of ${EDITS.toLocaleString('en-US')})`,
        columns: ['file', 'parse + stringify (loses comments)', 'Hangar edit (keeps the file, re-parses to verify)'],
        rows,
        // An edit parses the file, scans it and parses the result again to verify it: a few parses' worth.
        verdicts: [verdict('worst edit vs parse + stringify', Math.max(...ratios), 15)],
    };
}
export async function clients() {
    return [await sync(), await edits()];
}
//# sourceMappingURL=clients.js.map