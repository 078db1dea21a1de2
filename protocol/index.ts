/**
 * The operation table: every management operation of Hangar, one row each, grouped by area.
 * Doors iterate `operations`; typed callers import the rows they need by name.
 */
import { rowsOf, type NotificationDefinition, type OperationDefinition } from './operation.js';
import * as catalog from './protocol.catalog.js';
import * as clients from './protocol.clients.js';
import * as groups from './protocol.groups.js';
import * as registries from './protocol.registries.js';
import * as secrets from './protocol.secrets.js';
import * as skills from './protocol.skills.js';
import * as system from './protocol.system.js';
import * as workloads from './protocol.workloads.js';

export * from './common.js';
export * from './errors.js';
export * from './manifest.js';
export * from './operation.js';
export * from './registryTypes.js';
export * from './runConfig.js';
export * from './protocol.catalog.js';
export * from './protocol.clients.js';
export * from './protocol.groups.js';
export * from './protocol.registries.js';
export * from './protocol.secrets.js';
export * from './protocol.skills.js';
export * from './protocol.system.js';
export * from './protocol.workloads.js';

function isNotification(value: unknown): value is NotificationDefinition {
	return typeof value === 'object' && value !== null && 'method' in value && !('rest' in value) && 'params' in value;
}

const areas = [system, groups, clients, registries, catalog, secrets, skills, workloads];

export const operations: readonly OperationDefinition[] = areas.flatMap(rowsOf);

export const notifications: readonly NotificationDefinition[] = areas.flatMap((area) =>
	Object.values(area).filter(isNotification),
);
