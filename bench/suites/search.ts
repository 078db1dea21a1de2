/**
 * find_tool on the search evaluation (test/fixtures/search-eval/: the real tools of published
 * servers and requests written from their READMEs): recall@1, @5, @10 and MRR on the dev set
 * (tuned on) and the held-out set (never tuned on), beside a plain BM25 in the same run; then
 * what a search costs from the index the aggregate builds once per list change, at the corpus's
 * size and at 5,000 tools, with the index's build time and memory.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolIndex, type IndexedTool } from '../../server/proxy/backends/aggregate/search.js';
import { openSession } from '../lean.js';
import { benchEnv, runHangar, spawnHttp } from '../processes.js';
import { loadSearchEval, plainBm25, quality, type Quality, type SearchRequest } from '../searchQuality.js';
import { median, percentile, timed, type Table } from '../stats.js';

const EVAL = fileURLToPath(new URL('../../../test/fixtures/search-eval', import.meta.url));
/** The corpus's servers replayed by the official SDK's server (the fixture the tests use). */
const REPLAY = fileURLToPath(new URL('../../../test/fixtures/workloads/replay-server.mjs', import.meta.url));
/** Members the corpus's servers are spread over, and find_tool calls per request timed over HTTP. */
const HTTP_MEMBERS = 4;
const HTTP_CALLS = 40;

const percent = (share: number) => `${(share * 100).toFixed(1)} %`;
const row = (ranker: string, set: string, measured: Quality) => [ranker, set, String(measured.count), percent(measured.at1), percent(measured.at5), percent(measured.at10), measured.mrr.toFixed(3)];

/** `count` tools made of the corpus's, renamed per copy (`c2_…`), so that a large index holds real texts. */
function scaled(tools: readonly IndexedTool[], count: number): IndexedTool[] {
	return Array.from({ length: count }, (_, at) => {
		const { tool, member, context } = tools[at % tools.length]!;
		const copy = Math.floor(at / tools.length);
		return { tool: { ...tool, name: copy ? `c${copy}_${tool.name}` : tool.name }, member: copy ? `c${copy}_${member}` : member, context };
	});
}

function searchCost(tools: readonly IndexedTool[], requests: readonly SearchRequest[]): string[] {
	globalThis.gc?.();
	const heapBefore = process.memoryUsage().heapUsed;
	const buildStarted = performance.now();
	const index = new ToolIndex(tools, (entry) => entry);
	const build = performance.now() - buildStarted;
	globalThis.gc?.();
	const heap = process.memoryUsage().heapUsed - heapBefore;
	for (const { query } of requests.slice(0, 20)) index.find(query); // warm-up
	const samples: number[] = [];
	for (let round = 0; round < 3; round++) {
		for (const { query } of requests) {
			const started = performance.now();
			index.find(query);
			samples.push(performance.now() - started);
		}
	}
	return [String(tools.length), `${build.toFixed(0)} ms`, globalThis.gc ? `${(heap / 1024 / 1024).toFixed(1)} MiB` : 'run with --expose-gc', `${median(samples).toFixed(2)} ms`, `${percentile(samples, 95).toFixed(2)} ms`];
}

/**
 * find_tool over HTTP: a search-mode aggregate over the corpus's servers (replayed as remote
 * workloads), called by the lean client; each request's first call builds nothing (the index is
 * made when the list changes), and the rest are timed.
 */
async function searchOverHttp(servers: readonly string[], requests: readonly SearchRequest[]): Promise<string[]> {
	const env = benchEnv();
	const replay = await spawnHttp([REPLAY, join(EVAL, 'corpus.json')]);
	const group = 'bench-search';
	try {
		await runHangar(['group', 'create', group], env);
		for (let at = 0; at < HTTP_MEMBERS; at++) {
			const chunk = servers.filter((_, index) => index % HTTP_MEMBERS === at);
			await runHangar(['run', `${replay.url}/${chunk.join('+')}/mcp`, '--name', `corpus${at}`, '--group', group, '--json'], env);
		}
		const aggregation = join(env.HANGAR_HOME!, 'aggregation.json');
		await writeFile(aggregation, JSON.stringify({ mode: 'search' }));
		const { url } = JSON.parse(await runHangar(['run', `group://${group}`, '--name', 'search', '--group', group, '--aggregation', aggregation, '--json'], env)) as { url: string };
		const samples: number[] = [];
		for (const { query } of requests.slice(0, 10)) {
			const session = await openSession(url, {}, 'find_tool', { query });
			await session.call();
			samples.push(...(await timed(HTTP_CALLS, () => session.call())));
			session.close();
		}
		return [`${median(samples).toFixed(2)} ms`, `${percentile(samples, 95).toFixed(2)} ms`];
	} finally {
		for (const name of ['search', ...Array.from({ length: HTTP_MEMBERS }, (_, at) => `corpus${at}`)]) await runHangar(['rm', name], env).catch(() => undefined);
		replay.stop();
	}
}

export async function search(): Promise<Table[]> {
	const evaluation = loadSearchEval(EVAL);
	const index = new ToolIndex(evaluation.tools, (entry) => entry);
	const ours = (query: string) => index.find(query, 50).map((entry) => entry.tool.name);
	const baseline = plainBm25(evaluation.tools);
	const measured = {
		dev: quality(evaluation.dev, ours),
		heldOut: quality(evaluation.heldOut, ours),
		sets: evaluation.heldOutSets.map((set) => ({ file: set.file, ours: quality(set.requests, ours), bm25: quality(set.requests, baseline) })),
		bm25Dev: quality(evaluation.dev, baseline),
		bm25HeldOut: quality(evaluation.heldOut, baseline),
	};
	const requests = [...evaluation.dev, ...evaluation.heldOut];
	const small = searchCost(evaluation.tools, requests);
	const large = searchCost(scaled(evaluation.tools, 5_000), requests);
	const [httpP50, httpP95] = await searchOverHttp(Object.keys(evaluation.servers), evaluation.heldOut);
	return [
		{
			title: `find_tool ranking: ${Object.keys(evaluation.servers).length} published servers, ${evaluation.tools.length} tools; ${evaluation.dev.length} dev and ${evaluation.heldOut.length} held-out requests`,
			columns: ['ranker', 'requests', 'count', 'recall@1', 'recall@5', 'recall@10', 'MRR'],
			rows: [
				row('Hangar find_tool', 'dev (tuned on)', measured.dev),
				...measured.sets.map((set) => row('Hangar find_tool', `held-out ${set.file}`, set.ours)),
				row('Hangar find_tool', 'held-out, all', measured.heldOut),
				row('plain BM25 (name + description, MiniSearch defaults)', 'dev', measured.bm25Dev),
				...measured.sets.map((set) => row('plain BM25 (name + description, MiniSearch defaults)', `held-out ${set.file}`, set.bm25)),
				row('plain BM25 (name + description, MiniSearch defaults)', 'held-out, all', measured.bm25HeldOut),
			],
			verdicts: [
				`held-out recall@5: ${percent(measured.heldOut.at5)} (target ≥ 85 %) — ${measured.heldOut.at5 >= 0.85 ? 'met' : 'MISSED'}`,
				`held-out recall@1: ${percent(measured.heldOut.at1)} (target ≥ 60 %) — ${measured.heldOut.at1 >= 0.6 ? 'met' : 'MISSED'}`,
				`held-out requests missed in the top 5: ${measured.heldOut.misses.join('; ') || 'none'}`,
			],
		},
		{
			title: 'find_tool in process (one index per list change, searched per call), and over HTTP through a search-mode aggregate of the corpus',
			columns: ['where', 'tools', 'index build', 'index memory', 'search p50', 'search p95'],
			rows: [
				['in process', ...small],
				['in process', ...large],
				[`over HTTP, lean client, ${HTTP_MEMBERS} members`, small[0]!, '', '', httpP50!, httpP95!],
			],
			verdicts: [
				`p50 in process at ${small[0]} tools: ${small[3]} (target ≤ 2 ms) — ${Number.parseFloat(small[3]!) <= 2 ? 'met' : 'MISSED'}`,
				`p50 in process at 5,000 tools: ${large[3]} (target ≤ 5 ms) — ${Number.parseFloat(large[3]!) <= 5 ? 'met' : 'MISSED'}`,
				`p50 over HTTP at ${small[0]} tools: ${httpP50} (target ≤ 5 ms) — ${Number.parseFloat(httpP50!) <= 5 ? 'met' : 'MISSED'}`,
			],
		},
	];
}
