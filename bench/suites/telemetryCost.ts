/**
 * What telemetry costs the proxy: the lean client's `tools/call` (echo) against Hangar's proxy
 * plain, with traces (at the default rate, a tenth, and every one) and metrics by OTLP (to a
 * collector on loopback that drops them) and `/metrics`, and with each alone, in alternating
 * rounds with no peers; then the verdicts' A/B, `SIDE_PROCESSES` processes off against as many
 * with traces and metrics on, in paired bursts (bench/rounds.ts). CPU per call is the proxy
 * process's own.
 */
import { alternatingRounds, cpuPerCallOf, pairedBursts, PHASES, rateOf, spread, startWarm, type Cycle, type Front } from '../rounds.js';
import { median, ms, percentile, perSecond, type Table } from '../stats.js';
import { hangar, moreSideStarts, SIDE_PROCESSES, sidesOf, startCollector, telemetryVerdicts } from './proxyBound.js';

const ROUNDS = 4;
const CYCLES = 30;

export async function telemetryCost(): Promise<Table[]> {
	const collector = await startCollector();
	const on = ['--otel-endpoint', collector.url, '--otel-enable-prometheus-metrics-path'];
	const starts: Array<() => Promise<Front>> = [
		() => hangar('bench-otel-off', 'telemetry off'),
		() => hangar('bench-otel-on', 'traces (the default tenth) + metrics + /metrics', on),
		() => hangar('bench-otel-every', 'every trace + metrics + /metrics', [...on, '--otel-sampling-rate', '1']),
		() => hangar('bench-otel-traces', 'traces only (the default tenth)', ['--otel-endpoint', collector.url, '--otel-tracing-enabled']),
		() => hangar('bench-otel-metrics', 'metrics only (/metrics)', ['--otel-enable-prometheus-metrics-path']),
		// A second process of each side of the verdicts' A/B: two identical processes differ by up
		// to 15 % on this machine (the spread lines show it).
		() => hangar('bench-otel-off-again', 'telemetry off, a second process'),
		() => hangar('bench-otel-on-again', 'traces (the default tenth) + metrics + /metrics, a second process', on),
	];
	const more = moreSideStarts(
		(index) => hangar(`bench-otel-off-more-${index}`, 'telemetry off, another process'),
		(index) => hangar(`bench-otel-on-more-${index}`, 'traces (the default tenth) + metrics + /metrics, another process', on),
	);
	const all: Front[] = [];
	try {
		await startWarm([...starts, ...more], all);
		const fronts = all.slice(0, starts.length);
		const tallies = await alternatingRounds(fronts, ROUNDS);
		const [off, traced] = sidesOf([fronts[0]!, fronts[5]!], [fronts[1]!, fronts[6]!], all.slice(starts.length));
		const cycles: Cycle[][] = [];
		for (const phase of PHASES) cycles.push(await pairedBursts(off, traced, phase, CYCLES));
		const rows = fronts.map((front, index) => [
			front.name,
			...PHASES.flatMap((_, phaseIndex) => {
				const tally = tallies[index]![phaseIndex]!;
				return [ms(median(tally.latencies)), ms(percentile(tally.latencies, 99)), perSecond(rateOf(tally)), `${Math.round(cpuPerCallOf(tally))} µs`];
			}),
		]);
		const verdicts = PHASES.flatMap((phase, index) => [
			...telemetryVerdicts(phase.label, cycles[index]!),
			`${phase.label}: in the rounds, the spread ${spread(tallies[0]![index]!, tallies[5]![index]!)} between the two plain proxies, ${spread(tallies[1]![index]!, tallies[6]![index]!)} between the two with telemetry`,
		]);
		return [
			{
				title: `Telemetry's cost: tools/call (echo) from a lean client through Hangar's proxy to the same containerised stdio server, ${ROUNDS} alternating rounds (after one unmeasured) of ${PHASES.map((phase) => `${phase.label} (${phase.calls.toLocaleString('en-US')} calls)`).join(', ')}; CPU is the proxy process's own per call. The verdicts: ${CYCLES} paired cycles of bursts per phase, ${SIDE_PROCESSES} processes off against ${SIDE_PROCESSES} on`,
				columns: ['proxy', ...PHASES.flatMap((phase) => [`${phase.label} p50`, 'p99', 'calls/s', 'CPU/call'])],
				rows,
				verdicts,
			},
		];
	} finally {
		for (const front of all) {
			front.session.close();
			await front.stop();
		}
		collector.close();
	}
}
