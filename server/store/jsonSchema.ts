/**
 * A check of data against a JSON Schema, for the processes and paths that must not load zod: a
 * workload's proxy reading its records (zod alone is 12–13 MB of its resident set), and a
 * command's start checking an operation's params. The schemas are not written by hand: they are
 * generated from the zod schemas (`z.toJSONSchema` for records, see runspec/records.ts;
 * protocol/plainParams.ts for params) and tests keep them equal. It reads the subset those emit
 * and parses as zod does: an object drops the fields its schema does not name (zod's default),
 * a field its object does not require may hold `undefined`, `anyOf` takes the first form that
 * matches, a number is finite and a string's length counts UTF-16 units. A keyword outside that
 * subset is refused when the part of the check that holds it is compiled, which is when a value
 * first reaches it (test/records.test.ts keeps the generated schemas within the subset).
 */
import type { RecordSchema } from './document.js';

export type JsonSchema = { readonly [keyword: string]: unknown };

type Outcome = { readonly value: unknown } | { readonly error: string };
type Check = (value: unknown, path: string) => Outcome;

/** Keywords that only annotate. */
const ANNOTATIONS = ['$schema', 'title', 'description'];
export const SUPPORTED_KEYWORDS: ReadonlySet<string> = new Set([
	...ANNOTATIONS,
	'type',
	'enum',
	'const',
	'minimum',
	'maximum',
	'minLength',
	'maxLength',
	'pattern',
	'properties',
	'required',
	'additionalProperties',
	'propertyNames',
	'items',
	'anyOf',
	'allOf',
	'not',
]);

function typeOf(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return 'array';
	if (typeof value === 'number') return Number.isFinite(value) ? (Number.isInteger(value) ? 'integer' : 'number') : 'non-finite number';
	return typeof value;
}

function hasType(value: unknown, type: string): boolean {
	const actual = typeOf(value);
	return actual === type || (type === 'number' && actual === 'integer');
}

const fieldOf = (path: string, key: string) => (path ? `${path}.${key}` : key);
const named = (path: string) => (path ? `field ${path}` : 'the document');

/**
 * The check of a schema inside another, compiled when a value first reaches it: a record's
 * schema describes every field a record may have (a workload's runs to hundreds of checks),
 * and a command reading one record needs only those of the fields it holds.
 */
function onFirstUse(schema: JsonSchema): Check {
	let check: Check | undefined;
	return (value, path) => (check ??= compile(schema))(value, path);
}

function compile(schema: JsonSchema): Check {
	for (const keyword of Object.keys(schema)) if (!SUPPORTED_KEYWORDS.has(keyword)) throw new Error(`JSON Schema keyword ${keyword} is not supported`);
	const steps: Check[] = [];
	if (schema.type !== undefined) {
		const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
		steps.push((value, path) => (types.some((type) => hasType(value, type)) ? { value } : { error: `${named(path)}: expected ${types.join(' or ')}, got ${typeOf(value)}` }));
	}
	if (schema.enum !== undefined || schema.const !== undefined) {
		const allowed = (schema.enum as unknown[] | undefined) ?? [schema.const];
		steps.push((value, path) => (allowed.includes(value) ? { value } : { error: `${named(path)}: expected one of ${allowed.map((entry) => JSON.stringify(entry)).join(', ')}` }));
	}
	const { minimum, maximum } = schema as { minimum?: number; maximum?: number };
	if (minimum !== undefined || maximum !== undefined) {
		steps.push((value, path) =>
			typeof value === 'number' && ((minimum !== undefined && value < minimum) || (maximum !== undefined && value > maximum)) ? { error: `${named(path)}: ${value} is out of range` } : { value },
		);
	}
	const { minLength, maxLength } = schema as { minLength?: number; maxLength?: number };
	if (minLength !== undefined || maxLength !== undefined) {
		steps.push((value, path) =>
			typeof value === 'string' && ((minLength !== undefined && value.length < minLength) || (maxLength !== undefined && value.length > maxLength))
				? { error: `${named(path)}: ${value.length} characters is out of range` }
				: { value },
		);
	}
	if (schema.pattern !== undefined) {
		const pattern = new RegExp(schema.pattern as string);
		steps.push((value, path) => (typeof value === 'string' && !pattern.test(value) ? { error: `${named(path)}: does not match ${pattern}` } : { value }));
	}
	if (schema.properties !== undefined || schema.additionalProperties !== undefined || schema.propertyNames !== undefined) steps.push(objectCheck(schema));
	if (schema.items !== undefined) {
		const item = onFirstUse(schema.items as JsonSchema);
		steps.push((value, path) => {
			if (!Array.isArray(value)) return { value };
			const items: unknown[] = [];
			for (const [index, entry] of value.entries()) {
				const outcome = item(entry, `${path}[${index}]`);
				if ('error' in outcome) return outcome;
				items.push(outcome.value);
			}
			return { value: items };
		});
	}
	if (schema.anyOf !== undefined) {
		const forms = (schema.anyOf as JsonSchema[]).map(onFirstUse);
		steps.push((value, path) => {
			for (const form of forms) {
				const outcome = form(value, path);
				if ('value' in outcome) return outcome;
			}
			return { error: `${named(path)}: matches none of its ${forms.length} allowed forms` };
		});
	}
	if (schema.allOf !== undefined) {
		const all = (schema.allOf as JsonSchema[]).map(onFirstUse);
		steps.push((value, path) => {
			let outcome: Outcome = { value };
			for (const check of all) {
				outcome = check(outcome.value, path);
				if ('error' in outcome) return outcome;
			}
			return outcome;
		});
	}
	if (schema.not !== undefined) {
		const not = onFirstUse(schema.not as JsonSchema);
		steps.push((value, path) => ('error' in not(value, path) ? { value } : { error: `${named(path)}: not allowed` }));
	}
	return (value, path) => {
		let outcome: Outcome = { value };
		for (const step of steps) {
			outcome = step(outcome.value, path);
			if ('error' in outcome) return outcome;
		}
		return outcome;
	};
}

/** `properties` with `required`; other fields checked by `additionalProperties`, refused by `false`, dropped without it. */
function objectCheck(schema: JsonSchema): Check {
	const properties = new Map(Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).map(([key, property]) => [key, onFirstUse(property)]));
	const required = (schema.required ?? []) as string[];
	const additional = schema.additionalProperties as JsonSchema | boolean | undefined;
	const others = typeof additional === 'object' ? onFirstUse(additional) : undefined;
	const names = schema.propertyNames === undefined ? undefined : onFirstUse(schema.propertyNames as JsonSchema);
	return (value, path) => {
		if (typeOf(value) !== 'object') return { value };
		const missing = required.find((key) => !Object.hasOwn(value as object, key));
		if (missing !== undefined) return { error: `${named(fieldOf(path, missing))}: required` };
		const result: Record<string, unknown> = {};
		for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
			const field = fieldOf(path, key);
			const nameOutcome = names?.(key, field);
			if (nameOutcome && 'error' in nameOutcome) return nameOutcome;
			if (entry === undefined && properties.has(key) && !required.includes(key)) continue;
			const check = properties.get(key) ?? others;
			if (!check) {
				if (additional === false) return { error: `${named(field)}: not allowed` };
				continue;
			}
			const outcome = check(entry, field);
			if ('error' in outcome) return outcome;
			// Defined, not assigned: a `__proto__` key stays a field.
			Object.defineProperty(result, key, { value: outcome.value, enumerable: true, writable: true, configurable: true });
		}
		return { value: result };
	};
}

/** A check of documents against `schema` (a schema generated from a zod schema of type T), usable where a zod schema is. */
export function jsonSchemaCheck<T>(schema: JsonSchema): RecordSchema<T> {
	const check = compile(schema);
	return {
		safeParse(data) {
			const outcome = check(data, '');
			return 'error' in outcome ? { success: false, error: { issues: [{ message: outcome.error }] } } : { success: true, data: outcome.value as T };
		},
	};
}
