/**
 * The search evaluation (test/fixtures/search-eval/): the real tool definitions of published MCP
 * servers (corpus.json, made by scripts/search-corpus.mjs) and requests written from each
 * server's README in a user's words, split into a dev set (tuned on) and a held-out set (never
 * tuned on). Shared by the bench's search and pinning suites and their tests.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import MiniSearch from 'minisearch';
import type { IndexedTool } from '../server/proxy/backends/aggregate/search.js';
import type { SearchableTool } from '../server/proxy/core/toolSearch.js';

export interface CorpusServer {
	readonly package: string;
	readonly version: string;
	/** The package's own description: what a registry entry says of the server. */
	readonly description?: string;
	readonly title?: string;
	readonly serverInfo?: { readonly name?: string; readonly title?: string; readonly version?: string };
	readonly instructions?: string;
	readonly tools: readonly SearchableTool[];
}

export interface SearchRequest {
	readonly query: string;
	/** The exposed names (`{server}_{tool}`) of the tools that do it; any one counts. */
	readonly expected: readonly string[];
}

export interface SearchEval {
	readonly servers: Readonly<Record<string, CorpusServer>>;
	/** Every tool under an aggregate's default exposed name, `{server}_{name}`, with its server's context. */
	readonly tools: readonly IndexedTool[];
	readonly dev: readonly SearchRequest[];
	/** Every held-out request, of every set. */
	readonly heldOut: readonly SearchRequest[];
	/** The held-out sets, oldest first (`requests.heldout*.json`): a fresh one is written each time the ranking changes. */
	readonly heldOutSets: ReadonlyArray<{ readonly file: string; readonly requests: readonly SearchRequest[] }>;
}

export interface Quality {
	readonly count: number;
	readonly at1: number;
	readonly at5: number;
	readonly at10: number;
	/** Mean reciprocal rank of the first expected tool (0 past the first 50). */
	readonly mrr: number;
	/** The requests whose expected tools are not in the top 5. */
	readonly misses: readonly string[];
}

const readJson = <T>(dir: string, file: string) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as T;

/** The published servers of the corpus, by id. */
export function loadCorpus(dir: string): Readonly<Record<string, CorpusServer>> {
	return readJson<{ servers: Record<string, CorpusServer> }>(dir, 'corpus.json').servers;
}

export function loadSearchEval(dir: string): SearchEval {
	const servers = loadCorpus(dir);
	const tools = Object.entries(servers).flatMap(([id, server]) =>
		server.tools.map((tool) => ({
			tool: { ...tool, name: `${id}_${tool.name}` },
			member: id,
			context: { title: server.title ?? server.serverInfo?.title, description: server.description, instructions: server.instructions },
		})),
	);
	const requests = (file: string) => readJson<{ requests: SearchRequest[] }>(dir, file).requests;
	const heldOutSets = readdirSync(dir)
		.filter((file) => /^requests\.heldout(?:-\d+)?\.json$/.test(file))
		.sort((a, b) => setNumber(a) - setNumber(b))
		.map((file) => ({ file, requests: requests(file) }));
	return { servers, tools, dev: requests('requests.dev.json'), heldOut: heldOutSets.flatMap((set) => set.requests), heldOutSets };
}

/** A held-out file's place in the order they were written: `requests.heldout.json` first, then `-2`, `-3`… */
const setNumber = (file: string) => Number(/-(\d+)\.json$/.exec(file)?.[1] ?? 1);

/** How well `rank` (a request to tool names, best first) finds the expected tools of `requests`. */
export function quality(requests: readonly SearchRequest[], rank: (query: string) => readonly string[]): Quality {
	let at1 = 0;
	let at5 = 0;
	let at10 = 0;
	let reciprocal = 0;
	const misses: string[] = [];
	for (const { query, expected } of requests) {
		const position = rank(query).findIndex((name) => expected.includes(name));
		if (position === 0) at1++;
		if (position >= 0 && position < 5) at5++;
		else misses.push(query);
		if (position >= 0 && position < 10) at10++;
		if (position >= 0) reciprocal += 1 / (position + 1);
	}
	const count = requests.length;
	return { count, at1: at1 / count, at5: at5 / count, at10: at10 / count, mrr: reciprocal / count, misses };
}

/** The baseline: BM25 by MiniSearch with the library's defaults, over name and description only. */
export function plainBm25(tools: readonly IndexedTool[]): (query: string) => string[] {
	const search = new MiniSearch<{ id: number; name: string; description: string }>({ fields: ['name', 'description'] });
	search.addAll(tools.map(({ tool }, id) => ({ id, name: tool.name, description: tool.description ?? '' })));
	return (query) => search.search(query).map((hit) => tools[hit.id as number]!.tool.name);
}
