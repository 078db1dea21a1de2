/**
 * A member's tool definitions as a validating client will judge them. The official SDK clients
 * check every tool of a `tools/list` result against the MCP schema (an object `inputSchema`,
 * an object `outputSchema` that their JSON Schema validator compiles) and reject the whole list
 * for one bad tool: through an aggregate, one member's odd definition would cost every member's
 * tools. So each definition is checked here, once per list: a definition whose repair is
 * unambiguous (an object schema that forgot `type: "object"`) is repaired, any other that would
 * be rejected is left out, and each is noted with what was wrong.
 */

/** What was done to one member tool, for the log and the aggregate's status. */
export interface DefinitionNote {
	readonly member: string;
	readonly tool: string;
	readonly action: 'repaired' | 'left out';
	readonly reason: string;
}

export type Checked<T> = { readonly tool: T; readonly repaired?: string } | { readonly tool?: undefined; readonly problem: string };

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** JSON Schema's type names. */
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

/**
 * Why `schema` (the root of an input or output schema) is not one a validating client accepts,
 * or `repair` when adding `type: "object"` is all it lacks. `compiled`: the client compiles it
 * (an output schema, with Ajv in SDK 1.x), so its types must be JSON's and its references
 * resolve inside it.
 */
function schemaProblem(schema: unknown, compiled: boolean): string | 'repair' | undefined {
	if (!isPlainObject(schema)) return `is ${schema === null ? 'null' : Array.isArray(schema) ? 'an array' : `a ${typeof schema}`}, not a JSON Schema object`;
	if (schema.properties !== undefined && (!isPlainObject(schema.properties) || !Object.values(schema.properties).every((property) => typeof property === 'object' && property !== null))) {
		return 'has `properties` that are not schemas';
	}
	if (schema.required !== undefined && !(Array.isArray(schema.required) && schema.required.every((name) => typeof name === 'string'))) return 'has `required` that is not a list of names';
	if (compiled) {
		const badType = typesIn(schema).find((type) => !JSON_TYPES.has(type));
		if (badType !== undefined) return `uses the unknown type "${badType}"`;
		const badReference = referencesIn(schema).find((reference) => !resolves(schema, reference));
		if (badReference !== undefined) return `refers to ${badReference}, which is not in it`;
	}
	if (schema.type === undefined) return 'repair';
	if (schema.type !== 'object') return `has type ${JSON.stringify(schema.type)} where an object schema is required`;
	return undefined;
}

/** Keywords whose values are data, not schemas: nothing under them is a keyword. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples']);
/** Keywords whose values map names to schemas: their keys are names, not keywords. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions']);

/** Every value of `keyword` in a schema and the schemas nested in it. */
function keywordValues(schema: unknown, keyword: string, into: unknown[] = []): unknown[] {
	if (Array.isArray(schema)) for (const item of schema) keywordValues(item, keyword, into);
	else if (isPlainObject(schema)) {
		for (const [key, value] of Object.entries(schema)) {
			if (key === keyword) into.push(value);
			else if (SCHEMA_MAPS.has(key)) {
				if (isPlainObject(value)) for (const sub of Object.values(value)) keywordValues(sub, keyword, into);
			} else if (!DATA_KEYWORDS.has(key)) keywordValues(value, keyword, into);
		}
	}
	return into;
}

/** Every type name a schema uses, nested ones included. */
const typesIn = (schema: unknown) => keywordValues(schema, 'type').flatMap((value) => (Array.isArray(value) ? value : [value])).map(String);

/** Every `$ref` in a schema. */
const referencesIn = (schema: unknown) => keywordValues(schema, '$ref').filter((value): value is string => typeof value === 'string');

/** Whether `reference` is a JSON pointer into `schema` that leads somewhere (a compiler resolves no other without being taught). */
function resolves(schema: Record<string, unknown>, reference: string): boolean {
	if (!reference.startsWith('#')) return false;
	let node: unknown = schema;
	for (const part of reference.slice(1).split('/').slice(1)) {
		const key = decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~');
		if (!isPlainObject(node) && !Array.isArray(node)) return false;
		node = (node as Record<string, unknown>)[key];
		if (node === undefined) return false;
	}
	return true;
}

/** One member tool, checked: as it is, repaired, or the reason it is left out. */
export function checkTool<T extends { name: string }>(tool: T): Checked<T> {
	const definition = tool as unknown as Record<string, unknown>;
	if (!isPlainObject(definition) || typeof definition.name !== 'string' || !definition.name) return { problem: 'it has no name' };
	for (const field of ['title', 'description'] as const) {
		if (definition[field] !== undefined && typeof definition[field] !== 'string') return { problem: `its ${field} is not a string` };
	}
	if (definition.annotations !== undefined && !isPlainObject(definition.annotations)) return { problem: 'its annotations are not an object' };
	const repairs: string[] = [];
	let repaired = definition;
	if (definition.inputSchema === undefined) {
		// A tool that takes nothing and says so by saying nothing.
		repaired = { ...repaired, inputSchema: { type: 'object' } };
		repairs.push('it had no inputSchema: an empty object schema given');
	}
	for (const [field, compiled] of [['inputSchema', false], ['outputSchema', true]] as const) {
		if (repaired[field] === undefined) continue;
		const problem = schemaProblem(repaired[field], compiled);
		if (problem === 'repair') {
			repaired = { ...repaired, [field]: { type: 'object', ...(repaired[field] as object) } };
			repairs.push(`its ${field} had no type: "object" added`);
		} else if (problem !== undefined) {
			return { problem: `its ${field} ${problem}` };
		}
	}
	return repairs.length ? { tool: repaired as unknown as T, repaired: repairs.join('; ') } : { tool };
}
