/**
 * Installed-skill records (`<state>/skills/installed/`), one document per skill, scope and
 * project: what was installed from where, at which digest, into which folders for which
 * clients, and exactly which files were written there.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import type { Scope } from '../../protocol/common.js';
import type { InstalledSkill } from '../../protocol/protocol.skills.js';
import { JsonCollection } from '../store/document.js';
import type { HangarPaths } from '../store/paths.js';
import type { Placement } from './targets.js';

export const SkillRecord = z.object({
	name: z.string(),
	scope: z.enum(['user', 'project']),
	project_root: z.string(),
	/** What the user asked for (a name, a reference), re-resolved by upgrade. */
	source: z.string(),
	/** The resolved reference: `registry/repo:tag`, `git://host/owner/repo@ref#path`, a local tag. */
	reference: z.string(),
	tag: z.string().optional(),
	/** OCI digest or git commit. */
	digest: z.string(),
	/** A reference to exactly this content (`repo@digest`, `git://…@commit#path`). */
	pinned: z.string(),
	/** The reference can resolve to other content later (a tag or branch). */
	movable: z.boolean(),
	/** Digest of the files (files.ts `contentDigest`): always for project scope, where the lock file pins it. */
	content_digest: z.string().optional(),
	version: z.string().optional(),
	description: z.string().optional(),
	license: z.string().optional(),
	author: z.string().optional(),
	tags: z.array(z.string()).optional(),
	installed_at: z.string(),
	/** One entry per folder written, with the clients reading it there. */
	folders: z.array(z.object({ path: z.string(), clients: z.array(z.string()) })),
	/** Paths of the files written into every folder, relative to it. */
	files: z.array(z.string()),
	dependencies: z.array(z.object({ name: z.string(), reference: z.string(), digest: z.string() })),
	/** Skills (same scope and project) that require this one. */
	required_by: z.array(z.string()),
	/** Installed by request, not only as a dependency. */
	explicit: z.boolean(),
	/** Recorded in the project's lock file. */
	managed: z.boolean(),
	/**
	 * Installed from a local repository (`git+file://`), which only development mode allows:
	 * the skill's later sync and upgrade may read that repository without `HANGAR_DEV`.
	 */
	allow_local: z.boolean().optional(),
});
export type SkillRecord = z.infer<typeof SkillRecord>;

/** The key of a record: scope, project and name. */
export function recordKey(placement: Placement, name: string): string {
	if (placement.scope === 'user') return `user/${name}`;
	const project = createHash('sha256').update(placement.projectRoot).digest('hex').slice(0, 16);
	return `project/${project}/${name}`;
}

export class SkillRecords {
	private readonly collection: JsonCollection<SkillRecord>;

	constructor(paths: HangarPaths) {
		this.collection = new JsonCollection(join(paths.state, 'skills', 'installed'), { schema: SkillRecord, version: 1 });
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
