/**
 * Assembles every area's services into one dispatcher. Each door creates one per process.
 */
import { operations } from '../protocol/index.js';
import { ClientsService, clientImplementations } from './clients/service.js';
import type { RunningWorkloads } from './clients/workloads.js';
import { Dispatcher } from './dispatch.js';
import type { Environment } from './environment.js';
import { groupImplementations } from './groups/service.js';
import { GroupStore } from './groups/store.js';
import { registryImplementations, RegistryService } from './registry/service.js';
import { secretImplementations, SecretsService } from './secrets/service.js';
import { systemImplementations } from './system.js';

export function createDispatcher(environment: Environment): Dispatcher {
	const groups = new GroupStore(environment.paths);
	const registries = new RegistryService(environment);
	const secrets = new SecretsService(environment);
	// No workloads service yet: nothing runs, so client configs gain no entries.
	const noRunningWorkloads: RunningWorkloads = { list: async () => [] };
	const clients = new ClientsService(environment, groups, noRunningWorkloads);
	return new Dispatcher(
		operations,
		[
			...systemImplementations(),
			...groupImplementations(groups),
			...clientImplementations(clients),
			...registryImplementations(registries),
			...secretImplementations(secrets),
		],
		environment.log,
	);
}
