/**
 * The search-mode aggregate's ranking (`find_tool`, backends/aggregate/search.ts) on the
 * search-quality fixture: real tools of 22 servers and user-phrased queries, the same the
 * bench's search suite measures against a plain BM25.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadSearchFixture, plainBm25, recall } from '../bench/searchQuality.js';
import { ToolIndex } from '../server/proxy/backends/aggregate/search.js';

const fixture = loadSearchFixture(fileURLToPath(new URL('./fixtures/search', import.meta.url)));

describe('find_tool ranking', () => {
	it('finds the expected tool in the top 5 for at least 90 % of the fixture queries', () => {
		expect(fixture.tools.length).toBeGreaterThanOrEqual(500);
		expect(fixture.queries.length).toBeGreaterThanOrEqual(50);
		const index = new ToolIndex(fixture.tools);
		const ours = recall(fixture, (query) => index.find(query).map((tool) => tool.name));
		const baseline = recall(fixture, plainBm25(fixture.tools));
		expect(ours.at5, `missed: ${ours.misses.join('; ')}`).toBeGreaterThanOrEqual(0.9);
		expect(ours.at5 - baseline.at5).toBeGreaterThanOrEqual(0.15 - 1e-9);
	});

	it('never returns a hidden tool, even asked for by its name', () => {
		const hidden = new Set(fixture.tools.filter((tool) => /^(github|gitlab)_.*issue/.test(tool.name)).map((tool) => tool.name));
		const index = new ToolIndex(fixture.tools.filter((tool) => !hidden.has(tool.name)));
		for (const query of [...hidden, ...fixture.queries.map(({ query }) => query)]) {
			expect(index.find(query, 50).filter((tool) => hidden.has(tool.name))).toEqual([]);
		}
		expect(index.find('create issue on GitHub', 50).length).toBeGreaterThan(0);
	});
});
