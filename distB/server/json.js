/**
 * Describes a JSON.parse failure without quoting the input. V8's messages include a snippet
 * of the text (`Unexpected token 'p', "{"value":planted}" is not valid JSON`), and that text
 * may be a secret the caller was sending.
 */
export function describeJsonError(error) {
    const message = error instanceof Error ? error.message : '';
    if (/end of JSON input/i.test(message))
        return 'malformed JSON (unexpected end of input)';
    const position = /position (\d+)/.exec(message)?.[1];
    return position === undefined ? 'malformed JSON' : `malformed JSON at position ${position}`;
}
/** A JSON object: not null, not an array. */
export function isPlainObject(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}
//# sourceMappingURL=json.js.map