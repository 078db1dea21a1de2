/**
 * A proxy's metrics, counted in place and handed to OpenTelemetry's readers (OTLP, Prometheus)
 * when they collect, as a `MetricProducer`. The SDK's instruments hash a call's attributes on
 * every recording; here a call costs three map look-ups and a few increments, and each series
 * builds its attributes once.
 *
 * - `mcp.server.operation.duration` (histogram, seconds, with the buckets the MCP semantic
 *   conventions advise) and `hangar.proxy.requests` (counter), by method, tool, status and error
 *   code;
 * - `hangar.proxy.denials` (counter), by reason and method;
 * - `hangar.proxy.sessions.active` (up-down counter), read when collected;
 * - `hangar.proxy.upstream.restarts` (counter);
 * - `hangar.proxy.guardrail.findings` (counter), by rule, action and direction.
 */
import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import { hrTime } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import { AggregationTemporality, DataPointType, type CollectionResult, type DataPoint, type Histogram, type MetricData, type MetricProducer } from '@opentelemetry/sdk-metrics';

const SCOPE = { name: 'hangar-proxy' };
/** Upper bounds (inclusive), in seconds: the MCP semantic conventions' advice for this histogram. */
const BOUNDARIES = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
/** Request series kept at most (tool names come from clients); the calls beyond share one. */
const MAX_SERIES = 2_000;

/**
 * A method or tool name kept as a label: a valid MCP tool name's characters (plus `/` of method
 * names), at most 128 of them. Anything else (a 200-character name, spaces, control characters)
 * is counted in the overflow series, so no client makes a label, or `/metrics`, large.
 */
export const MAX_LABEL_LENGTH = 128;
const LABEL = new RegExp(`^[A-Za-z0-9_./-]{1,${MAX_LABEL_LENGTH}}$`);

/** What became of a request: `ok`, `error` (a JSON-RPC error from the server), or why the proxy refused it. */
export type RequestStatus = 'ok' | 'error' | 'denied' | 'rate_limited' | 'unauthorized';

class RequestSeries {
	readonly counts: number[] = new Array<number>(BOUNDARIES.length + 1).fill(0);
	count = 0;
	sum = 0;
	min = Infinity;
	max = -Infinity;

	constructor(readonly attributes: Attributes) {}

	add(seconds: number): void {
		let bucket = 0;
		while (bucket < BOUNDARIES.length && seconds > BOUNDARIES[bucket]!) bucket++;
		this.counts[bucket]!++;
		this.count++;
		this.sum += seconds;
		if (seconds < this.min) this.min = seconds;
		if (seconds > this.max) this.max = seconds;
	}
}

export class ProxyMetrics implements MetricProducer {
	/** Method → tool (or '') → status and error code → series. */
	readonly #requests = new Map<string, Map<string, Map<string, RequestSeries>>>();
	#seriesCount = 0;
	#overflow: RequestSeries | undefined;
	readonly #denials = new Map<string, { readonly attributes: Attributes; count: number }>();
	#restarts = 0;
	/** `rule action direction` → series; rules come from the proxy's own table, so they are few. */
	readonly #guardrails = new Map<string, { readonly attributes: Attributes; count: number }>();
	readonly #startTime: HrTime = hrTime();

	constructor(
		private readonly resource: Resource,
		private readonly sessions: () => number,
	) {}

	/** One request answered (or refused) after `seconds`; `errorCode` is its JSON-RPC error's. */
	request(method: string, tool: string | undefined, status: RequestStatus, errorCode: number | undefined, seconds: number): void {
		const outcome = errorCode === undefined ? status : `${status} ${errorCode}`;
		const labelled = LABEL.test(method) && (tool === undefined || LABEL.test(tool));
		const series = !labelled ? this.#overflowSeries() : (this.#requests.get(method)?.get(tool ?? '')?.get(outcome) ?? this.#newSeries(method, tool, status, errorCode, outcome));
		series.add(seconds);
		if (status === 'denied' || status === 'rate_limited') this.#denied(status === 'denied' ? 'authorization' : 'rate_limit', method);
	}

	/** The server came back after it was lost. */
	restarted(): void {
		this.#restarts++;
	}

	/** A guardrail acted on a finding of `rule` (or `oversized`) in a `direction` (`request`, `response`). */
	guardrailFinding(rule: string, action: string, direction: string): void {
		const key = `${rule} ${action} ${direction}`;
		let entry = this.#guardrails.get(key);
		if (!entry) this.#guardrails.set(key, (entry = { attributes: { rule, action, direction }, count: 0 }));
		entry.count++;
	}

	collect(): Promise<CollectionResult> {
		const startTime = this.#startTime;
		const endTime = hrTime();
		const point = <T>(attributes: Attributes, value: T): DataPoint<T> => ({ startTime, endTime, attributes, value });
		const series = [...this.#requests.values()].flatMap((byTool) => [...byTool.values()].flatMap((byOutcome) => [...byOutcome.values()]));
		if (this.#overflow) series.push(this.#overflow);
		const metrics: MetricData[] = [
			sum('hangar.proxy.sessions.active', 'Client sessions open', false, [point({}, this.sessions())]),
			sum('hangar.proxy.upstream.restarts', 'Times the MCP server came back after being lost', true, [point({}, this.#restarts)]),
		];
		if (series.length) {
			metrics.push({
				descriptor: { name: 'mcp.server.operation.duration', description: 'How long the proxy took to answer an MCP request', unit: 's', valueType: ValueType.DOUBLE },
				aggregationTemporality: AggregationTemporality.CUMULATIVE,
				dataPointType: DataPointType.HISTOGRAM,
				dataPoints: series.map(({ attributes, counts, count, sum, min, max }) =>
					point<Histogram>(attributes, { buckets: { boundaries: BOUNDARIES, counts: [...counts] }, count, sum, min, max }),
				),
			});
			metrics.push(sum('hangar.proxy.requests', 'MCP requests answered by the proxy', true, series.map(({ attributes, count }) => point(attributes, count))));
		}
		if (this.#denials.size) {
			metrics.push(sum('hangar.proxy.denials', 'Requests the proxy refused (authorization, rate limit)', true, [...this.#denials.values()].map(({ attributes, count }) => point(attributes, count))));
		}
		if (this.#guardrails.size) {
			metrics.push(sum('hangar.proxy.guardrail.findings', 'Secrets and oversized messages the guardrails acted on, by rule, action and direction', true, [...this.#guardrails.values()].map(({ attributes, count }) => point(attributes, count))));
		}
		return Promise.resolve({ resourceMetrics: { resource: this.resource, scopeMetrics: [{ scope: SCOPE, metrics }] }, errors: [] });
	}

	#newSeries(method: string, tool: string | undefined, status: RequestStatus, errorCode: number | undefined, outcome: string): RequestSeries {
		if (this.#seriesCount >= MAX_SERIES) return this.#overflowSeries();
		this.#seriesCount++;
		const attributes: Attributes = { 'mcp.method.name': method, status };
		if (tool !== undefined) attributes['gen_ai.tool.name'] = tool;
		if (errorCode !== undefined) attributes['error.type'] = String(errorCode);
		const series = new RequestSeries(attributes);
		let byTool = this.#requests.get(method);
		if (!byTool) this.#requests.set(method, (byTool = new Map()));
		let byOutcome = byTool.get(tool ?? '');
		if (!byOutcome) byTool.set(tool ?? '', (byOutcome = new Map()));
		byOutcome.set(outcome, series);
		return series;
	}

	#overflowSeries(): RequestSeries {
		return (this.#overflow ??= new RequestSeries({ 'otel.metric.overflow': true }));
	}

	#denied(reason: 'authorization' | 'rate_limit', method: string): void {
		// Methods come from clients too: past the limit, and unfit for a label, they share one series.
		let key = LABEL.test(method) ? `${reason} ${method}` : '';
		let entry = this.#denials.get(key);
		if (!entry && this.#denials.size >= MAX_SERIES) entry = this.#denials.get((key = ''));
		if (!entry) this.#denials.set(key, (entry = { attributes: key ? { reason, 'mcp.method.name': method } : { 'otel.metric.overflow': true }, count: 0 }));
		entry.count++;
	}
}

function sum(name: string, description: string, isMonotonic: boolean, dataPoints: DataPoint<number>[]): MetricData {
	return {
		descriptor: { name, description, unit: '', valueType: ValueType.INT },
		aggregationTemporality: AggregationTemporality.CUMULATIVE,
		dataPointType: DataPointType.SUM,
		isMonotonic,
		dataPoints,
	};
}
