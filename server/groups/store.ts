/**
 * Group records on disk (`<state>/groups/<name>.json`). Clients and skills record their
 * membership here; `default` exists even before anything was written to it.
 */
import { join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import { recordSchemas } from '../runspec/records.generated.js';
import type { StoredGroup } from '../runspec/records.js';
import { JsonCollection } from '../store/document.js';
import { jsonSchemaCheck } from '../store/jsonSchema.js';
import type { HangarPaths } from '../store/paths.js';
import { compareNames } from '../order.js';

export type { StoredGroup };

export const DEFAULT_GROUP = 'default';

const emptyGroup = (name: string): StoredGroup => ({ name, registered_clients: [], skills: [] });

export class GroupStore {
	private readonly collection: JsonCollection<StoredGroup>;

	constructor(paths: HangarPaths) {
		this.collection = new JsonCollection(join(paths.state, 'groups'), { schema: jsonSchemaCheck<StoredGroup>(recordSchemas.StoredGroup), version: 1 });
	}

	async list(): Promise<StoredGroup[]> {
		const groups = await this.collection.list();
		if (!groups.some((group) => group.name === DEFAULT_GROUP)) groups.push(emptyGroup(DEFAULT_GROUP));
		return groups.sort((a, b) => compareNames(a.name, b.name));
	}

	async find(name: string): Promise<StoredGroup | undefined> {
		return (await this.collection.get(name)) ?? (name === DEFAULT_GROUP ? emptyGroup(DEFAULT_GROUP) : undefined);
	}

	/** The group, or a 404 that names it. */
	async get(name: string): Promise<StoredGroup> {
		const group = await this.find(name);
		if (!group) throw HangarError.notFound(`group '${name}' not found`, 'group_not_found');
		return group;
	}

	async create(name: string): Promise<StoredGroup> {
		const group = emptyGroup(name);
		if (!(await this.collection.create(name, group))) {
			throw HangarError.conflict(`group '${name}' already exists`, 'group_exists');
		}
		return group;
	}

	async delete(name: string): Promise<void> {
		if (name === DEFAULT_GROUP) throw HangarError.badRequest('cannot delete the default group');
		if (!(await this.collection.delete(name))) {
			throw HangarError.notFound(`group '${name}' not found`, 'group_not_found');
		}
	}

	/** Changes a group under its lock; 404 for an unknown group other than `default`. */
	async update(name: string, change: (group: StoredGroup) => StoredGroup): Promise<StoredGroup> {
		const updated = await this.collection.update(name, change);
		if (updated) return updated;
		if (name !== DEFAULT_GROUP) throw HangarError.notFound(`group '${name}' not found`, 'group_not_found');
		await this.collection.create(DEFAULT_GROUP, emptyGroup(DEFAULT_GROUP));
		return (await this.collection.update(name, change))!;
	}
}
