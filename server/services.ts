/**
 * Assembles every area's services into one dispatcher. Each door creates one per process.
 */
import { operations } from '../protocol/index.js';
import { ClientsService, clientImplementations } from './clients/service.js';
import { Dispatcher } from './dispatch.js';
import type { Environment } from './environment.js';
import { groupImplementations } from './groups/service.js';
import { GroupStore } from './groups/store.js';
import { registryImplementations, RegistryService } from './registry/service.js';
import { secretImplementations, SecretsService } from './secrets/service.js';
import { DockerRuntime } from './runtime/docker.js';
import { SkillService, skillImplementations } from './skills/service.js';
import { systemImplementations } from './system.js';
import { workloadImplementations } from './workloads/implementations.js';
import { WorkloadService } from './workloads/service.js';
import { TelemetryDefault } from './workloads/telemetryDefault.js';
import { operationTracing, type Door } from './telemetry/operations.js';

export interface DispatcherOptions {
	/**
	 * The long-running door (daemon, serve) this is for: it repairs workloads at start-up,
	 * reports status changes other processes make, and traces its operations when Hangar's
	 * global telemetry default turns tracing on.
	 */
	readonly door?: Door;
}

export function createDispatcher(environment: Environment, options: DispatcherOptions = {}): Dispatcher {
	const groups = new GroupStore(environment.paths);
	const registries = new RegistryService(environment);
	const secrets = new SecretsService(environment);
	const runtime = new DockerRuntime();
	// Clients list the running workloads; workloads tell clients when that list changes.
	let clients: ClientsService | undefined;
	const workloads = new WorkloadService({
		environment,
		runtime,
		catalog: registries,
		secrets,
		clients: { syncWorkloads: async () => clients?.syncWorkloads() },
		groups: { exists: async (name) => (await groups.find(name)) !== undefined },
	});
	clients = new ClientsService(environment, groups, { list: () => workloads.listEndpoints() });
	const skills = new SkillService(environment, groups, registries);
	if (options.door) {
		workloads.startReconcile();
		workloads.watchStatuses();
	}
	const dispatcher = new Dispatcher(
		operations,
		[
			...systemImplementations(runtime),
			...groupImplementations(groups, (name, withWorkloads) => workloads.releaseGroup(name, withWorkloads)),
			...clientImplementations(clients),
			...registryImplementations(registries),
			...secretImplementations(secrets),
			...skillImplementations(skills),
			...workloadImplementations(workloads),
		],
		environment.log,
	);
	dispatcher.waitOnClose(() => workloads.idle());
	if (options.door) {
		const door = options.door;
		dispatcher.intercept(
			new TelemetryDefault(environment.paths)
				.get()
				.then((config) => operationTracing(config, door))
				.catch((error: Error) => {
					environment.log.warn(`the ${door}'s operations are not traced: ${error.message}`);
					return undefined;
				}),
		);
	}
	return dispatcher;
}
