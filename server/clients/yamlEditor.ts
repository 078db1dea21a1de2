/**
 * YAML configuration files (Goose's `extensions:` map, Continue's `mcpServers:` list).
 *
 * The `yaml` package's Document API parses the file and renders new entries; edits are then
 * spliced into the text at the ranges the document reports, so everything Hangar does not
 * change (comments, blank lines, quoting, flow collections, other entries) stays byte-for-byte.
 * Shapes too unusual to splice into (a flow-style servers collection, a flow-style entry) are
 * edited through the Document and re-rendered by it, which still keeps comments and key order.
 */
import {
	Document,
	isMap,
	isScalar,
	isSeq,
	parseDocument,
	type Node,
	type Pair,
	type ToStringOptions,
	YAMLMap,
	type YAMLSeq,
} from 'yaml';
import {
	ConfigShapeError,
	ConfigSyntaxError,
	describePath,
	lineEndingOf,
	lineStart,
	type ConfigEditor,
	type EntryFields,
	type Scalar,
} from './editing.js';
import { isPlainObject } from '../json.js';
import type { ConfigShape } from './table.js';

type Collection = YAMLMap<unknown, unknown> | YAMLSeq<unknown>;

export function openYamlEditor(original: string, shape: ConfigShape): ConfigEditor {
	const path = [...shape.serversPath];
	const eol = lineEndingOf(original);
	const style = styleOf(original);
	let text = original;
	let document = parse(text);

	const collection = (): Collection | undefined => {
		const node = document.getIn(path, true) as Node | null | undefined;
		if (node === undefined || node === null || (isScalar(node) && node.value === null)) return undefined;
		if (shape.collection === 'map' && isMap(node)) return node;
		if (shape.collection === 'array' && isSeq(node)) return node;
		throw new ConfigShapeError(`"${describePath(path)}" is not ${shape.collection === 'map' ? 'a map' : 'a list'}`);
	};
	collection();

	/** The entry node of `name` and, for a map collection, its pair. */
	const find = (name: string): { node: YAMLMap<unknown, unknown>; pair?: Pair<unknown, unknown>; index: number } | undefined => {
		const items = collection()?.items ?? [];
		for (let index = 0; index < items.length; index++) {
			const item = items[index];
			if (shape.collection === 'map') {
				const pair = item as Pair<unknown, unknown>;
				if (keyOf(pair) === name && isMap(pair.value)) return { node: pair.value, pair, index };
			} else if (isMap(item) && item.get('name') === name) {
				return { node: item, index };
			}
		}
		return undefined;
	};

	const splice = (start: number, end: number, replacement: string) => {
		text = text.slice(0, start) + replacement + text.slice(end);
		document = parse(text);
	};

	/** Inserts whole lines at a line boundary (or at the end of a file that lacks its final newline). */
	const insertLines = (at: number, lines: string) => {
		splice(at, at, (at > 0 && text[at - 1] !== '\n' ? eol : '') + lines);
	};

	/** Applies a change through the Document and re-renders the whole file (the fallback). */
	const viaDocument = (change: (document: Document) => void) => {
		change(document);
		text = document.toString(style);
		document = parse(text);
	};

	const render = (value: unknown, indent: number): string =>
		new Document(value)
			.toString(style)
			.trimEnd()
			.split('\n')
			.map((line) => (line === '' ? line : ' '.repeat(indent) + line))
			.join(eol) + eol;

	return {
		entries() {
			const entries = new Map<string, Record<string, unknown>>();
			for (const item of collection()?.items ?? []) {
				if (shape.collection === 'map') {
					const pair = item as Pair<unknown, unknown>;
					const value = (pair.value as Node | null)?.toJSON();
					entries.set(String(keyOf(pair)), isPlainObject(value) ? value : {});
				} else if (isMap(item) && typeof item.get('name') === 'string') {
					entries.set(item.get('name') as string, item.toJSON() as Record<string, unknown>);
				}
			}
			return entries;
		},

		add(name: string, fields: EntryFields) {
			const entry = Object.fromEntries(fields);
			const items = collection();
			if (items === undefined && isBlockMap(document.contents, text)) {
				// No servers key yet: append it, with the entry, at the end of the file.
				const value = shape.collection === 'map' ? { [name]: entry } : [entry];
				insertLines(text.length, render({ [path[0]!]: value }, 0));
				return;
			}
			const last = items?.items.at(-1);
			if (items && last && !items.flow) {
				const indent = columnOf(text, itemStart(text, last, shape));
				insertLines(
					lineEnd(text, itemEnd(last, shape) - 1),
					render(shape.collection === 'map' ? { [name]: entry } : [entry], indent),
				);
				return;
			}
			viaDocument((document) => {
				if (shape.collection === 'map') document.setIn([...path, name], document.createNode(entry));
				else if (items) (items as YAMLSeq<unknown>).add(document.createNode(entry));
				else document.setIn(path, document.createNode([entry]));
			});
		},

		set(name: string, key: string, value: Scalar) {
			const found = find(name);
			if (!found) return;
			const pair = found.node.items.find((candidate) => keyOf(candidate) === key);
			const current = pair?.value;
			if (!found.node.flow && isScalar(current) && current.range) {
				splice(current.range[0], current.range[1], render(value, 0).trimEnd());
			} else if (!found.node.flow && !pair && found.node.items.length > 0) {
				const lastPair = found.node.items.at(-1)!;
				const indent = columnOf(text, (lastPair.key as Node).range![0]);
				const end = ((lastPair.value as Node | null)?.range ?? (lastPair.key as Node).range!)[1];
				insertLines(lineEnd(text, end - 1), render({ [key]: value }, indent));
			} else {
				viaDocument(() => found.node.set(key, value));
			}
		},

		unset(name: string, key: string) {
			const found = find(name);
			const pair = found?.node.items.find((candidate) => keyOf(candidate) === key);
			if (!found || !pair) return;
			const value = pair.value as Node | null;
			if (!found.node.flow && value?.range && found.node.items.length > 1) {
				const start = lineStart(text, (pair.key as Node).range![0]);
				splice(start, lineEnd(text, value.range[1] - 1), '');
			} else {
				viaDocument(() => found.node.delete(key));
			}
		},

		remove(name: string) {
			const found = find(name);
			const items = collection();
			if (!found || !items) return;
			const entry = items.items[found.index]!;
			if (!items.flow && items.items.length > 1) {
				splice(lineStart(text, itemStart(text, entry, shape)), lineEnd(text, itemEnd(entry, shape) - 1), '');
				return;
			}
			// The last entry: leave an empty collection rather than a key with no value (null).
			const empty = shape.collection === 'map' ? '{}' : '[]';
			const pair =
				path.length === 1 && isMap(document.contents)
					? document.contents.items.find((item) => keyOf(item) === path[0])
					: undefined;
			const key = pair?.key as Node | undefined;
			if (!items.flow && key?.range && text[key.range[1]] === ':') {
				splice(key.range[1], lineEnd(text, itemEnd(entry, shape) - 1), `: ${empty}${eol}`);
			} else {
				viaDocument((document) => document.setIn(path, document.createNode(shape.collection === 'map' ? {} : [])));
			}
		},

		text: () => text,
	};
}

function parse(text: string): Document {
	const document = parseDocument(text);
	const [first] = document.errors;
	if (first) {
		const position = first.linePos?.[0] ?? { line: 1, col: 1 };
		throw new ConfigSyntaxError(`invalid YAML (${first.message.split(' at line')[0]})`, position.line, position.col);
	}
	const root = document.contents;
	if (root !== null && !isMap(root) && !(isScalar(root) && root.value === null)) {
		throw new ConfigShapeError('the top level is not a map');
	}
	return document;
}

/** The file's own indentation step and list style, so re-rendered text looks like the rest. */
function styleOf(text: string): ToStringOptions {
	const indent = /^[^\s#-][^\n]*:[ \t]*\r?\n( +)[^\s-]/m.exec(text)?.[1]?.length ?? 2;
	// `key:\n- item` (dash at the key's column) is the unindented list style.
	const indentSeq = !/^( *)[^\s#-][^\n]*:[ \t]*\r?\n\1- /m.test(text);
	return { indent, indentSeq, lineWidth: 0, minContentWidth: 0 };
}

function keyOf(pair: Pair<unknown, unknown>): unknown {
	return isScalar(pair.key) ? pair.key.value : pair.key;
}

function isBlockMap(node: unknown, text: string): boolean {
	return node === null || text.trim() === '' || (isMap(node) && !node.flow) || (isScalar(node) && node.value === null);
}

/** Where an entry's text begins: its key (map) or its dash (list). */
function itemStart(text: string, item: unknown, shape: ConfigShape): number {
	if (shape.collection === 'map') return ((item as Pair<unknown, unknown>).key as Node).range![0];
	let start = (item as Node).range![0];
	while (start > 0 && text[start - 1] !== '-') start--;
	return start - 1;
}

function itemEnd(item: unknown, shape: ConfigShape): number {
	const node = shape.collection === 'map' ? ((item as Pair<unknown, unknown>).value as Node) : (item as Node);
	return node.range![1];
}

/** The offset just past the newline that ends the line holding `offset` (or the end of text). */
function lineEnd(text: string, offset: number): number {
	const newline = text.indexOf('\n', Math.max(offset, 0));
	return newline === -1 ? text.length : newline + 1;
}

function columnOf(text: string, offset: number): number {
	return offset - lineStart(text, offset);
}
