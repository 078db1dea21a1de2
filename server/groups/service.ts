/**
 * The groups rows: list, create, get, delete. Deleting a group first releases its workloads
 * (moved to `default`, or deleted with `with-workloads`), once the group is known to exist.
 */
import { implement, type Implementation } from '../dispatch.js';
import { DEFAULT_GROUP, type GroupStore } from './store.js';

/** What deleting a group must do with the workloads in it (the workloads area's part). */
export type ReleaseGroup = (name: string, withWorkloads: boolean) => Promise<void>;

export function groupImplementations(groups: GroupStore, releaseGroup: ReleaseGroup): Implementation[] {
	return [
		implement('groups/list', async () => ({ groups: await groups.list() })),
		implement('groups/create', async ({ name }) => {
			await groups.create(name);
			return { name };
		}),
		implement('groups/get', ({ name }) => groups.get(name)),
		implement('groups/delete', async (params) => {
			if (params.name !== DEFAULT_GROUP) {
				await groups.get(params.name);
				await releaseGroup(params.name, params['with-workloads'] ?? false);
			}
			await groups.delete(params.name);
			return null;
		}),
	];
}
