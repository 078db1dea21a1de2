/**
 * Ranked, case-insensitive search over a catalog's servers or skills. Every match level is a
 * substring of a field, so a trigram index (built once per list, on its first search) narrows
 * a query to the entries holding all its trigrams, and only those are ranked.
 */

/** The lower-cased fields a search looks in. */
export interface SearchText {
	/** The short name (`fetch` of `io.github.stacklok/fetch`). */
	readonly name: string;
	readonly title: string;
	readonly description: string;
	/** The full name, namespace included. */
	readonly fullName: string;
}

export function searchText(name: string, title: string | undefined, description: string | undefined, fullName: string): SearchText {
	return {
		name: name.toLowerCase(),
		title: (title ?? '').toLowerCase(),
		description: (description ?? '').toLowerCase(),
		fullName: fullName.toLowerCase(),
	};
}

/** A lower-cased query, with what the ranking asks of it worked out once. */
interface Needle {
	readonly text: string;
	/** It holds a segment separator, so it cannot be one whole segment of a name. */
	readonly spansSegments: boolean;
	/** It holds `/` or `.`: it may name a namespace. */
	readonly namesNamespace: boolean;
}

const GRAM = 3;

/**
 * Lists indexed apart, in a row, as one searchable list: an entry whose key an earlier entry
 * had is left out, each kept entry is `wrap`ped, and searches go through the lists' own
 * indexes (no index of the whole is built).
 */
export function mergeIndexes<X, T>(lists: readonly { index: SearchIndex<X>; wrap: (item: X) => T }[], key: (item: X) => string): SearchIndex<T> {
	const items: T[] = [];
	const texts: SearchText[] = [];
	const parts: IndexPart[] = [];
	const seen = new Set<string>();
	for (const { index, wrap } of lists) {
		const positions = index.items.map((item, entry) => {
			const name = key(item);
			if (seen.has(name)) return -1;
			seen.add(name);
			items.push(wrap(item));
			texts.push(index.texts[entry]!);
			return items.length - 1;
		});
		parts.push({ index, positions });
	}
	return new SearchIndex(items, texts, parts);
}

/**
 * A list that is other indexed lists in a row, some entries left out (the merged view of all
 * registries): entry `i` of `index` is entry `positions[i]` here, or is left out for -1.
 * Positions rise with the parts and within each, so the parts' candidates stay in list order.
 */
export interface IndexPart {
	readonly index: SearchIndex<unknown>;
	readonly positions: readonly number[];
}

/**
 * Items with their search texts, searched through an index built on the first query (or
 * through the indexes of the lists it is made of: `parts`).
 */
export class SearchIndex<T> {
	private postings: Map<number, number[]> | undefined;

	constructor(
		readonly items: readonly T[],
		readonly texts: readonly SearchText[],
		private readonly parts?: readonly IndexPart[],
	) {}

	/** The items matching `query`, best first, in list order among equals; all without one. */
	search(query: string | undefined): readonly T[] {
		const text = query?.trim().toLowerCase();
		if (!text) return this.items;
		const needle: Needle = { text, spansSegments: /[-_.]/.test(text), namesNamespace: /[/.]/.test(text) };
		// One bucket per score, filled in list order: no sort of the matches.
		const buckets = new Map<number, T[]>();
		const rank = (index: number) => {
			const score = relevance(this.texts[index]!, needle);
			if (score === 0) return;
			const bucket = buckets.get(score);
			if (bucket) bucket.push(this.items[index]!);
			else buckets.set(score, [this.items[index]!]);
		};
		if (text.length < GRAM) {
			for (let index = 0; index < this.items.length; index++) rank(index);
		} else {
			for (const index of this.candidates(text)) rank(index);
		}
		const ranked: T[] = [];
		for (const score of [...buckets.keys()].sort((a, b) => b - a)) {
			for (const item of buckets.get(score)!) ranked.push(item);
		}
		return ranked;
	}

	/** The entries holding every trigram of `text` (GRAM or more characters), in list order. */
	private candidates(text: string): readonly number[] {
		if (this.parts) {
			const found: number[] = [];
			for (const { index, positions } of this.parts) {
				for (const entry of index.candidates(text)) {
					if (positions[entry]! >= 0) found.push(positions[entry]!);
				}
			}
			return found;
		}
		const postings = (this.postings ??= buildPostings(this.texts));
		const lists: (readonly number[])[] = [];
		for (let start = 0; start + GRAM <= text.length; start++) {
			const list = postings.get(gramAt(text, start));
			if (!list) return [];
			lists.push(list);
		}
		lists.sort((a, b) => a.length - b.length);
		return lists.slice(1).reduce(intersect, lists[0]!);
	}
}

/** For each trigram of any field, the entries holding it, ascending. */
function buildPostings(texts: readonly SearchText[]): Map<number, number[]> {
	const postings = new Map<number, number[]>();
	texts.forEach((text, index) => {
		// The short name is part of the full name (its end), so the full name's trigrams hold its own.
		const fields = text.fullName.includes(text.name) ? [text.title, text.description, text.fullName] : [text.name, text.title, text.description, text.fullName];
		for (const field of fields) {
			for (let start = 0; start + GRAM <= field.length; start++) {
				const gram = gramAt(field, start);
				const list = postings.get(gram);
				if (!list) postings.set(gram, [index]);
				else if (list[list.length - 1] !== index) list.push(index);
			}
		}
	});
	return postings;
}

/**
 * The trigram at `start` as a small integer (a fast map key): exact for code units below 1024,
 * which covers lower-cased Latin text; other trigrams may share a key, which only adds
 * candidates that the ranking then turns away.
 */
function gramAt(text: string, start: number): number {
	return ((text.charCodeAt(start) << 20) ^ (text.charCodeAt(start + 1) << 10) ^ text.charCodeAt(start + 2)) & 0x3fff_ffff;
}

/** The entries of two ascending lists that are in both. */
function intersect(a: readonly number[], b: readonly number[]): readonly number[] {
	const both: number[] = [];
	for (let i = 0, j = 0; i < a.length && j < b.length; ) {
		if (a[i]! < b[j]!) i++;
		else if (a[i]! > b[j]!) j++;
		else {
			both.push(a[i]!);
			i++;
			j++;
		}
	}
	return both;
}

/**
 * How well an item matches the query; 0 for no match. The short name counts most (whole, then
 * one of its `-`/`_`/`.` segments, then a prefix, then anywhere), then the title, then the
 * description (a word start, then anywhere). The namespace (`io.github.…`), shared by most of
 * a catalog, counts only when the query names one (it holds `/` or `.`).
 */
function relevance(text: SearchText, needle: Needle): number {
	const query = needle.text;
	if (text.name === query) return 100;
	if (!needle.spansSegments && isSegment(text.name, query)) return 90;
	if (text.name.startsWith(query)) return 80;
	if (text.name.includes(query)) return 70;
	if (text.title === query) return 65;
	if (text.title.includes(query)) return 60;
	if (startsWord(text.description, query)) return 40;
	if (text.description.includes(query)) return 20;
	if (needle.namesNamespace && text.fullName.includes(query)) return 10;
	return 0;
}

/** `query` (without separators) is a whole `-`/`_`/`.`-separated segment of `name`. */
function isSegment(name: string, query: string): boolean {
	for (let at = name.indexOf(query); at >= 0; at = name.indexOf(query, at + 1)) {
		const end = at + query.length;
		if ((at === 0 || isSeparator(name.charCodeAt(at - 1))) && (end === name.length || isSeparator(name.charCodeAt(end)))) return true;
	}
	return false;
}

function isSeparator(code: number): boolean {
	return code === 0x2d || code === 0x5f || code === 0x2e; // - _ .
}

/** `query` occurs in `text` at its start or after a character other than a-z and 0-9. */
function startsWord(text: string, query: string): boolean {
	for (let at = text.indexOf(query); at >= 0; at = text.indexOf(query, at + 1)) {
		if (at === 0 || !isWordCharacter(text.charCodeAt(at - 1))) return true;
	}
	return false;
}

function isWordCharacter(code: number): boolean {
	return (code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x7a);
}
