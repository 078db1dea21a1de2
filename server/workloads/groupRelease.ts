/**
 * Deleting a group moves its workloads to `default`, or deletes them with `with-workloads`.
 * The groups area owns `groups/delete`; this wraps its implementation so the workloads are
 * dealt with first (after the group is known to exist), then the group goes.
 */
import { DeleteGroup } from '../../protocol/protocol.groups.js';
import { implement, type Implementation } from '../dispatch.js';
import { DEFAULT_GROUP, type GroupStore } from '../groups/store.js';
import type { WorkloadService } from './service.js';

export function withGroupRelease(implementations: Implementation[], groups: GroupStore, workloads: WorkloadService): Implementation[] {
	return implementations.map((original) =>
		original.operation.method !== DeleteGroup.method
			? original
			: implement(DeleteGroup, async (params, context) => {
					if (params.name !== DEFAULT_GROUP) {
						await groups.get(params.name);
						await workloads.releaseGroup(params.name, params['with-workloads'] ?? false);
					}
					return original.handler(params, context) as Promise<null>;
				}),
	);
}
