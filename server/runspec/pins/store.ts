/**
 * The pins of each workload, `<state>/pins/<name>.json`: per kind (tools, prompts) the approved
 * definitions and, per client capability set (capabilities.ts), what the proxy last saw the
 * server list to a client with that set. The proxy writes what it sees (and
 * the first pins); the workloads service approves (moves what was seen into the pins) and
 * removes the file with the workload. Kept in the state folder with the run configuration, so
 * that pins outlive restarts of the workload, of its proxy and of Hangar.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { JsonCollection, type Migrations } from '../../store/document.js';
import type { HangarPaths } from '../../store/paths.js';
import { NO_CAPABILITIES } from './capabilities.js';

export const FlagRecord = z.object({
	rule: z.enum(['hidden_unicode', 'model_directive', 'other_tools', 'credentials', 'home_path', 'long_description']),
	detail: z.string(),
});

/** One definition with its fingerprint and the flags found in it. */
export const PinnedItem = z.object({
	fingerprint: z.string(),
	definition: z.record(z.string(), z.unknown()),
	flags: z.array(FlagRecord).optional(),
	/** When it was pinned (approved or first seen); absent on what was only seen. */
	pinned_at: z.string().optional(),
});
export type PinnedItem = z.infer<typeof PinnedItem>;

/** The last list the proxy passed on to clients of one capability set (its first page onwards). */
export const Observation = z.object({
	at: z.string(),
	/** The list came whole (one page): a pinned name missing from it was removed. */
	complete: z.boolean(),
	items: z.record(z.string(), PinnedItem),
	/** Names the list carried more than once. */
	duplicates: z.array(z.string()).optional(),
	/** The pages of the set's first list are still coming: what they add is pinned on sight too. */
	initial: z.boolean().optional(),
});
export type Observation = z.infer<typeof Observation>;

export const KindPins = z.object({
	pinned: z.record(z.string(), PinnedItem),
	/** By capability set (capabilities.ts). */
	observed: z.record(z.string(), Observation),
});
export type KindPins = z.infer<typeof KindPins>;

export const WorkloadPins = z.object({
	tools: KindPins.optional(),
	prompts: KindPins.optional(),
});
export type WorkloadPins = z.infer<typeof WorkloadPins>;

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
		this.collection = new JsonCollection(join(paths.state, 'pins'), { schema: WorkloadPins, version: 2, migrations: MIGRATIONS });
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
