/**
 * What Hangar remembers about clients besides group membership (which lives in the group
 * records): clients registered the legacy global way, per-project registrations, and the
 * ledger of entries Hangar wrote into each configuration file — the only entries it ever
 * updates or removes.
 */
import { join } from 'node:path';
import { recordSchemas } from '../runspec/records.generated.js';
import type { ClientsState, ManagedFile, ProjectRegistration } from '../runspec/records.js';
import { JsonDocument } from '../store/document.js';
import { jsonSchemaCheck } from '../store/jsonSchema.js';
import type { HangarPaths } from '../store/paths.js';

export type { ClientsState, ManagedFile, ProjectRegistration };

export function clientsStateDocument(paths: HangarPaths): JsonDocument<ClientsState> {
	return new JsonDocument(join(paths.state, 'clients.json'), { schema: jsonSchemaCheck<ClientsState>(recordSchemas.ClientsState), version: 1 }, () => ({
		global: [],
		projects: [],
		managed: [],
	}));
}
