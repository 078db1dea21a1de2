/**
 * The operation table as a type: each row (and each notification) by its method. Code that
 * names an operation by its method (`'groups/list'`) rather than by its row keeps the row's
 * types without loading the row, its schemas and zod (a command's start, a service's handlers).
 */
import type { NotificationDefinition, OperationDefinition } from './operation.js';
import type * as catalog from './protocol.catalog.js';
import type * as clients from './protocol.clients.js';
import type * as groups from './protocol.groups.js';
import type * as registries from './protocol.registries.js';
import type * as secrets from './protocol.secrets.js';
import type * as skills from './protocol.skills.js';
import type * as system from './protocol.system.js';
import type * as workloads from './protocol.workloads.js';

/** An area module's rows, keyed by method. */
type RowsOf<Area> = { [Name in keyof Area as Area[Name] extends OperationDefinition<any, any, infer M> ? M : never]: Area[Name] };

export type Operations = RowsOf<typeof catalog> &
	RowsOf<typeof clients> &
	RowsOf<typeof groups> &
	RowsOf<typeof registries> &
	RowsOf<typeof secrets> &
	RowsOf<typeof skills> &
	RowsOf<typeof system> &
	RowsOf<typeof workloads>;

export type Method = keyof Operations;

/** An area module's notifications, keyed by method. */
type NotificationsOf<Area> = { [Name in keyof Area as Area[Name] extends NotificationDefinition<any, infer M> ? (Area[Name] extends OperationDefinition ? never : M) : never]: Area[Name] };

export type Notifications = NotificationsOf<typeof skills> & NotificationsOf<typeof workloads>;

export type NotificationMethod = keyof Notifications;
