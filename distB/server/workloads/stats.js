/**
 * A running workload's call statistics, read from its proxy (see `runspec/stats.ts`).
 */
import { HangarError } from '../../protocol/errors.js';
import { ProxyStats, STATS_PATH } from '../runspec/stats.js';
import { clientUrlOf } from '../runspec/urls.js';
import { liveProxy } from './proxyProcess.js';
const STATS_TIMEOUT_MS = 5_000;
const DEFAULT_WINDOW_SECONDS = 10;
export async function readStats(store, config, window = DEFAULT_WINDOW_SECONDS, signal) {
    const proxy = await liveProxy(store, config.name);
    if (!proxy?.stats_token)
        throw HangarError.conflict(`workload ${config.name} is not running (its proxy counts the calls)`, 'not_running');
    const url = new URL(`${STATS_PATH}?window=${window}`, clientUrlOf(config));
    const timeout = AbortSignal.timeout(STATS_TIMEOUT_MS);
    let body;
    try {
        const response = await fetch(url, { headers: { Authorization: `Bearer ${proxy.stats_token}` }, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
        if (!response.ok)
            throw new Error(`HTTP ${response.status}`);
        body = await response.json();
    }
    catch (error) {
        signal?.throwIfAborted();
        throw new HangarError(503, `cannot read the statistics of workload ${config.name}: ${error.message}`);
    }
    return { name: config.name, ...ProxyStats.parse(body) };
}
//# sourceMappingURL=stats.js.map