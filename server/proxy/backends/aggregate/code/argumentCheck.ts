/**
 * A script's arguments to a tool, checked against the tool's input schema before the call
 * leaves the sandbox, so a script learns of a wrong argument at once, in words naming the field.
 * The check is the project's own (store/jsonSchema.ts) on the part of the schema it reads: the
 * other keywords (patterns, formats, references…) are left to the member, which checks them
 * anyway, so the check may let through what the member refuses, never the other way.
 */
import { jsonSchemaCheck, type JsonSchema } from '../../../../store/jsonSchema.js';

const KEPT = new Set(['type', 'enum', 'const', 'minimum', 'maximum', 'properties', 'required', 'additionalProperties', 'items', 'anyOf']);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

/** The part of `schema` the checker reads; a keyword it does not know is left out, as is a malformed one. */
function checkable(schema: unknown): JsonSchema {
	if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return {};
	const kept: Record<string, unknown> = {};
	for (const [keyword, value] of Object.entries(schema as Record<string, unknown>)) {
		if (!KEPT.has(keyword)) continue;
		switch (keyword) {
			case 'type': {
				const types = Array.isArray(value) ? value : [value];
				if (types.length && types.every((type) => typeof type === 'string' && TYPES.has(type))) kept.type = value;
				break;
			}
			case 'enum':
				if (Array.isArray(value)) kept.enum = value;
				break;
			case 'minimum':
			case 'maximum':
				if (typeof value === 'number') kept[keyword] = value;
				break;
			case 'properties':
				if (typeof value === 'object' && value !== null && !Array.isArray(value)) kept.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, checkable(property)]));
				break;
			case 'required':
				if (Array.isArray(value) && value.every((name) => typeof name === 'string')) kept.required = value;
				break;
			case 'additionalProperties':
				if (value === false) kept.additionalProperties = false;
				else if (typeof value === 'object' && value !== null) kept.additionalProperties = checkable(value);
				break;
			case 'items':
				if (typeof value === 'object' && value !== null && !Array.isArray(value)) kept.items = checkable(value);
				break;
			case 'anyOf':
				if (Array.isArray(value) && value.length) kept.anyOf = value.map(checkable);
				break;
			default:
				kept[keyword] = value;
		}
	}
	return kept;
}

type Checker = (args: unknown) => string | undefined;
const checks = new WeakMap<object, Checker>();

/** The problem with `args` for a tool of `schema`, if any (a field named); checks are compiled once per schema. */
export function argumentProblem(schema: unknown, args: unknown): string | undefined {
	if (typeof schema !== 'object' || schema === null) return undefined;
	let check = checks.get(schema);
	if (!check) {
		const compiled = jsonSchemaCheck<unknown>(checkable(schema));
		check = (value) => {
			const outcome = compiled.safeParse(value);
			return outcome.success ? undefined : outcome.error.issues[0]?.message;
		};
		checks.set(schema, check);
	}
	return check(args);
}
