/**
 * Installed-skill records (`<state>/skills/installed/`), one document per skill, scope and
 * project: what was installed from where, at which digest, into which folders for which
 * clients, and exactly which files were written there.
 */
import { join } from 'node:path';
import type { Scope } from '../../protocol/common.js';
import type { InstalledSkill } from '../../protocol/protocol.skills.js';
import { recordSchemas } from '../runspec/records.generated.js';
import type { SkillRecord } from '../runspec/records.js';
import { sha256Hex } from '../hash.js';
import { JsonCollection } from '../store/document.js';
import { jsonSchemaCheck } from '../store/jsonSchema.js';
import type { HangarPaths } from '../store/paths.js';
import type { Placement } from './targets.js';

export type { SkillRecord };

/** The key of a record: scope, project and name. */
export function recordKey(placement: Placement, name: string): string {
	if (placement.scope === 'user') return `user/${name}`;
	const project = sha256Hex(placement.projectRoot).slice(0, 16);
	return `project/${project}/${name}`;
}

export class SkillRecords {
	private readonly collection: JsonCollection<SkillRecord>;

	constructor(paths: HangarPaths) {
		this.collection = new JsonCollection(join(paths.state, 'skills', 'installed'), { schema: jsonSchemaCheck<SkillRecord>(recordSchemas.SkillRecord), version: 1 });
	}

	get(placement: Placement, name: string): Promise<SkillRecord | undefined> {
		return this.collection.get(recordKey(placement, name));
	}

	list(): Promise<SkillRecord[]> {
		return this.collection.list();
	}

	async put(record: SkillRecord): Promise<void> {
		const key = recordKey({ scope: record.scope, projectRoot: record.project_root }, record.name);
		await this.collection.change(key, () => record);
	}

	async update(placement: Placement, name: string, change: (record: SkillRecord) => SkillRecord): Promise<SkillRecord | undefined> {
		return this.collection.update(recordKey(placement, name), change);
	}

	async delete(placement: Placement, name: string): Promise<void> {
		await this.collection.delete(recordKey(placement, name));
	}
}

export function placementOfRecord(record: SkillRecord): Placement {
	return { scope: record.scope as Scope, projectRoot: record.project_root };
}

/** A record as the API shows it (spec 2.11). */
export function toInstalledSkill(record: SkillRecord): InstalledSkill {
	return {
		metadata: {
			name: record.name,
			...(record.description !== undefined && { description: record.description }),
			...(record.version !== undefined && { version: record.version }),
			...(record.author !== undefined && { author: record.author }),
			tags: record.tags ?? [],
		},
		scope: record.scope,
		project_root: record.project_root,
		reference: record.reference,
		...(record.tag !== undefined && { tag: record.tag }),
		digest: record.digest,
		status: 'installed',
		installed_at: record.installed_at,
		clients: record.folders.flatMap((folder) => folder.clients),
		dependencies: record.dependencies,
		managed: record.managed,
	};
}
