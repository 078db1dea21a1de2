/**
 * The pins of each workload, `<state>/pins/<name>.json`: per kind (tools, prompts) the approved
 * definitions and, per client capability set (capabilities.ts), what the proxy last saw the
 * server list to a client with that set. The proxy writes what it sees (and
 * the first pins); the workloads service approves (moves what was seen into the pins) and
 * removes the file with the workload. Kept in the state folder with the run configuration, so
 * that pins outlive restarts of the workload, of its proxy and of Hangar.
 */
import { join } from 'node:path';
import { JsonCollection, type Migrations } from '../../store/document.js';
import { jsonSchemaCheck } from '../../store/jsonSchema.js';
import type { HangarPaths } from '../../store/paths.js';
import { NO_CAPABILITIES } from './capabilities.js';
import { recordSchemas } from '../records.generated.js';
import type { WorkloadPins } from '../records.js';

export type { KindPins, Observation, PinnedItem, WorkloadPins } from '../records.js';


/**
 * Version 1 kept one observation per kind, of whichever client listed last. It becomes the
 * observation of a client without capabilities: the sets with more are pinned on first sight,
 * except for a name it saw unpinned (a new tool stays new).
 */
const MIGRATIONS: Migrations = {
	1: (document) => {
		const migrated: Record<string, unknown> = { ...document };
		for (const kind of ['tools', 'prompts']) {
			const record = document[kind] as { pinned: unknown; observed?: unknown } | undefined;
			if (record) migrated[kind] = { pinned: record.pinned, observed: record.observed ? { [NO_CAPABILITIES]: record.observed } : {} };
		}
		return migrated;
	},
};

export class PinStore {
	readonly collection: JsonCollection<WorkloadPins>;

	constructor(paths: HangarPaths) {
		this.collection = new JsonCollection(join(paths.state, 'pins'), { schema: jsonSchemaCheck<WorkloadPins>(recordSchemas.WorkloadPins), version: 2, migrations: MIGRATIONS });
	}

	/** The file a workload's pins are in (what the proxy watches). */
	fileName(name: string): string {
		return `${encodeURIComponent(name)}.json`;
	}

	get(name: string): Promise<WorkloadPins | undefined> {
		return this.collection.get(name);
	}

	/** See `JsonCollection.change`. */
	change(name: string, decide: (current: WorkloadPins | undefined) => WorkloadPins | undefined): Promise<boolean> {
		return this.collection.change(name, decide);
	}

	async remove(name: string): Promise<void> {
		await this.collection.delete(name);
	}
}
