/**
 * Assembles every area's services into one dispatcher. Each door creates one per process.
 */
import { operations } from '../protocol/index.js';
import { Dispatcher } from './dispatch.js';
import type { Environment } from './environment.js';
import { groupImplementations } from './groups/service.js';
import { GroupStore } from './groups/store.js';
import { DockerRuntime } from './runtime/docker.js';
import { systemImplementations } from './system.js';
import { emptyCatalog, noClientSync, unconfiguredSecrets } from './workloads/dependencies.js';
import { withGroupRelease } from './workloads/groupRelease.js';
import { workloadImplementations } from './workloads/implementations.js';
import { WorkloadService } from './workloads/service.js';

export interface DispatcherOptions {
	/**
	 * Long-running doors (daemon, serve): repair workloads at start-up, and report status
	 * changes other processes make.
	 */
	readonly background?: boolean;
}

export function createDispatcher(environment: Environment, options: DispatcherOptions = {}): Dispatcher {
	const groups = new GroupStore(environment.paths);
	const runtime = new DockerRuntime();
	const workloads = new WorkloadService({
		environment,
		runtime,
		catalog: emptyCatalog,
		secrets: unconfiguredSecrets,
		clients: noClientSync,
		groups: { exists: async (name) => (await groups.find(name)) !== undefined },
	});
	if (options.background) {
		workloads.startReconcile();
		workloads.watchStatuses();
	}
	return new Dispatcher(
		operations,
		[...systemImplementations(runtime), ...withGroupRelease(groupImplementations(groups), groups, workloads), ...workloadImplementations(workloads)],
		environment.log,
	);
}
