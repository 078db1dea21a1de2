/**
 * The groups rows: list, create, get, delete.
 */
import { CreateGroup, DeleteGroup, GetGroup, ListGroups } from '../../protocol/protocol.groups.js';
import { implement, type Implementation } from '../dispatch.js';
import type { GroupStore } from './store.js';

export function groupImplementations(groups: GroupStore): Implementation[] {
	return [
		implement(ListGroups, async () => ({ groups: await groups.list() })),
		implement(CreateGroup, async ({ name }) => {
			await groups.create(name);
			return { name };
		}),
		implement(GetGroup, ({ name }) => groups.get(name)),
		implement(DeleteGroup, async ({ name }) => {
			await groups.delete(name);
			return null;
		}),
	];
}
