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

export interface RunningWorkloads {
	list(): Promise<WorkloadEndpoint[]>;
}
