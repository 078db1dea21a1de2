/**
 * TOML configuration files (Codex's `[mcp_servers.<name>]` tables, Mistral Vibe's
 * `[[mcp_servers]]` list), edited as text.
 *
 * TOML libraries that round-trip lose comments and layout, so Hangar does not re-serialize:
 * smol-toml validates the file and reads its values, and a small scanner finds the table
 * headers and `key = value` lines so each edit touches only the lines of the entry it changes.
 * Preserved byte-for-byte: everything outside the edited entries — comments, blank lines, key
 * order, quoting, other tables. An entry Hangar adds is appended at the end of the file as its
 * own table; an entry it removes takes its table (and sub-tables) with it. Every edit is parsed
 * again, so Hangar never writes a file smol-toml would refuse. Entries written another way
 * (inline tables, dotted keys) are reported, not rewritten.
 */
import { parse, TomlError } from 'smol-toml';
import {
	ConfigShapeError,
	ConfigSyntaxError,
	describePath,
	lineEndingOf,
	type ConfigEditor,
	type EntryFields,
	type Scalar,
} from './editing.js';
import { isPlainObject } from '../json.js';
import type { ConfigShape } from './table.js';

/** One statement of the file: a table header, a `key = value` pair, or a blank/comment line. */
interface Statement {
	readonly kind: 'table' | 'array-table' | 'pair' | 'trivia';
	/** Offset of the first character of the line. */
	readonly start: number;
	/** Offset just past the newline that ends the statement (values may span lines). */
	readonly end: number;
	/** Header or key path. */
	readonly path: readonly string[];
	readonly valueStart: number;
	readonly valueEnd: number;
	/** A comment line (as opposed to a blank one). */
	readonly comment: boolean;
}

/** A table header and the statements up to the next header. */
interface Section {
	readonly header: Statement;
	readonly body: readonly Statement[];
	/** End of the section, before comment lines that introduce the next header. */
	readonly end: number;
}

export function openTomlEditor(original: string, shape: ConfigShape): ConfigEditor {
	const path = [...shape.serversPath];
	const eol = lineEndingOf(original);
	let text = original;
	let data = read(text);

	const servers = (): unknown => {
		let value: unknown = data;
		for (const key of path) value = isPlainObject(value) ? value[key] : undefined;
		if (value === undefined) return undefined;
		if (shape.collection === 'map' && !isPlainObject(value)) throw new ConfigShapeError(`"${describePath(path)}" is not a table`);
		if (shape.collection === 'array' && !Array.isArray(value)) {
			throw new ConfigShapeError(`"${describePath(path)}" is not an array of tables`);
		}
		return value;
	};
	servers();

	const replace = (start: number, end: number, replacement: string) => {
		const next = text.slice(0, start) + replacement + text.slice(end);
		try {
			data = read(next);
		} catch (error) {
			throw new ConfigShapeError(`Hangar's edit would not be valid TOML here (${(error as Error).message.split('\n')[0]})`);
		}
		text = next;
	};

	/** The sections holding entry `name`: its own table first, then its sub-tables. */
	const sectionsOf = (name: string): Section[] => {
		const sections = sectionize(text, scan(text));
		if (shape.collection === 'map') {
			const own = [...path, name];
			const found = sections.filter((section) => startsWith(section.header.path, own));
			const main = found.find((section) => section.header.kind === 'table' && section.header.path.length === own.length);
			if (!main) {
				throw new ConfigShapeError(
					`entry "${name}" is not written as a [${describePath(own)}] table; Hangar only edits entries in that form`,
				);
			}
			return [main, ...found.filter((section) => section !== main)];
		}
		const list = servers() as unknown[];
		const index = list.findIndex((entry) => isPlainObject(entry) && entry.name === name);
		const heads = sections.filter((section) => section.header.kind === 'array-table' && samePath(section.header.path, path));
		const main = heads[index];
		if (index < 0 || !main) {
			throw new ConfigShapeError(
				`entry "${name}" is not written as a [[${describePath(path)}]] table; Hangar only edits entries in that form`,
			);
		}
		const after = sections.slice(sections.indexOf(main) + 1);
		const nextHead = after.findIndex(
			(section) => !startsWith(section.header.path, path) || section.header.path.length === path.length,
		);
		return [main, ...(nextHead < 0 ? after : after.slice(0, nextHead))];
	};

	const pairIn = (section: Section, key: string) =>
		section.body.find((statement) => statement.kind === 'pair' && samePath(statement.path, [key]));

	return {
		entries() {
			const entries = new Map<string, Record<string, unknown>>();
			const value = servers();
			if (shape.collection === 'map') {
				for (const [name, entry] of Object.entries((value as Record<string, unknown> | undefined) ?? {})) {
					entries.set(name, isPlainObject(entry) ? entry : {});
				}
			} else {
				for (const entry of (value as unknown[] | undefined) ?? []) {
					if (isPlainObject(entry) && typeof entry.name === 'string') entries.set(entry.name, entry);
				}
			}
			return entries;
		},

		add(name: string, fields: EntryFields) {
			const header = shape.collection === 'map' ? `[${renderPath([...path, name])}]` : `[[${renderPath(path)}]]`;
			const lines = [header, ...fields.map(([key, value]) => `${renderKey(key)} = ${renderValue(value)}`)].join(eol) + eol;
			let separator = '';
			if (text.trim() !== '') {
				if (!text.endsWith('\n')) separator += eol;
				if (!/\n\s*\n$/.test(text + separator)) separator += eol;
			}
			replace(text.length, text.length, separator + lines);
		},

		set(name: string, key: string, value: Scalar) {
			const [main] = sectionsOf(name);
			const pair = pairIn(main!, key);
			if (pair) {
				replace(pair.valueStart, pair.valueEnd, renderValue(value));
				return;
			}
			const lastPair = main!.body.filter((statement) => statement.kind === 'pair').at(-1) ?? main!.header;
			replace(
				lastPair.end,
				lastPair.end,
				`${lastPair.end === text.length && !text.endsWith('\n') ? eol : ''}${renderKey(key)} = ${renderValue(value)}${eol}`,
			);
		},

		unset(name: string, key: string) {
			const [main] = sectionsOf(name);
			const pair = pairIn(main!, key);
			if (pair) replace(pair.start, pair.end, '');
		},

		remove(name: string) {
			const sections = sectionsOf(name).sort((a, b) => b.header.start - a.header.start);
			let next = text;
			for (const section of sections) next = next.slice(0, section.header.start) + next.slice(section.end);
			// Appending an entry added a blank line before it; removing the last entry takes it back.
			const removedTail = sections.some((section) => section.end === text.length);
			if (removedTail && next.endsWith(`${eol}${eol}`)) next = next.slice(0, -eol.length);
			replace(0, text.length, next);
		},

		text: () => text,
	};
}

function read(text: string): Record<string, unknown> {
	try {
		return parse(text) as Record<string, unknown>;
	} catch (error) {
		if (error instanceof TomlError) {
			throw new ConfigSyntaxError(`invalid TOML (${error.message.split('\n')[0]})`, error.line, error.column);
		}
		throw error;
	}
}

function samePath(a: readonly string[], b: readonly string[]): boolean {
	return a.length === b.length && startsWith(a, b);
}

function startsWith(path: readonly string[], prefix: readonly string[]): boolean {
	return prefix.every((segment, index) => path[index] === segment);
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function renderKey(key: string): string {
	return BARE_KEY.test(key) ? key : renderString(key);
}

function renderPath(path: readonly string[]): string {
	return path.map(renderKey).join('.');
}

/** A TOML basic string: JSON's escapes are TOML's, except that TOML also forbids a raw DEL. */
function renderString(value: string): string {
	return JSON.stringify(value).replace(/\x7f/g, '\\u007F');
}

function renderValue(value: Scalar): string {
	return typeof value === 'string' ? renderString(value) : String(value);
}

/** Groups statements into sections: one per table header, each up to the next header. */
function sectionize(text: string, statements: readonly Statement[]): Section[] {
	const sections: Section[] = [];
	const headers = statements.flatMap((statement, index) =>
		statement.kind === 'pair' || statement.kind === 'trivia' ? [] : [index],
	);
	headers.forEach((headerIndex, order) => {
		const nextIndex = headers[order + 1];
		const body = statements.slice(headerIndex + 1, nextIndex);
		let end = nextIndex === undefined ? text.length : statements[nextIndex]!.start;
		if (nextIndex !== undefined) {
			// Comment lines right above the next header belong to it.
			for (let index = body.length - 1; index >= 0 && body[index]!.comment; index--) end = body[index]!.start;
		}
		sections.push({ header: statements[headerIndex]!, body, end });
	});
	return sections;
}

/**
 * Splits a valid TOML document into statements. It only needs to find where headers, pairs
 * and values begin and end, so it skips over values (strings, arrays, inline tables, which may
 * span lines) without interpreting them; smol-toml has already validated the text.
 */
function scan(text: string): Statement[] {
	const statements: Statement[] = [];
	let position = 0;

	const skipSpaces = () => {
		while (text[position] === ' ' || text[position] === '\t') position++;
	};
	const lineEndFrom = (offset: number) => {
		const newline = text.indexOf('\n', offset);
		return newline === -1 ? text.length : newline + 1;
	};
	/** Skips whitespace, newlines and comments (inside arrays and inline tables). */
	const skipGaps = () => {
		for (;;) {
			skipSpaces();
			const char = text[position];
			if (char === '\r' || char === '\n') position++;
			else if (char === '#') position = lineEndFrom(position);
			else return;
		}
	};

	const readString = (): string => {
		const quote = text[position]!;
		const triple = text.startsWith(quote.repeat(3), position);
		const delimiter = triple ? quote.repeat(3) : quote;
		const contentStart = position + delimiter.length;
		let cursor = contentStart;
		for (;;) {
			if (quote === '"' && text[cursor] === '\\') {
				cursor += 2;
				continue;
			}
			if (cursor >= text.length || text.startsWith(delimiter, cursor)) break;
			cursor++;
		}
		let contentEnd = cursor;
		cursor += delimiter.length;
		// A multi-line string may end with (up to two) extra quotes that belong to its content.
		while (triple && text[cursor] === quote) {
			cursor++;
			contentEnd++;
		}
		position = cursor;
		const raw = text.slice(contentStart, contentEnd);
		return quote === '"' ? decodeBasic(raw) : raw;
	};

	const readKey = (): string[] => {
		const keys: string[] = [];
		for (;;) {
			skipSpaces();
			const char = text[position];
			if (char === '"' || char === "'") {
				keys.push(readString());
			} else {
				const start = position;
				while (position < text.length && /[A-Za-z0-9_-]/.test(text[position]!)) position++;
				keys.push(text.slice(start, position));
			}
			skipSpaces();
			if (text[position] !== '.') return keys;
			position++;
		}
	};

	const skipValue = (): void => {
		const char = text[position];
		if (char === '"' || char === "'") {
			readString();
		} else if (char === '[' || char === '{') {
			const close = char === '[' ? ']' : '}';
			position++;
			for (;;) {
				skipGaps();
				const next = text[position];
				if (next === undefined || next === close) {
					position++;
					return;
				}
				if (next === ',') {
					position++;
					continue;
				}
				if (char === '{') {
					readKey();
					skipSpaces();
					position++; // '='
					skipSpaces();
				}
				skipValue();
			}
		} else {
			while (position < text.length && !/[\s,\]}#]/.test(text[position]!)) position++;
		}
	};

	while (position < text.length) {
		const start = position;
		skipSpaces();
		const char = text[position];
		if (char === undefined || char === '\r' || char === '\n' || char === '#') {
			const end = lineEndFrom(position);
			statements.push({ kind: 'trivia', start, end, path: [], valueStart: end, valueEnd: end, comment: char === '#' });
			position = end;
		} else if (char === '[') {
			const array = text[position + 1] === '[';
			position += array ? 2 : 1;
			const path = readKey();
			const end = lineEndFrom(position);
			statements.push({
				kind: array ? 'array-table' : 'table',
				start,
				end,
				path,
				valueStart: end,
				valueEnd: end,
				comment: false,
			});
			position = end;
		} else {
			const path = readKey();
			position++; // '='
			skipSpaces();
			const valueStart = position;
			skipValue();
			const valueEnd = position;
			const end = lineEndFrom(position);
			statements.push({ kind: 'pair', start, end, path, valueStart, valueEnd, comment: false });
			position = end;
		}
	}
	return statements;
}

/** Decodes the escapes of a TOML basic string (key or value). */
function decodeBasic(raw: string): string {
	return raw.replace(/\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|x[0-9A-Fa-f]{2}|[btnfre"\\]|\r?\n[\s]*)/g, (_, escape: string) => {
		switch (escape[0]) {
			case 'u':
			case 'U':
			case 'x':
				return String.fromCodePoint(Number.parseInt(escape.slice(1), 16));
			case 'b':
				return '\b';
			case 't':
				return '\t';
			case 'n':
				return '\n';
			case 'f':
				return '\f';
			case 'r':
				return '\r';
			case 'e':
				return '\x1b';
			case '"':
			case '\\':
				return escape;
			default:
				return ''; // a line-ending backslash trims the newline and following whitespace
		}
	});
}
