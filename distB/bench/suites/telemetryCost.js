/**
 * What telemetry costs the proxy: the lean client's `tools/call` (echo) rounds of `bound`
 * against Hangar's proxy plain, with traces and metrics by OTLP (to a collector on loopback that
 * drops them) and `/metrics`, with each alone, and with a tenth of the traces sampled; more
 * alternating rounds than `bound` and no peers, so that the A/B settles on a quiet machine. CPU
 * per call is the proxy process's own. A second plain proxy shows how far two identical fronts
 * drift apart in the same run: a difference within that spread is not telemetry's.
 */
import { median, ms, percentile, perSecond, verdict } from '../stats.js';
import { alternatingRounds, hangar, PHASES, startCollector, startWarm } from './proxyBound.js';
const ROUNDS = 8;
export async function telemetryCost() {
    const collector = await startCollector();
    const starts = [
        () => hangar('bench-otel-off', 'telemetry off'),
        () => hangar('bench-otel-on', 'traces + metrics + /metrics', ['--otel-endpoint', collector.url, '--otel-enable-prometheus-metrics-path']),
        () => hangar('bench-otel-traces', 'traces only', ['--otel-endpoint', collector.url, '--otel-tracing-enabled']),
        () => hangar('bench-otel-metrics', 'metrics only (/metrics)', ['--otel-enable-prometheus-metrics-path']),
        () => hangar('bench-otel-sampled', 'traces sampled at 0.1 + metrics', ['--otel-endpoint', collector.url, '--otel-sampling-rate', '0.1']),
        // The same plain proxy again: how far two identical fronts drift apart in this run.
        () => hangar('bench-otel-off-again', 'telemetry off, a second proxy (the spread)'),
    ];
    const fronts = [];
    try {
        await startWarm(starts, fronts);
        const tallies = await alternatingRounds(fronts, ROUNDS);
        const rate = (tally) => tally.latencies.length / (tally.milliseconds / 1000);
        const cpuPerCall = (tally) => (tally.cpuSeconds * 1e6) / tally.latencies.length;
        const rows = fronts.map((front, index) => [
            front.name,
            ...PHASES.flatMap((_, phaseIndex) => {
                const tally = tallies[index][phaseIndex];
                return [ms(median(tally.latencies)), ms(percentile(tally.latencies, 99)), perSecond(rate(tally)), `${Math.round(cpuPerCall(tally))} µs`];
            }),
        ]);
        const [off, on] = tallies;
        const offAgain = tallies.at(-1);
        const verdicts = PHASES.flatMap((phase, phaseIndex) => [
            verdict(`${phase.label}: throughput with telemetry on vs off`, rate(on[phaseIndex]) / rate(off[phaseIndex]), 0.95, true),
            verdict(`${phase.label}: CPU per call with telemetry on vs off`, cpuPerCall(on[phaseIndex]) / cpuPerCall(off[phaseIndex]), 1.05),
            `${phase.label}: the spread, two plain proxies: throughput ${(rate(offAgain[phaseIndex]) / rate(off[phaseIndex])).toFixed(2)}×, CPU per call ${(cpuPerCall(offAgain[phaseIndex]) / cpuPerCall(off[phaseIndex])).toFixed(2)}×`,
        ]);
        return [
            {
                title: `Telemetry's cost: tools/call (echo) from a lean client through Hangar's proxy to the same containerised stdio server, ${ROUNDS} alternating rounds of ${PHASES.map((phase) => `${phase.label} (${phase.calls.toLocaleString('en-US')} calls)`).join(', ')}; CPU is the proxy process's own per call`,
                columns: ['proxy', ...PHASES.flatMap((phase) => [`${phase.label} p50`, 'p99', 'calls/s', 'CPU/call'])],
                rows,
                verdicts,
            },
        ];
    }
    finally {
        for (const front of fronts) {
            front.session.close();
            await front.stop();
        }
        collector.close();
    }
}
//# sourceMappingURL=telemetryCost.js.map