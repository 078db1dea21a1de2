/**
 * The network of a workload's container, as both the service (which creates it) and the
 * proxy (which serves its egress) see it.
 */
import type { StoredWorkload } from './store.js';

/**
 * Whether the container's outbound traffic is limited to the permission profile's allow-lists:
 * network isolation is on (the default) and the profile has outbound rules that do not allow all.
 */
export function isolatesNetwork(workload: StoredWorkload): boolean {
	const network = workload.permission_profile?.network;
	if (workload.isolate_network === false || !workload.container_name || network?.mode === 'none' || !network?.outbound) return false;
	return !network.outbound.insecure_allow_all;
}

/** The isolated network of a workload (one per workload, named like its container). */
export function networkNameOf(workload: StoredWorkload): string {
	return workload.container_name!;
}
