/** The file does not parse; `line` and `column` are 1-based. */
export class ConfigSyntaxError extends Error {
    line;
    column;
    constructor(message, line, column) {
        super(message);
        this.line = line;
        this.column = column;
    }
}
/** The file parses but is not shaped as the client expects (a servers key that is not a map…). */
export class ConfigShapeError extends Error {
}
export async function openEditor(text, shape) {
    switch (shape.format) {
        case 'json':
        case 'jsonc':
            return (await import('./jsonEditor.js')).openJsonEditor(text, shape);
        case 'yaml':
            return (await import('./yamlEditor.js')).openYamlEditor(text, shape);
        case 'toml':
            return (await import('./tomlEditor.js')).openTomlEditor(text, shape);
    }
}
/** 1-based line and column of a character offset. */
export function positionOf(text, offset) {
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    return { line, column: offset - before.lastIndexOf('\n') };
}
/** `a.b` for messages, quoting segments that contain dots. */
export function describePath(path) {
    return path.map((segment) => (segment.includes('.') ? `"${segment}"` : segment)).join('.');
}
/** The line ending a file already uses: CRLF if it has any, else LF. */
export function lineEndingOf(text) {
    return text.includes('\r\n') ? '\r\n' : '\n';
}
/** The offset where the line holding `offset` starts. */
export function lineStart(text, offset) {
    return text.lastIndexOf('\n', offset - 1) + 1;
}
//# sourceMappingURL=editor.js.map