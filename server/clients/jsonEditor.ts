/**
 * JSON and JSONC configuration files, edited with Microsoft's jsonc-parser: the parse tree
 * gives the exact offsets of every property, and each change is a text edit at those offsets,
 * so comments, key order, formatting and unrelated keys stay byte-for-byte. New properties
 * follow the indentation and line endings of their siblings. Layouts too unusual for that
 * (several properties on one line, comments between siblings) fall back to jsonc-parser's
 * own `modify`, which still keeps comments but may re-indent the lines it touches.
 *
 * Comments and trailing commas are tolerated in every JSON file, as ToolHive tolerates them.
 */
import {
	applyEdits,
	findNodeAtLocation,
	getNodeValue,
	modify,
	parseTree,
	printParseErrorCode,
	type FormattingOptions,
	type Node,
	type ParseError,
} from 'jsonc-parser';
import {
	ConfigShapeError,
	ConfigSyntaxError,
	describePath,
	lineEndingOf,
	lineStart,
	positionOf,
	type ConfigEditor,
	type EntryFields,
	type Scalar,
} from './editing.js';
import { isPlainObject } from '../json.js';
import type { ConfigShape } from './table.js';

const PARSE_OPTIONS = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true };

export function openJsonEditor(original: string, shape: ConfigShape): ConfigEditor {
	// An empty file is an empty object (ToolHive #1094: an empty mcp.json must not be an error).
	let text = original.trim() === '' ? '{}' : original;
	const style = styleOf(original);
	const serversPath = [...shape.serversPath];
	let root = parse(text);

	const servers = (): Node | undefined => {
		const node = findNodeAtLocation(root, serversPath);
		if (node && node.type !== 'object') throw new ConfigShapeError(`"${describePath(serversPath)}" is not an object`);
		return node;
	};
	servers();

	const splice = (edits: readonly { offset: number; length: number; content: string }[]) => {
		text = applyEdits(text, [...edits]);
		root = parse(text);
	};
	/** jsonc-parser's own edit, for layouts the surgical edits do not handle. */
	const fallback = (path: (string | number)[], value: unknown) => {
		splice(modify(text, path, value, { formattingOptions: style.formatting }));
	};

	/** Adds `key: value` as the last property of `object` (the node at `path`). */
	const insert = (object: Node, path: string[], key: string, value: unknown) => {
		const property = `${JSON.stringify(key)}: `;
		const last = object.children?.at(-1);
		if (!last) {
			const inside = text.slice(object.offset + 1, object.offset + object.length - 1);
			if (inside.trim() !== '') return fallback([...path, key], value);
			const outer = indentationAt(text, object.offset);
			const inner = outer + style.unit;
			const content = `{${style.eol}${inner}${property}${render(value, inner, style)}${style.eol}${outer}}`;
			return splice([{ offset: object.offset, length: object.length, content }]);
		}
		const lastEnd = last.offset + last.length;
		const rest = restOfLine(text, lastEnd);
		const indent = indentationAt(text, last.offset);
		if (rest === undefined || !startsLine(text, last.offset)) return fallback([...path, key], value);
		const comma = rest.comma ? [] : [{ offset: lastEnd, length: 0, content: ',' }];
		// The last property has a comma only when the file uses trailing commas: so does the new one.
		const content = `${style.eol}${indent}${property}${render(value, indent, style)}${rest.comma ? ',' : ''}`;
		splice([...comma, { offset: rest.end, length: 0, content }]);
	};

	/** Removes `property` (a child of `object`, the node at `path`). */
	const removeProperty = (object: Node, path: string[], property: Node) => {
		const siblings = object.children ?? [];
		const index = siblings.indexOf(property);
		const key = String(property.children?.[0]?.value);
		const end = property.offset + property.length;
		if (siblings.length === 1) {
			const inside = text.slice(object.offset + 1, property.offset) + text.slice(end, object.offset + object.length - 1);
			if (inside.replace(',', '').trim() !== '') return fallback([...path, key], undefined);
			return splice([{ offset: object.offset, length: object.length, content: '{}' }]);
		}
		if (!startsLine(text, property.offset)) return fallback([...path, key], undefined);
		const start = lineStart(text, property.offset);
		const rest = restOfLine(text, end);
		if (rest === undefined || rest.comment) return fallback([...path, key], undefined);
		const next = siblings[index + 1];
		if (next) {
			// `"name": {…},⏎` goes with its line.
			return splice([{ offset: start, length: rest.end + lineBreakLength(text, rest.end) - start, content: '' }]);
		}
		// The last property: its line goes, and so does the comma of the one before (unless the
		// file uses trailing commas, in which case this property's own comma goes with it).
		const previous = siblings[index - 1]!;
		const previousRest = restOfLine(text, previous.offset + previous.length);
		if (previousRest === undefined || !previousRest.comma) return fallback([...path, key], undefined);
		const lineBreak = start - (text[start - 2] === '\r' ? 2 : 1);
		const edits = [{ offset: lineBreak, length: rest.end - lineBreak, content: '' }];
		if (!rest.comma) edits.unshift({ offset: previousRest.commaAt, length: 1, content: '' });
		splice(edits);
	};

	const entryNode = (name: string) => findNodeAtLocation(root, [...serversPath, name]);

	return {
		entries() {
			const entries = new Map<string, Record<string, unknown>>();
			for (const property of servers()?.children ?? []) {
				const [key, value] = property.children ?? [];
				if (!key || !value) continue;
				const entry: unknown = getNodeValue(value);
				entries.set(String(key.value), isPlainObject(entry) ? entry : {});
			}
			return entries;
		},
		add(name: string, fields: EntryFields) {
			const entry = Object.fromEntries(fields);
			const node = servers();
			if (node) insert(node, serversPath, name, entry);
			else insertAt(serversPath, { [name]: entry });
		},
		set(name: string, key: string, value: Scalar) {
			const entry = entryNode(name);
			if (entry?.type !== 'object') return;
			const current = findNodeAtLocation(entry, [key]);
			if (current) splice([{ offset: current.offset, length: current.length, content: JSON.stringify(value) }]);
			else insert(entry, [...serversPath, name], key, value);
		},
		unset(name: string, key: string) {
			const entry = entryNode(name);
			const property = entry?.type === 'object' ? findNodeAtLocation(entry, [key])?.parent : undefined;
			if (entry && property) removeProperty(entry, [...serversPath, name], property);
		},
		remove(name: string) {
			const servers = findNodeAtLocation(root, serversPath);
			const property = entryNode(name)?.parent;
			if (servers && property) removeProperty(servers, serversPath, property);
		},
		text() {
			// Edits happen inside the top-level object, so a file's final newline stays as it was.
			if (original.trim() !== '') return text;
			// A blank file stays as it is until something is added; a new one ends with a newline.
			return text === '{}' ? original : `${text}${style.eol}`;
		},
	};

	/** Adds the first missing segment of `path` to the deepest object that exists, holding `value`. */
	function insertAt(path: string[], value: unknown): void {
		let depth = path.length;
		while (depth > 0 && !findNodeAtLocation(root, path.slice(0, depth - 1))) depth--;
		const parentPath = path.slice(0, depth - 1);
		const parent = parentPath.length ? findNodeAtLocation(root, parentPath)! : root;
		if (parent.type !== 'object') throw new ConfigShapeError(`"${describePath(parentPath)}" is not an object`);
		const nested = path.slice(depth).reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
		insert(parent, parentPath, path[depth - 1]!, nested);
	}
}

interface Style {
	readonly unit: string;
	readonly eol: string;
	readonly formatting: FormattingOptions;
}

/** The file's own indentation unit (a tab or N spaces) and line ending; two spaces and `\n` for a new file. */
function styleOf(text: string): Style {
	const eol = lineEndingOf(text);
	const indented = /^([ \t]+)["/}\]]/m.exec(text)?.[1];
	if (indented?.startsWith('\t')) return { unit: '\t', eol, formatting: { insertSpaces: false, tabSize: 1, eol } };
	const size = indented ? indented.length : 2;
	return { unit: ' '.repeat(size), eol, formatting: { insertSpaces: true, tabSize: size, eol } };
}

/** JSON for a new value, nested lines indented one unit past `indent`. */
function render(value: unknown, indent: string, style: Style): string {
	return JSON.stringify(value, null, style.unit).split('\n').join(`${style.eol}${indent}`);
}

function parse(text: string): Node {
	const errors: ParseError[] = [];
	const root = parseTree(text, errors, PARSE_OPTIONS);
	const [first] = errors;
	if (first) {
		const { line, column } = positionOf(text, first.offset);
		throw new ConfigSyntaxError(`invalid JSON (${printParseErrorCode(first.error)})`, line, column);
	}
	if (!root || root.type !== 'object') throw new ConfigShapeError('the top level is not an object');
	return root;
}

/** The whitespace that starts the line holding `offset`. */
function indentationAt(text: string, offset: number): string {
	return /^[ \t]*/.exec(text.slice(lineStart(text, offset)))![0];
}

/** True when only whitespace precedes `offset` on its line. */
function startsLine(text: string, offset: number): boolean {
	return text.slice(lineStart(text, offset), offset).trim() === '';
}

/**
 * What follows a value up to the end of its line, when that is only an optional comma, then
 * an optional `//` comment: `end` is the offset of the line break (or of the end of text).
 * `undefined` when anything else (another property, a closing brace) shares the line.
 */
function restOfLine(
	text: string,
	offset: number,
): { end: number; comma: boolean; commaAt: number; comment: boolean } | undefined {
	const match = /^([ \t]*)(,?)([ \t]*)(\/\/[^\r\n]*)?(?=\r?\n|$)/.exec(text.slice(offset));
	if (!match) return undefined;
	return {
		end: offset + match[0].length,
		comma: match[2] === ',',
		commaAt: offset + match[1]!.length,
		comment: match[4] !== undefined,
	};
}

function lineBreakLength(text: string, offset: number): number {
	return text.startsWith('\r\n', offset) ? 2 : text[offset] === '\n' ? 1 : 0;
}
