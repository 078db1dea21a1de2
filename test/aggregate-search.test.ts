/**
 * find_tool's ranking (backends/aggregate/search.ts) on the search evaluation: the real tool
 * definitions of published MCP servers (test/fixtures/search-eval/corpus.json, re-created by
 * scripts/search-corpus.mjs) and requests written from each server's README, in a dev set the
 * ranking is tuned on and a held-out set it is never tuned on. The bench's search suite prints
 * the same figures beside a plain BM25.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadSearchEval, plainBm25, quality } from '../bench/searchQuality.js';
import { ToolIndex } from '../server/proxy/backends/aggregate/search.js';

const evaluation = loadSearchEval(fileURLToPath(new URL('./fixtures/search-eval', import.meta.url)));
const names = new Set(evaluation.tools.map(({ tool }) => tool.name));

describe('the search evaluation', () => {
	it('is real and large enough to mean something: 40 servers or more, 300 requests or more, each naming tools the corpus has', () => {
		expect(Object.keys(evaluation.servers).length).toBeGreaterThanOrEqual(40);
		expect(evaluation.tools.length).toBeGreaterThanOrEqual(700);
		expect(evaluation.dev.length + evaluation.heldOut.length).toBeGreaterThanOrEqual(300);
		for (const request of [...evaluation.dev, ...evaluation.heldOut]) {
			expect(request.expected.length, request.query).toBeGreaterThan(0);
			for (const name of request.expected) expect(names.has(name), `${request.query} expects ${name}`).toBe(true);
		}
		const queries = [...evaluation.dev, ...evaluation.heldOut].map(({ query }) => query.toLowerCase());
		expect(queries.filter((query, at) => queries.indexOf(query) !== at)).toEqual([]);
	});
});

describe('find_tool ranking', () => {
	const index = new ToolIndex(evaluation.tools, (entry) => entry);
	const ours = (query: string) => index.find(query, 50).map((entry) => entry.tool.name);

	it('finds held-out requests better than a plain BM25, and at least as the bench records', () => {
		const heldOut = quality(evaluation.heldOut, ours);
		const baseline = quality(evaluation.heldOut, plainBm25(evaluation.tools));
		expect(heldOut.at5, `missed: ${heldOut.misses.join('; ')}`).toBeGreaterThan(baseline.at5);
		expect(heldOut.mrr).toBeGreaterThan(baseline.mrr);
		expect(heldOut.at5).toBeGreaterThanOrEqual(HELD_OUT_FLOOR.at5);
		expect(heldOut.at1).toBeGreaterThanOrEqual(HELD_OUT_FLOOR.at1);
	});

	it('never returns a hidden tool, even asked for by its name', () => {
		const hidden = new Set(evaluation.tools.filter(({ member }) => member === 'github' || member === 'gitlab').map(({ tool }) => tool.name));
		const visible = new ToolIndex(
			evaluation.tools.filter(({ tool }) => !hidden.has(tool.name)),
			(entry) => entry,
		);
		for (const query of [...hidden, ...evaluation.dev.map(({ query }) => query)]) {
			expect(visible.find(query, 50).filter(({ tool }) => hidden.has(tool.name))).toEqual([]);
		}
		expect(visible.find('open an issue about the bug', 50).length).toBeGreaterThan(0);
	});
});

/** What the held-out set must keep (docs/benchmarks.md has the latest figures): a drop below is a regression. */
const HELD_OUT_FLOOR = { at5: 0.8, at1: 0.55 };
