/**
 * The manifest the build writes beside the operation table (scripts/write-manifest.mjs; the
 * extension's bundle inlines it): the method and notification names, and each row's plain params
 * schema. A door reads it instead of loading the table, which costs zod.
 */
import type { NotificationDefinition, OperationDefinition } from './operation.js';
import { plainSchemaOf, type JsonSchema } from './plainParams.js';

export interface Manifest {
	readonly methods: readonly string[];
	readonly notifications: readonly string[];
	/** By method; a row whose params zod must always check has none. */
	readonly params: Readonly<Record<string, JsonSchema>>;
}

export function manifestOf(operations: readonly OperationDefinition[], notifications: readonly NotificationDefinition[]): Manifest {
	const params: Record<string, JsonSchema> = {};
	for (const row of operations) {
		const schema = plainSchemaOf(row.params);
		if (schema !== false) params[row.method] = schema;
	}
	return { methods: operations.map((row) => row.method), notifications: notifications.map((row) => row.method), params };
}
