/** Seconds of history a proxy keeps for `workloads/stats`. Without zod: the proxy, which counts them, does not load it. */
export const MAX_STATS_WINDOW_SECONDS = 60;
