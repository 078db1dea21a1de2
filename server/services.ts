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
import { SkillService, skillImplementations, type SkillCatalog } from './skills/service.js';
import { systemImplementations } from './system.js';

export function createDispatcher(environment: Environment): Dispatcher {
	const groups = new GroupStore(environment.paths);
	// No workloads service yet: nothing runs, so client configs gain no entries. The lead replaces
	// this with the workloads service, which also calls `clients.syncWorkloads()` on every change.
	const noRunningWorkloads: RunningWorkloads = { list: async () => [] };
	const clients = new ClientsService(environment, groups, noRunningWorkloads);
	// Registry-name skill installs: the registries service answers `findSkill`; until the lead
	// wires it, names resolve only to local builds.
	const noCatalog: SkillCatalog = { findSkill: async () => undefined };
	const skills = new SkillService(environment, groups, noCatalog);
	return new Dispatcher(
		operations,
		[...systemImplementations(), ...groupImplementations(groups), ...clientImplementations(clients), ...skillImplementations(skills)],
		environment.log,
	);
}
