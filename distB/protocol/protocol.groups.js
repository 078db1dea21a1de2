/**
 * Groups: named sets of workloads, registered clients and skills. `default` always exists.
 */
import { z } from 'zod';
import { GroupName, NoParams, NoResult, QueryBoolean } from './common.js';
import { operation } from './operation.js';
export const Group = z.object({
    name: z.string(),
    registered_clients: z.array(z.string()).optional(),
    skills: z.array(z.string()).optional(),
});
export const GroupNameParams = z.object({ name: GroupName });
/** Lists every group, sorted by name. */
export const ListGroups = operation({
    method: 'groups/list',
    summary: 'List groups',
    params: NoParams,
    result: z.object({ groups: z.array(Group) }),
    rest: { verb: 'GET', path: '/api/v1beta/groups', status: 200 },
    errors: [500],
    example: {},
});
/** Creates an empty group. */
export const CreateGroup = operation({
    method: 'groups/create',
    summary: 'Create a group',
    params: GroupNameParams,
    result: z.object({ name: z.string() }),
    rest: { verb: 'POST', path: '/api/v1beta/groups', status: 201 },
    errors: [400, 409, 500],
    example: { name: 'contract' },
});
/** Returns one group with its registered clients and skills. */
export const GetGroup = operation({
    method: 'groups/get',
    summary: 'Get a group',
    params: GroupNameParams,
    result: Group,
    rest: { verb: 'GET', path: '/api/v1beta/groups/{name}', status: 200 },
    errors: [400, 404, 500],
    example: { name: 'default' },
});
/**
 * Deletes a group. Its workloads move to `default`, or are deleted with `with-workloads`.
 * `default` cannot be deleted.
 */
export const DeleteGroup = operation({
    method: 'groups/delete',
    summary: 'Delete a group',
    params: GroupNameParams.extend({ 'with-workloads': QueryBoolean.optional() }),
    result: NoResult,
    rest: { verb: 'DELETE', path: '/api/v1beta/groups/{name}', status: 204, query: ['with-workloads'] },
    errors: [400, 404, 500],
    example: { name: 'contract' },
});
//# sourceMappingURL=protocol.groups.js.map