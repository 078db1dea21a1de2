/**
 * Assembles every area's services into one dispatcher. Each door creates one per process.
 */
import { operations } from '../protocol/index.js';
import { Dispatcher } from './dispatch.js';
import type { Environment } from './environment.js';
import { groupImplementations } from './groups/service.js';
import { GroupStore } from './groups/store.js';
import { skillImplementations } from './skills/service.js';
import { systemImplementations } from './system.js';

export function createDispatcher(environment: Environment): Dispatcher {
	const groups = new GroupStore(environment.paths);
	return new Dispatcher(operations, [...systemImplementations(), ...groupImplementations(groups), ...skillImplementations()], environment.log);
}
