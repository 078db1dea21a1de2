/**
 * A workload's server instances (`scaling_config.backend_replicas`): how many containers it
 * runs and what they are called, known to the services that create them and to the proxy that
 * spreads sessions across them.
 */
import type { StoredWorkload } from './store.js';

/**
 * How many server containers a workload runs: `scaling_config.backend_replicas` for an HTTP
 * server in a container (the proxy spreads sessions across them), one otherwise.
 */
export function backendInstancesOf(workload: Pick<StoredWorkload, 'container_name' | 'transport' | 'remote_url' | 'scaling_config'>): number {
	if (!workload.container_name || workload.remote_url || workload.transport === 'stdio') return 1;
	return Math.max(1, workload.scaling_config?.backend_replicas ?? 1);
}

/** The container of server instance `replica` (1-based): the first keeps the workload's container name. */
export function instanceContainerName(workload: Pick<StoredWorkload, 'container_name'>, replica: number): string {
	return replica === 1 ? workload.container_name! : `${workload.container_name}-${replica}`;
}


/** Whether a stopped container comes back under its restart policy: the reconciler's rule, and the proxy's for further instances. */
export function comesBack(policy: StoredWorkload['restart_policy'] | undefined, exitCode: number | undefined): boolean {
	return policy === 'always' || policy === 'unless-stopped' || (policy === 'on-failure' && exitCode !== 0);
}
