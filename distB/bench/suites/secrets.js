/**
 * The secrets area's costs: deriving the store key with scrypt at each cost the store uses,
 * and the work per secret once the key is derived — writes over the daemon, and `resolve`,
 * which runs at every container start — each next to its floor: an RPC round trip that does
 * nothing, and reading and decrypting the store with no lock and no password lookup.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogger } from '../../server/log.js';
import { LIGHT_KDF, newKeyDerivation, open, seal, STRONG_KDF } from '../../server/secrets/sealed.js';
import { SecretsService } from '../../server/secrets/service.js';
import { resolvePaths } from '../../server/store/paths.js';
import { HANGAR, benchEnv, spawnRpc } from '../processes.js';
import { median, ms, percentile, timed, verdict } from '../stats.js';
const DERIVATIONS = 5;
const WRITES = 200;
const READS = 500;
async function derivation(params) {
    const samples = [];
    for (let index = 0; index < DERIVATIONS; index++) {
        const started = performance.now();
        await seal(new Map(), 'a password', newKeyDerivation(params)); // a fresh salt: nothing cached
        samples.push(performance.now() - started);
    }
    return samples;
}
async function keyDerivation() {
    const light = await derivation(LIGHT_KDF);
    const strong = await derivation(STRONG_KDF);
    const row = (label, params, samples) => [
        label,
        `N=2^${Math.log2(params.n)}, r=${params.r}, p=${params.p}`,
        `${(128 * params.n * params.r) / 1024 ** 2} MiB`,
        ms(median(samples)),
    ];
    return {
        title: `Encrypted store: scrypt key derivation, once per process and password (median of ${DERIVATIONS})`,
        columns: ['used for', 'parameters', 'memory', 'median'],
        rows: [row('generated keys (256 random bits)', LIGHT_KDF, light), row('passwords a person chose', STRONG_KDF, strong)],
        verdicts: [],
    };
}
async function perSecret() {
    const env = { ...benchEnv(), HANGAR_SECRETS_KEYRING: 'off' };
    const daemon = spawnRpc([HANGAR, 'daemon'], env);
    const send = (method, params) => daemon.connection.sendRequest(method, params);
    await send('initialize', { processId: process.pid, capabilities: {} });
    await send('secrets/setup', { provider_type: 'encrypted' });
    await timed(50, () => send('system/version', {}));
    const floorRpc = await timed(WRITES, () => send('system/version', {}));
    const creates = await timed(WRITES, (index) => send('secrets/create', { key: `key-${index}`, value: `value-${index}` }));
    await daemon.stop();
    const paths = resolvePaths(env);
    const secrets = new SecretsService({ paths, log: createLogger('bench', 'silent') }, env);
    await secrets.resolve('key-0');
    const resolves = await timed(READS, (index) => secrets.resolve(`key-${index % WRITES}`));
    const store = join(paths.data, 'secrets', 'store.enc');
    const password = (await readFile(join(paths.data, 'secrets', 'store.key'), 'utf8')).trim();
    const floorRead = await timed(READS, async () => open(await readFile(store), password));
    const row = (label, samples) => [label, ms(median(samples)), ms(percentile(samples, 99))];
    return {
        title: `Per secret, key already derived (${WRITES} writes, ${READS} reads, store of ${WRITES} secrets)`,
        columns: ['operation', 'p50', 'p99'],
        rows: [
            row('RPC round trip, system/version (floor)', floorRpc),
            row('secrets/create over the daemon', creates),
            row('read + decrypt the store, no lock (floor)', floorRead),
            row('SecretsService.resolve', resolves),
        ],
        verdicts: [verdict('resolve p50 vs read + decrypt', median(resolves) / median(floorRead), 4)],
    };
}
export async function secrets() {
    return [await keyDerivation(), await perSecret()];
}
//# sourceMappingURL=secrets.js.map