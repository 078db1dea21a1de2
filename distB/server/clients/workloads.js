/**
 * The port through which clients learn which workloads run. The workloads service provides
 * it and calls `ClientsService.syncWorkloads()` whenever a workload starts, stops, is deleted
 * or changes port.
 */
export {};
//# sourceMappingURL=workloads.js.map