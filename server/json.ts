/**
 * Describes a JSON.parse failure without quoting the input. V8's messages include a snippet
 * of the text (`Unexpected token 'p', "{"value":planted}" is not valid JSON`), and that text
 * may be a secret the caller was sending.
 */
export function describeJsonError(error: unknown): string {
	const message = error instanceof Error ? error.message : '';
	if (/end of JSON input/i.test(message)) return 'malformed JSON (unexpected end of input)';
	const position = /position (\d+)/.exec(message)?.[1];
	return position === undefined ? 'malformed JSON' : `malformed JSON at position ${position}`;
}

/** A JSON object: not null, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The deepest nesting of arrays and objects a request body may have, over REST, JSON-RPC and
 * the proxy. Deeper bodies are refused before they are parsed, so no code that walks a value
 * recursively (schema checks, copies, audit) ever meets one deep enough to overflow the stack.
 */
export const MAX_JSON_DEPTH = 128;

export class JsonTooDeep extends Error {
	override readonly name = 'JsonTooDeep';

	constructor() {
		super(`JSON nested deeper than ${MAX_JSON_DEPTH} levels (the limit)`);
	}
}

/** `JSON.parse`, refusing (JsonTooDeep) a text nested deeper than MAX_JSON_DEPTH, found by one pass without recursion. */
export function parseJsonBounded(text: string): unknown {
	let depth = 0;
	let inString = false;
	for (let at = 0; at < text.length; at++) {
		const code = text.charCodeAt(at);
		if (inString) {
			if (code === 0x5c) at++; // backslash: the next character is escaped
			else if (code === 0x22) inString = false;
		} else if (code === 0x22) inString = true;
		else if (code === 0x5b || code === 0x7b) {
			if (++depth > MAX_JSON_DEPTH) throw new JsonTooDeep();
		} else if (code === 0x5d || code === 0x7d) depth--;
	}
	return JSON.parse(text);
}
