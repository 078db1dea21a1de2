/**
 * How the services read a proxy's call statistics: `GET STATS_PATH?window=N` on the proxy's
 * port with `Authorization: Bearer <stats_token>`, the token the proxy put in its record (a file
 * only the user can read), so other local users cannot watch a workload's calls.
 */
import type { WorkloadStats } from '../../protocol/protocol.workloads.js';

export { MAX_STATS_WINDOW_SECONDS } from '../../protocol/statsWindow.js';

export const STATS_PATH = '/hangar/stats';

/** What the proxy answers: a workload's stats without its name. */
export type ProxyStats = Omit<WorkloadStats, 'name'>;
