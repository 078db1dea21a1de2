/**
 * The registry search in-process (`server/registry/search.ts`): the ranking through the
 * trigram index, queries shorter than a trigram, text beyond Latin letters, and a merged
 * list searched through the indexes of its parts.
 */
import { describe, expect, it } from 'vitest';
import { mergeIndexes, SearchIndex, searchText } from '../server/registry/search.js';

interface Entry {
	name: string;
	title?: string;
	description?: string;
}

function indexOf(entries: Entry[], namespace = 'io.example'): SearchIndex<Entry> {
	return new SearchIndex(
		entries,
		entries.map((entry) => searchText(entry.name, entry.title, entry.description, `${namespace}/${entry.name}`)),
	);
}

const names = (found: readonly Entry[]) => found.map((entry) => entry.name);

describe('SearchIndex', () => {
	const entries: Entry[] = [
		{ name: 'notes', description: 'Keeps zebra-striped notes' }, // description, word start
		{ name: 'plain', description: 'Seazebras everywhere' }, // description, anywhere
		{ name: 'zoo', title: 'Zebra' }, // title, whole
		{ name: 'zoo-two', title: 'The zebra house' }, // title, anywhere
		{ name: 'bigzebras' }, // name, anywhere
		{ name: 'zebras' }, // name, prefix
		{ name: 'zebra-crossing' }, // name, segment
		{ name: 'zebra' }, // name, whole
		{ name: 'other', description: 'Nothing striped' },
	];
	const index = indexOf(entries);

	it('ranks name, segment, prefix, anywhere in the name, title, then description', () => {
		expect(names(index.search('ZEBRA'))).toEqual(['zebra', 'zebra-crossing', 'zebras', 'bigzebras', 'zoo', 'zoo-two', 'notes', 'plain']);
	});

	it('queries shorter than a trigram are ranked the same way', () => {
		expect(names(index.search('ze'))).toEqual(['zebras', 'zebra-crossing', 'zebra', 'bigzebras', 'zoo', 'zoo-two', 'notes', 'plain']);
		expect(names(index.search(' z '))).toEqual(['zoo', 'zoo-two', 'zebras', 'zebra-crossing', 'zebra', 'bigzebras', 'notes', 'plain']);
	});

	it('a query must occur within one field, not across two', () => {
		const split = indexOf([{ name: 'abc-x', description: 'bcd' }]);
		expect(names(split.search('abcd'))).toEqual([]);
		expect(names(split.search('bcd'))).toEqual(['abc-x']);
	});

	it('the namespace counts only for a query that names one', () => {
		expect(names(index.search('example'))).toEqual([]);
		expect(names(index.search('io.example/zebra-'))).toEqual(['zebra-crossing']);
	});

	it('finds text beyond Latin letters', () => {
		const wide = indexOf([
			{ name: 'kanji', description: '日本語のサーバー' },
			{ name: 'emoji', description: 'zebra 🦓 stripes' },
			{ name: 'greek', description: 'Ζέβρα' },
		]);
		expect(names(wide.search('サーバー'))).toEqual(['kanji']);
		expect(names(wide.search('本語の'))).toEqual(['kanji']);
		expect(names(wide.search('🦓 s'))).toEqual(['emoji']);
		expect(names(wide.search('ζέβρα'))).toEqual(['greek']);
		expect(names(wide.search('語のサーバーx'))).toEqual([]);
	});

	it('without a query, every entry in list order', () => {
		expect(index.search(undefined)).toBe(entries);
		expect(index.search('  ')).toBe(entries);
	});
});

describe('mergeIndexes', () => {
	it('searches parts through their own indexes, leaving out entries an earlier part had', () => {
		const first = indexOf([{ name: 'zebra', description: 'first' }, { name: 'alpha', description: 'zebra herd' }], 'io.first');
		const second = indexOf([{ name: 'beta', description: 'zebra too' }, { name: 'zebra', description: 'second' }, { name: 'zebra-two' }], 'io.second');
		const merged = mergeIndexes(
			[
				{ index: first, wrap: (entry: Entry) => `first:${entry.name}` },
				{ index: second, wrap: (entry: Entry) => `second:${entry.name}` },
			],
			(entry) => entry.name,
		);
		expect(merged.search('zebra')).toEqual(['first:zebra', 'second:zebra-two', 'first:alpha', 'second:beta']);
		expect(merged.search('io.second/')).toEqual(['second:beta', 'second:zebra-two']);
		expect(merged.search(undefined)).toEqual(['first:zebra', 'first:alpha', 'second:beta', 'second:zebra-two']);
	});
});
