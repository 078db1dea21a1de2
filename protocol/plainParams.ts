/**
 * The plain JSON Schema of an operation's params: it accepts only params that the row's zod
 * schema accepts and returns as they are. A door checks params with it without loading zod (a
 * command's start); params it refuses go to the zod schema, which accepts them (a default
 * filled, a query string's `"true"` made a boolean) or refuses them with its own message.
 *
 * So the schema may refuse more than zod, never accept more: every construct whose check JSON
 * Schema cannot state (a refinement), or whose output is not its input (a transform, a
 * default, a coercion), becomes `false` here. The build writes each row's schema into
 * dist/protocol/manifest.json (scripts/write-manifest.mjs); test/plain-params.test.ts holds
 * the rule against every row.
 */
import type { z } from 'zod';

/** A JSON Schema as data (server/store/jsonSchema.ts checks it). */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** The zod internals this reads: a schema's definition and its checks' definitions. */
type Def = { readonly type: string; readonly [field: string]: any };
type AnySchema = z.core.$ZodType;

const defOf = (schema: AnySchema): Def => schema._zod.def as unknown as Def;

/** No value passes. */
const NEVER = false;

/** The plain schema of `schema`, or `false` where zod may change what it accepts or check what JSON Schema cannot. */
export function plainSchemaOf(schema: AnySchema): JsonSchema | false {
	const def = defOf(schema);
	switch (def.type) {
		case 'string':
			return def.coerce ? NEVER : withChecks({ type: 'string' }, def, stringCheck);
		case 'number':
			return def.coerce ? NEVER : withChecks({ type: 'number' }, def, numberCheck);
		case 'boolean':
			return def.coerce ? NEVER : withChecks({ type: 'boolean' }, def, () => undefined);
		case 'null':
			return { type: 'null' };
		case 'any':
		case 'unknown':
			return {};
		case 'enum':
			return withChecks({ enum: Object.values(def.entries as Record<string, unknown>) }, def, () => undefined);
		case 'literal':
			return (def.values as unknown[]).every((value) => value !== undefined && typeof value !== 'bigint') ? { enum: [...(def.values as unknown[])] } : NEVER;
		case 'nullable': {
			const inner = plainSchemaOf(def.innerType);
			return inner === NEVER ? { type: 'null' } : { anyOf: [inner, { type: 'null' }] };
		}
		case 'optional':
			// Whether the field may be left out is its object's business (`optin`).
			return plainSchemaOf(def.innerType);
		case 'array': {
			const items = plainSchemaOf(def.element);
			return withChecks({ type: 'array', items: items === NEVER ? { not: {} } : items }, def, () => undefined);
		}
		case 'object':
			return withChecks(objectSchema(def), def, () => undefined);
		case 'record':
			return withChecks(recordSchema(def), def, () => undefined);
		case 'union':
			return unionSchema(def.options as AnySchema[]);
		default:
			// transform, pipe, default, prefault, catch, intersection, lazy, date, custom, …
			return NEVER;
	}
}

/**
 * Adds what each of `def`'s checks adds to `schema`, or gives `false` if one is a refinement,
 * an overwrite (trim, lowercase) or any other check `translate` does not know. A keyword a
 * check repeats (a second pattern) goes in `allOf`.
 */
function withChecks(schema: Record<string, unknown> | false, def: Def, translate: (check: Def) => Record<string, unknown> | undefined): JsonSchema | false {
	if (schema === NEVER) return NEVER;
	for (const check of (def.checks ?? []) as AnySchema[]) {
		const added = translate(defOf(check));
		if (!added) return NEVER;
		if (Object.keys(added).some((keyword) => keyword in schema)) schema.allOf = [...((schema.allOf as JsonSchema[] | undefined) ?? []), added];
		else Object.assign(schema, added);
	}
	return schema;
}

function stringCheck(check: Def): Record<string, unknown> | undefined {
	switch (check.check) {
		case 'min_length':
			return { minLength: check.minimum };
		case 'max_length':
			return { maxLength: check.maximum };
		case 'length_equals':
			return { minLength: check.length, maxLength: check.length };
		case 'string_format': {
			const pattern = check.format === 'regex' ? (check.pattern as RegExp) : undefined;
			// A flag would change what the pattern matches in a check that compiles its source alone.
			return pattern && pattern.flags === '' ? { pattern: pattern.source } : undefined;
		}
		default:
			return undefined;
	}
}

function numberCheck(check: Def): Record<string, unknown> | undefined {
	switch (check.check) {
		case 'number_format':
			return check.format === 'safeint' ? { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER } : undefined;
		case 'greater_than':
			return check.inclusive ? { minimum: check.value } : undefined;
		case 'less_than':
			return check.inclusive ? { maximum: check.value } : undefined;
		default:
			return undefined;
	}
}

/**
 * Its fields, each required unless its input may be left out. A field zod fills when it is left
 * out (a default) makes the whole object `false`: left out, it would pass here unfilled.
 */
function objectSchema(def: Def): Record<string, unknown> | false {
	const shape = def.shape as Record<string, AnySchema>;
	const properties: Record<string, JsonSchema> = {};
	const required: string[] = [];
	for (const [key, field] of Object.entries(shape)) {
		if (fillsWhenLeftOut(field)) return NEVER;
		const plain = plainSchemaOf(field);
		properties[key] = plain === NEVER ? { not: {} } : plain;
		if (field._zod.optin !== 'optional') required.push(key);
	}
	const schema: Record<string, unknown> = { type: 'object', properties };
	if (required.length) schema.required = required;
	if (def.catchall !== undefined) {
		const catchall = defOf(def.catchall as AnySchema).type;
		if (catchall === 'never') schema.additionalProperties = false;
		else if (catchall === 'unknown' || catchall === 'any') schema.additionalProperties = {};
		else return NEVER;
	}
	return schema;
}

function fillsWhenLeftOut(schema: AnySchema): boolean {
	const def = defOf(schema);
	if (def.type === 'default' || def.type === 'prefault' || def.type === 'catch') return true;
	return def.type === 'optional' || def.type === 'nullable' ? fillsWhenLeftOut(def.innerType) : false;
}

/** A record keyed by any string (an enum's keys would all be required). */
function recordSchema(def: Def): Record<string, unknown> | false {
	const key = defOf(def.keyType as AnySchema);
	if (key.type !== 'string') return NEVER;
	const keys = plainSchemaOf(def.keyType);
	const values = plainSchemaOf(def.valueType);
	if (keys === NEVER || values === NEVER) return NEVER;
	return { type: 'object', propertyNames: keys, additionalProperties: values };
}

/**
 * zod answers with the first option that accepts a value, so an option that may change what it
 * accepts hides every option after it: only the options before the first such one are kept.
 */
function unionSchema(options: readonly AnySchema[]): JsonSchema | false {
	const kept: JsonSchema[] = [];
	for (const option of options) {
		const plain = plainSchemaOf(option);
		if (plain === NEVER) break;
		kept.push(plain);
	}
	if (kept.length === 0) return NEVER;
	return kept.length === 1 ? kept[0]! : { anyOf: kept };
}
