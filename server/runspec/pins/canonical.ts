/**
 * RFC 8785 JSON Canonicalization Scheme (JCS): the one text of a JSON value that its pins are
 * hashed from. ECMAScript already gives most of it: numbers as `Number.prototype.toString`
 * (RFC 8785 §3.2.2.3 adopts that algorithm), strings escaped as `JSON.stringify` does (§3.2.2.2:
 * `\b \t \n \f \r \" \\`, other controls as lowercase `\u00xx`, everything else as is), and
 * property names sorted by their UTF-16 code units, which is `Array.prototype.sort`'s own order.
 * What is left is refusing what I-JSON (RFC 7493) forbids: non-finite numbers and lone surrogates.
 */

/** The canonical JSON text of `value`; throws on a value JSON cannot carry faithfully. */
export function canonicalize(value: unknown): string {
	if (value === null) return 'null';
	switch (typeof value) {
		case 'boolean':
			return value ? 'true' : 'false';
		case 'number':
			if (!Number.isFinite(value)) throw new TypeError(`${value} has no JSON form`);
			// `String(-0)` is "0", as §3.2.2.3 asks.
			return String(value);
		case 'string':
			return stringOf(value);
		case 'object': {
			if (Array.isArray(value)) return `[${value.map((item) => canonicalize(item === undefined ? null : item)).join(',')}]`;
			const members = Object.keys(value)
				.filter((key) => (value as Record<string, unknown>)[key] !== undefined)
				.sort()
				.map((key) => `${stringOf(key)}:${canonicalize((value as Record<string, unknown>)[key])}`);
			return `{${members.join(',')}}`;
		}
		default:
			throw new TypeError(`a ${typeof value} has no JSON form`);
	}
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function stringOf(text: string): string {
	if (LONE_SURROGATE.test(text)) throw new TypeError('a string with a lone surrogate has no I-JSON form');
	return JSON.stringify(text);
}
