/**
 * Group records on disk (`<state>/groups/<name>.json`). Clients and skills record their
 * membership here; `default` exists even before anything was written to it.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { HangarError } from '../../protocol/errors.js';
import { Group } from '../../protocol/protocol.groups.js';
import { JsonCollection } from '../store/document.js';
export const DEFAULT_GROUP = 'default';
const StoredGroup = Group.extend({
    registered_clients: z.array(z.string()),
    skills: z.array(z.string()),
});
const emptyGroup = (name) => ({ name, registered_clients: [], skills: [] });
export class GroupStore {
    collection;
    constructor(paths) {
        this.collection = new JsonCollection(join(paths.state, 'groups'), { schema: StoredGroup, version: 1 });
    }
    async list() {
        const groups = await this.collection.list();
        if (!groups.some((group) => group.name === DEFAULT_GROUP))
            groups.push(emptyGroup(DEFAULT_GROUP));
        return groups.sort((a, b) => a.name.localeCompare(b.name));
    }
    async find(name) {
        return (await this.collection.get(name)) ?? (name === DEFAULT_GROUP ? emptyGroup(DEFAULT_GROUP) : undefined);
    }
    /** The group, or a 404 that names it. */
    async get(name) {
        const group = await this.find(name);
        if (!group)
            throw HangarError.notFound(`group '${name}' not found`, 'group_not_found');
        return group;
    }
    async create(name) {
        const group = emptyGroup(name);
        if (!(await this.collection.create(name, group))) {
            throw HangarError.conflict(`group '${name}' already exists`, 'group_exists');
        }
        return group;
    }
    async delete(name) {
        if (name === DEFAULT_GROUP)
            throw HangarError.badRequest('cannot delete the default group');
        if (!(await this.collection.delete(name))) {
            throw HangarError.notFound(`group '${name}' not found`, 'group_not_found');
        }
    }
    /** Changes a group under its lock; 404 for an unknown group other than `default`. */
    async update(name, change) {
        const updated = await this.collection.update(name, change);
        if (updated)
            return updated;
        if (name !== DEFAULT_GROUP)
            throw HangarError.notFound(`group '${name}' not found`, 'group_not_found');
        await this.collection.create(DEFAULT_GROUP, emptyGroup(DEFAULT_GROUP));
        return (await this.collection.update(name, change));
    }
}
//# sourceMappingURL=store.js.map