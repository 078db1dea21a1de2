/**
 * The groups rows: list, create, get, delete. Deleting a group first releases its workloads
 * (moved to `default`, or deleted with `with-workloads`), once the group is known to exist.
 */
import { CreateGroup, DeleteGroup, GetGroup, ListGroups } from '../../protocol/protocol.groups.js';
import { implement } from '../dispatch.js';
import { DEFAULT_GROUP } from './store.js';
export function groupImplementations(groups, releaseGroup) {
    return [
        implement(ListGroups, async () => ({ groups: await groups.list() })),
        implement(CreateGroup, async ({ name }) => {
            await groups.create(name);
            return { name };
        }),
        implement(GetGroup, ({ name }) => groups.get(name)),
        implement(DeleteGroup, async (params) => {
            if (params.name !== DEFAULT_GROUP) {
                await groups.get(params.name);
                await releaseGroup(params.name, params['with-workloads'] ?? false);
            }
            await groups.delete(params.name);
            return null;
        }),
    ];
}
//# sourceMappingURL=service.js.map