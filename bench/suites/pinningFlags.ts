/**
 * Tool pinning's flag rules (runspec/pins/flags.ts) on the real definitions of published
 * servers (test/fixtures/search-eval/corpus.json): how many tools a rule holds back at first
 * sight (false flags: none of these servers is poisoned) and how many it marks for review; and
 * beside them, each poisoning variant of the tests caught and its near-miss left clean.
 */
import { fileURLToPath } from 'node:url';
import { definitionOf } from '../../server/runspec/pins/fingerprint.js';
import { blocksOnSight, FLAG_RULES, flagsOf, type Flag, type FlagRule } from '../../server/runspec/pins/flags.js';
import { POISONING_VARIANTS } from '../poisoning.js';
import { loadCorpus } from '../searchQuality.js';
import type { Table } from '../stats.js';

const EVAL = fileURLToPath(new URL('../../../test/fixtures/search-eval', import.meta.url));

const share = (count: number, total: number) => `${count} (${((count / total) * 100).toFixed(2)} %)`;

export async function pinningFlags(): Promise<Table[]> {
	const servers = loadCorpus(EVAL);
	const flagged: Flag[][] = Object.values(servers).flatMap((server) => {
		const own = new Set(server.tools.map(({ name }) => name));
		return server.tools.map((tool) => flagsOf(definitionOf('tools', tool as unknown as Record<string, unknown>), own));
	});
	const total = flagged.length;
	const blocking = flagged.filter((flags) => blocksOnSight(flags)).length;
	const reviewed = flagged.filter((flags) => flags.length && !blocksOnSight(flags)).length;
	const rules = Object.keys(FLAG_RULES) as FlagRule[];
	const caught = POISONING_VARIANTS.filter(({ rule, real, own = [] }) => flagsOf({ name: 'tool', description: real }, new Set(['tool', ...own])).some((flag) => flag.rule === rule));
	const clean = POISONING_VARIANTS.filter(({ nearMiss, own = [] }) => flagsOf({ name: 'tool', description: nearMiss }, new Set(['tool', ...own])).length === 0);
	return [
		{
			title: `Tool pinning flags on ${total} real tools of ${Object.keys(servers).length} published servers`,
			columns: ['rule', 'severity', 'tools flagged', 'poisoning variants caught'],
			rows: rules.map((rule) => {
				const variants = POISONING_VARIANTS.filter((variant) => variant.rule === rule);
				return [rule, FLAG_RULES[rule].severity, share(flagged.filter((flags) => flags.some((flag) => flag.rule === rule)).length, total), `${caught.filter((variant) => variant.rule === rule).length} of ${variants.length}`];
			}),
			verdicts: [
				`held back at first sight (a block flag): ${share(blocking, total)} (target ≤ 1 %) — ${blocking / total <= 0.01 ? 'met' : 'MISSED'}`,
				`shown at review only: ${share(reviewed, total)}`,
				`poisoning variants caught: ${caught.length} of ${POISONING_VARIANTS.length} — ${caught.length === POISONING_VARIANTS.length ? 'met' : 'MISSED'}; near-misses clean: ${clean.length} of ${POISONING_VARIANTS.length}`,
			],
		},
	];
}
