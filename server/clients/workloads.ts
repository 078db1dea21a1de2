/**
 * The port through which clients learn which workloads run. The workloads service provides
 * it and calls `ClientsService.syncWorkloads()` whenever a workload starts, stops, is deleted
 * or changes port.
 */

/** A running workload as client configs reference it. Provided by the workloads service. */
export interface WorkloadEndpoint {
	readonly name: string;
	readonly group: string;
	/** The proxy URL clients connect to (`http://127.0.0.1:PORT/mcp`, or `…/sse#name` for SSE). */
	readonly url: string;
	readonly transport: 'sse' | 'streamable-http';
	/** The group an aggregate (image `group://NAME`) serves; absent for any other workload. */
	readonly aggregates?: string;
}

/**
 * A group served by an aggregate among `workloads` is reached through it: the group's other
 * workloads (its members) are left out, so a client sees each member's tools once.
 */
export function throughAggregates(workloads: readonly WorkloadEndpoint[]): WorkloadEndpoint[] {
	const served = new Set(workloads.flatMap((workload) => (workload.aggregates === undefined ? [] : [workload.aggregates])));
	return workloads.filter((workload) => workload.aggregates !== undefined || !served.has(workload.group));
}

export interface RunningWorkloads {
	list(): Promise<WorkloadEndpoint[]>;
}
