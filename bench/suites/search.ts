/**
 * The search-mode aggregate's ranking (`find_tool`) against a plain BM25 (MiniSearch's defaults
 * over name and description) on the same fixture in the same run: recall@1 and recall@5 of the
 * fixture's user-phrased queries over 504 real tools (test/fixtures/search/).
 */
import { fileURLToPath } from 'node:url';
import { ToolIndex } from '../../server/proxy/backends/aggregate/search.js';
import { loadSearchFixture, plainBm25, recall } from '../searchQuality.js';
import type { Table } from '../stats.js';

const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/search', import.meta.url));

const percent = (share: number) => `${(share * 100).toFixed(1)} %`;

export async function search(): Promise<Table[]> {
	const fixture = loadSearchFixture(FIXTURE);
	const index = new ToolIndex(fixture.tools);
	const ours = recall(fixture, (query) => index.find(query).map((tool) => tool.name));
	const baseline = recall(fixture, plainBm25(fixture.tools));
	const gain = ours.at5 - baseline.at5;
	return [
		{
			title: `find_tool ranking: ${fixture.queries.length} queries over ${fixture.tools.length} tools`,
			columns: ['ranker', 'recall@1', 'recall@5'],
			rows: [
				['Hangar find_tool', percent(ours.at1), percent(ours.at5)],
				['plain BM25 (name + description, MiniSearch defaults)', percent(baseline.at1), percent(baseline.at5)],
			],
			verdicts: [
				`recall@5: ${percent(ours.at5)} (target ≥ 90 %) — ${ours.at5 >= 0.9 ? 'met' : 'MISSED'}`,
				`recall@5 over plain BM25: +${(gain * 100).toFixed(1)} points (target ≥ +15) — ${gain >= 0.15 - 1e-9 ? 'met' : 'MISSED'}`,
				`missed in the top 5: ${ours.misses.join('; ') || 'none'}`,
			],
		},
	];
}
