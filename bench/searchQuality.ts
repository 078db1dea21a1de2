/**
 * The search-quality fixture (test/fixtures/search/: real tools of 22 servers and user-phrased
 * queries) and the recall of a ranker over it, shared by the bench's search suite and the test.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import MiniSearch from 'minisearch';
import type { SearchableTool } from '../server/proxy/core/toolSearch.js';

export interface SearchQuery {
	readonly query: string;
	/** The exposed names of the tools that do it; any one counts. */
	readonly expected: readonly string[];
}

export interface SearchFixture {
	/** Every server's tools under the aggregate's default exposed name, `{server}_{name}`. */
	readonly tools: readonly SearchableTool[];
	readonly queries: readonly SearchQuery[];
}

export interface Recall {
	readonly at1: number;
	readonly at5: number;
	/** The queries whose expected tool is not in the top 5. */
	readonly misses: readonly string[];
}

export function loadSearchFixture(dir: string): SearchFixture {
	const { servers } = JSON.parse(readFileSync(join(dir, 'tools.json'), 'utf8')) as { servers: Record<string, { tools: SearchableTool[] }> };
	const { queries } = JSON.parse(readFileSync(join(dir, 'queries.json'), 'utf8')) as { queries: SearchQuery[] };
	const tools = Object.entries(servers).flatMap(([server, { tools }]) => tools.map((tool) => ({ ...tool, name: `${server}_${tool.name}` })));
	return { tools, queries };
}

/** Recall@1 and @5 of `rank` (a query to tool names, best first) over the fixture's queries. */
export function recall(fixture: SearchFixture, rank: (query: string) => readonly string[]): Recall {
	let at1 = 0;
	let at5 = 0;
	const misses: string[] = [];
	for (const { query, expected } of fixture.queries) {
		const found = rank(query);
		if (expected.includes(found[0] ?? '')) at1++;
		if (found.slice(0, 5).some((name) => expected.includes(name))) at5++;
		else misses.push(query);
	}
	return { at1: at1 / fixture.queries.length, at5: at5 / fixture.queries.length, misses };
}

/** The baseline: BM25 by MiniSearch with the library's defaults, over name and description only. */
export function plainBm25(tools: readonly SearchableTool[]): (query: string) => string[] {
	const search = new MiniSearch<{ id: number; name: string; description: string }>({ fields: ['name', 'description'] });
	search.addAll(tools.map((tool, id) => ({ id, name: tool.name, description: tool.description ?? '' })));
	return (query) => search.search(query).map((hit) => tools[hit.id as number]!.name);
}
