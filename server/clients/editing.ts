/**
 * What the configuration editors share: the interface every format implements, the errors a
 * user's file raises, and small text helpers. The format editors import only this module, and
 * `editor.ts` picks among them, so no file of this folder imports one that imports it back.
 */
export type Scalar = string | number | boolean;

/** An entry's fields as Hangar writes them, in the order they should appear. */
export type EntryFields = ReadonlyArray<readonly [key: string, value: Scalar]>;

export interface ConfigEditor {
	/** The entries the file lists now, by name, as plain values. */
	entries(): Map<string, Record<string, unknown>>;
	/** Adds a new entry named `name` with these fields. */
	add(name: string, fields: EntryFields): void;
	/** Sets one field of an existing entry, keeping its other fields. */
	set(name: string, key: string, value: Scalar): void;
	/** Removes one field of an existing entry, if present. */
	unset(name: string, key: string): void;
	/** Removes an entry. */
	remove(name: string): void;
	/** The file's text with every edit applied. */
	text(): string;
}

/** The file does not parse; `line` and `column` are 1-based. */
export class ConfigSyntaxError extends Error {
	constructor(
		message: string,
		readonly line: number,
		readonly column: number,
	) {
		super(message);
	}
}

/** The file parses but is not shaped as the client expects (a servers key that is not a map…). */
export class ConfigShapeError extends Error {}

/** 1-based line and column of a character offset. */
export function positionOf(text: string, offset: number): { line: number; column: number } {
	const before = text.slice(0, offset);
	const line = before.split('\n').length;
	return { line, column: offset - before.lastIndexOf('\n') };
}

/** `a.b` for messages, quoting segments that contain dots. */
export function describePath(path: readonly string[]): string {
	return path.map((segment) => (segment.includes('.') ? `"${segment}"` : segment)).join('.');
}

/** The line ending a file already uses: CRLF if it has any, else LF. */
export function lineEndingOf(text: string): '\r\n' | '\n' {
	return text.includes('\r\n') ? '\r\n' : '\n';
}

/** The offset where the line holding `offset` starts. */
export function lineStart(text: string, offset: number): number {
	return text.lastIndexOf('\n', offset - 1) + 1;
}
