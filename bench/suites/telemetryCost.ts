/**
 * What telemetry costs the proxy: the lean client's `tools/call` (echo) rounds of `bound`
 * against Hangar's proxy plain, with traces (at the default rate, a tenth, and every one) and
 * metrics by OTLP (to a collector on loopback that drops them) and `/metrics`, and with each
 * alone; more alternating rounds than `bound` and no peers, so that the A/B settles on a quiet
 * machine. CPU per call is the proxy process's own.
 */
import { median, ms, percentile, perSecond, verdict, type Table } from '../stats.js';
import { alternatingRounds, cpuPerCallOf, hangar, PHASES, pooled, rateOf, spread, startCollector, startWarm, type Front } from './proxyBound.js';

const ROUNDS = 8;

export async function telemetryCost(): Promise<Table[]> {
	const collector = await startCollector();
	const starts: Array<() => Promise<Front>> = [
		() => hangar('bench-otel-off', 'telemetry off'),
		() => hangar('bench-otel-on', 'traces (the default tenth) + metrics + /metrics', ['--otel-endpoint', collector.url, '--otel-enable-prometheus-metrics-path']),
		() => hangar('bench-otel-every', 'every trace + metrics + /metrics', ['--otel-endpoint', collector.url, '--otel-enable-prometheus-metrics-path', '--otel-sampling-rate', '1']),
		() => hangar('bench-otel-traces', 'traces only (the default tenth)', ['--otel-endpoint', collector.url, '--otel-tracing-enabled']),
		() => hangar('bench-otel-metrics', 'metrics only (/metrics)', ['--otel-enable-prometheus-metrics-path']),
		// A second process of the two the verdicts compare: two identical processes differ by up to
		// 15 % on this machine, so the verdicts pool both of each side (the spread lines show it).
		() => hangar('bench-otel-off-again', 'telemetry off, a second process'),
		() => hangar('bench-otel-on-again', 'traces (the default tenth) + metrics + /metrics, a second process', ['--otel-endpoint', collector.url, '--otel-enable-prometheus-metrics-path']),
	];
	const fronts: Front[] = [];
	try {
		await startWarm(starts, fronts);
		const tallies = await alternatingRounds(fronts, ROUNDS);
		const rows = fronts.map((front, index) => [
			front.name,
			...PHASES.flatMap((_, phaseIndex) => {
				const tally = tallies[index]![phaseIndex]!;
				return [ms(median(tally.latencies)), ms(percentile(tally.latencies, 99)), perSecond(rateOf(tally)), `${Math.round(cpuPerCallOf(tally))} µs`];
			}),
		]);
		const [off, on] = tallies;
		const [offAgain, onAgain] = tallies.slice(-2);
		const verdicts = PHASES.flatMap((phase, index) => {
			const plain = pooled(off![index]!, offAgain![index]!);
			const traced = pooled(on![index]!, onAgain![index]!);
			return [
				verdict(`${phase.label}: throughput with telemetry on vs off`, rateOf(traced) / rateOf(plain), 0.95, true),
				verdict(`${phase.label}: CPU per call with telemetry on vs off`, cpuPerCallOf(traced) / cpuPerCallOf(plain), 1.05),
				`${phase.label}: the spread, ${spread(off![index]!, offAgain![index]!)} between the two plain proxies, ${spread(on![index]!, onAgain![index]!)} between the two with telemetry`,
			];
		});
		return [
			{
				title: `Telemetry's cost: tools/call (echo) from a lean client through Hangar's proxy to the same containerised stdio server, ${ROUNDS} alternating rounds (after one unmeasured) of ${PHASES.map((phase) => `${phase.label} (${phase.calls.toLocaleString('en-US')} calls)`).join(', ')}; CPU is the proxy process's own per call`,
				columns: ['proxy', ...PHASES.flatMap((phase) => [`${phase.label} p50`, 'p99', 'calls/s', 'CPU/call'])],
				rows,
				verdicts,
			},
		];
	} finally {
		for (const front of fronts) {
			front.session.close();
			await front.stop();
		}
		collector.close();
	}
}
