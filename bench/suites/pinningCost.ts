/**
 * What tool pinning costs the proxy (#34): the lean client's `tools/call` (echo) through
 * Hangar's proxy with `tool_pinning: off` against `block` (the default), to the same
 * containerised stdio server. Each session lists the tools once when it opens, so under `block`
 * every call is looked up in the approved set. An A/B in paired bursts (bench/rounds.ts), two
 * processes a side; CPU per call is the proxy process's own.
 */
import { pairedBursts, pairedRatio, PHASES, pooled, rateOf, cpuPerCallOf, startWarm, type Front } from '../rounds.js';
import { median, ms, percentile, perSecond, verdict, type Table } from '../stats.js';
import { hangar } from './proxyBound.js';

/** Cycles per phase (`BENCH_PINNING_CYCLES`): fewer on a shared machine that cannot give the time. */
const CYCLES = Number(process.env.BENCH_PINNING_CYCLES ?? 30);

export async function pinningCost(): Promise<Table[]> {
	const starts: Array<() => Promise<Front>> = [
		() => hangar('bench-pins-off', 'tool pinning off', ['--tool-pinning', 'off']),
		() => hangar('bench-pins-on', 'tool pinning on (block)', ['--tool-pinning', 'block']),
		() => hangar('bench-pins-off-again', 'tool pinning off, a second process', ['--tool-pinning', 'off']),
		() => hangar('bench-pins-on-again', 'tool pinning on (block), a second process', ['--tool-pinning', 'block']),
	];
	const fronts: Front[] = [];
	try {
		await startWarm(starts, fronts);
		const [off, on] = [[fronts[0]!, fronts[2]!], [fronts[1]!, fronts[3]!]];
		const rows: string[][] = [];
		const verdicts: string[] = [];
		for (const phase of PHASES) {
			const cycles = await pairedBursts(off, on, phase, CYCLES);
			for (const [side, pick] of [['off', 'a'], ['on (block)', 'b']] as const) {
				const tally = cycles.map((cycle) => cycle[pick]).reduce(pooled);
				rows.push([phase.label, side, ms(median(tally.latencies)), ms(percentile(tally.latencies, 99)), perSecond(rateOf(tally)), `${Math.round(cpuPerCallOf(tally))} µs`]);
			}
			const throughput = pairedRatio(cycles, rateOf);
			const [low, high] = throughput.quartiles;
			verdicts.push(verdict(`${phase.label}: throughput with tool pinning on vs off`, throughput.median, 0.98, true, `middle half of ${cycles.length} paired cycles ${low.toFixed(2)}–${high.toFixed(2)}×`));
		}
		return [
			{
				title: `Tool pinning's cost: tools/call (echo) from a lean client through Hangar's proxy to the same containerised stdio server, pinning off against block, ${CYCLES} paired cycles of bursts per phase (${PHASES.map((phase) => `${phase.label}: ${(phase.calls / 10).toLocaleString('en-US')} calls a burst`).join(', ')}), two processes a side; CPU is the proxy process's own per call`,
				columns: ['phase', 'tool pinning', 'p50', 'p99', 'calls/s', 'CPU/call'],
				rows,
				verdicts,
			},
		];
	} finally {
		for (const front of fronts) {
			front.session.close();
			await front.stop();
		}
	}
}
