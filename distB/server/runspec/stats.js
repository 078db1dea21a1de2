import { WorkloadStats } from '../../protocol/protocol.workloads.js';
export { MAX_STATS_WINDOW_SECONDS } from '../../protocol/protocol.workloads.js';
export const STATS_PATH = '/hangar/stats';
/** What the proxy answers: a workload's stats without its name. */
export const ProxyStats = WorkloadStats.omit({ name: true });
//# sourceMappingURL=stats.js.map