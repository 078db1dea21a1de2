/**
 * A running workload's call statistics, read from its proxy (see `runspec/stats.ts`).
 */
import { HangarError } from '../../protocol/errors.js';
import { WorkloadStats } from '../../protocol/protocol.workloads.js';
import { STATS_PATH } from '../runspec/stats.js';
import type { StoredWorkload, WorkloadStore } from '../runspec/store.js';
import { clientUrlOf } from '../runspec/urls.js';
import { liveProxy } from './liveProxy.js';

const STATS_TIMEOUT_MS = 5_000;
const DEFAULT_WINDOW_SECONDS = 10;
/** What the proxy answers (runspec/stats.ts). */
const ProxyStats = WorkloadStats.omit({ name: true });

export async function readStats(store: WorkloadStore, config: StoredWorkload, window = DEFAULT_WINDOW_SECONDS, signal?: AbortSignal): Promise<WorkloadStats> {
	const proxy = await liveProxy(store, config.name);
	if (!proxy?.stats_token) throw HangarError.conflict(`workload ${config.name} is not running (its proxy counts the calls)`, 'not_running');
	const url = new URL(`${STATS_PATH}?window=${window}`, clientUrlOf(config));
	const timeout = AbortSignal.timeout(STATS_TIMEOUT_MS);
	let body: unknown;
	try {
		const response = await fetch(url, { headers: { Authorization: `Bearer ${proxy.stats_token}` }, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
		if (!response.ok) throw new Error(`HTTP ${response.status}`);
		body = await response.json();
	} catch (error) {
		signal?.throwIfAborted();
		throw new HangarError(503, `cannot read the statistics of workload ${config.name}: ${(error as Error).message}`);
	}
	return { name: config.name, ...ProxyStats.parse(body) };
}
