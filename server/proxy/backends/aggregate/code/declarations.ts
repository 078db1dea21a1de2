/**
 * A tool's TypeScript declaration, as `describe(name)` answers a script: its input schema as a
 * type, its description as a doc comment. Written here rather than with json-schema-to-typescript,
 * which brings a formatter and a reference resolver (megabytes) for what is, for tool inputs,
 * a walk over properties, items, enums and unions; a keyword it does not know becomes `unknown`,
 * never a wrong type.
 */

type Schema = Readonly<Record<string, unknown>>;

/** How deep a schema is written out before the rest is `unknown`. */
const MAX_DEPTH = 6;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `name` as a property key: bare when it is an identifier, else quoted. */
const keyOf = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name));

/** Text safe inside a block comment. */
const commentText = (text: string) => text.replaceAll('*/', '*\\/').trim();

function docComment(text: unknown, indent: string): string {
	if (typeof text !== 'string' || !text.trim()) return '';
	const lines = commentText(text).split('\n');
	return lines.length === 1 ? `${indent}/** ${lines[0]} */\n` : `${indent}/**\n${lines.map((line) => `${indent} * ${line}`).join('\n')}\n${indent} */\n`;
}

/** The TypeScript type of `schema`. */
function typeOf(schema: unknown, depth = 0, indent = ''): string {
	if (schema === true || schema === undefined) return 'unknown';
	if (schema === false) return 'never';
	if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return 'unknown';
	const s = schema as Schema;
	if ('const' in s) return JSON.stringify(s.const) ?? 'unknown';
	if (Array.isArray(s.enum)) return s.enum.map((value) => JSON.stringify(value) ?? 'unknown').join(' | ') || 'never';
	for (const union of ['anyOf', 'oneOf'] as const) {
		if (Array.isArray(s[union])) return [...new Set((s[union] as unknown[]).map((each) => typeOf(each, depth + 1, indent)))].join(' | ') || 'unknown';
	}
	const types = Array.isArray(s.type) ? (s.type as unknown[]) : s.type === undefined ? [s.properties ? 'object' : undefined] : [s.type];
	return [...new Set(types.map((type) => singleType(type, s, depth, indent)))].join(' | ');
}

function singleType(type: unknown, s: Schema, depth: number, indent: string): string {
	switch (type) {
		case 'string':
			return 'string';
		case 'integer':
		case 'number':
			return 'number';
		case 'boolean':
			return 'boolean';
		case 'null':
			return 'null';
		case 'array': {
			const item = typeOf(s.items, depth + 1, indent);
			return item.includes(' ') ? `Array<${item}>` : `${item}[]`;
		}
		case 'object':
			return objectType(s, depth, indent);
		default:
			return 'unknown';
	}
}

function objectType(s: Schema, depth: number, indent: string): string {
	const properties = typeof s.properties === 'object' && s.properties !== null && !Array.isArray(s.properties) ? (s.properties as Record<string, unknown>) : {};
	const required = new Set(Array.isArray(s.required) ? s.required.filter((name): name is string => typeof name === 'string') : []);
	const inner = `${indent}\t`;
	const lines = Object.entries(properties).map(([name, property]) => {
		const description = typeof property === 'object' && property !== null ? (property as Schema).description : undefined;
		return `${docComment(description, inner)}${inner}${keyOf(name)}${required.has(name) ? '' : '?'}: ${typeOf(property, depth + 1, inner)};`;
	});
	const additional = s.additionalProperties;
	if (additional !== undefined && additional !== false) lines.push(`${inner}[key: string]: ${typeOf(additional, depth + 1, inner)};`);
	else if (additional === undefined && lines.length === 0) return 'Record<string, unknown>';
	return lines.length ? `{\n${lines.join('\n')}\n${indent}}` : '{}';
}

/** The declaration of the tool a script calls as `tools[member][name]`, from its definition. */
export function declarationOf(member: string, name: string, tool: { readonly description?: string; readonly inputSchema?: unknown }): string {
	const args = typeOf(tool.inputSchema ?? { type: 'object' }, 0, '\t\t');
	return `declare const tools: {\n\t${keyOf(member)}: {\n${docComment(tool.description, '\t\t')}\t\t${keyOf(name)}(args: ${args}): Promise<unknown>;\n\t};\n};`;
}
