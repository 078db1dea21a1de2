/**
 * The proxy's always-on call statistics, which `hangar top` and the editor read whether or not
 * OpenTelemetry is on: calls, errors and a fixed latency histogram per second over the last
 * minute, in preallocated typed arrays (recording a call allocates nothing), plus totals and
 * the last error. Served on `STATS_PATH` to holders of the token in the proxy's record.
 */
import { timingSafeEqual } from 'node:crypto';
import type { HttpHandler, McpCall, McpMiddleware } from '../chain.js';
import type { JsonRpcResponse } from '../../core/jsonrpc.js';
import { MAX_STATS_WINDOW_SECONDS, type ProxyStats } from '../../../runspec/stats.js';

/** Upper bounds of the latency buckets, in milliseconds; one more bucket holds the rest. */
const BOUNDS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000];
const BUCKETS = BOUNDS_MS.length + 1;
const SLOTS = MAX_STATS_WINDOW_SECONDS;
const MESSAGE_MAX = 300;

function bucketOf(ms: number): number {
	let bucket = 0;
	while (bucket < BOUNDS_MS.length && ms > BOUNDS_MS[bucket]!) bucket++;
	return bucket;
}

/** What a failed tool call says: its first text content, else that it failed. */
function toolErrorText(result: Record<string, unknown> | undefined): string {
	const content = Array.isArray(result?.content) ? (result.content as Array<{ type?: unknown; text?: unknown }>) : [];
	const text = content.find((item) => item?.type === 'text' && typeof item.text === 'string')?.text;
	return typeof text === 'string' && text.trim() ? text.trim() : 'the tool reported an error';
}

/** Hears every call the statistics time (telemetry's metrics), so that a call is timed once. */
export type CallListener = (call: McpCall, response: JsonRpcResponse | undefined, ms: number) => void;

export class CallStats {
	private readonly calls = new Uint32Array(SLOTS);
	private readonly errors = new Uint32Array(SLOTS);
	private readonly maxMs = new Float64Array(SLOTS);
	private readonly histogram = new Uint32Array(SLOTS * BUCKETS);
	/** The second the newest slot belongs to. */
	private second: number;
	private totalCalls = 0;
	private totalErrors = 0;
	private totalToolCalls = 0;
	private totalToolErrors = 0;
	private lastError: ProxyStats['last_error'];
	private readonly startedAt: number;

	constructor(
		private readonly now: () => number = Date.now,
		private readonly listener?: CallListener,
	) {
		this.startedAt = now();
		this.second = Math.floor(this.startedAt / 1000);
	}

	/** First in the MCP chain: times every call, refusals included. */
	readonly middleware: McpMiddleware = (call, next) => {
		const started = performance.now();
		const method = call.request.method;
		// Not an async function: one promise fewer per call on the hot path.
		return next(call).then(
			(response) => {
				const ms = performance.now() - started;
				this.record(ms, response, method, call.request.params?.name);
				this.listener?.(call, response, ms);
				return response;
			},
			(error: unknown) => {
				const ms = performance.now() - started;
				this.record(ms, undefined, method, call.request.params?.name);
				this.listener?.(call, undefined, ms);
				throw error;
			},
		);
	};

	/** Counts one answered request; `tool` is a `tools/call`'s tool name. */
	record(ms: number, response: JsonRpcResponse | undefined, method: string, tool?: unknown): void {
		const slot = this.advance();
		this.calls[slot]!++;
		this.totalCalls++;
		this.histogram[slot * BUCKETS + bucketOf(ms)]!++;
		if (ms > this.maxMs[slot]!) this.maxMs[slot] = ms;
		const toolCall = method === 'tools/call';
		if (toolCall) this.totalToolCalls++;
		const toolError = toolCall && response?.result?.isError === true;
		if (response && !response.error && !toolError) return;
		this.errors[slot]!++;
		this.totalErrors++;
		if (toolCall) this.totalToolErrors++;
		const at = new Date(this.now()).toISOString();
		const named = toolCall && typeof tool === 'string' ? { tool: tool.slice(0, MESSAGE_MAX) } : {};
		if (toolError) {
			this.lastError = { at, method, ...named, message: toolErrorText(response!.result).slice(0, MESSAGE_MAX) };
			return;
		}
		const error = response?.error;
		this.lastError = { at, method, ...named, code: error?.code ?? -32603, message: (error?.message ?? 'the proxy failed').slice(0, MESSAGE_MAX) };
	}

	/** The counts of the last `windowSeconds` seconds (the current one included). */
	snapshot(windowSeconds: number): ProxyStats {
		const newest = this.advance();
		// The seconds begun since the proxy started, the current one included.
		const lived = this.second - Math.floor(this.startedAt / 1000) + 1;
		const window = Math.max(1, Math.min(windowSeconds, SLOTS, lived));
		const histogram = new Array<number>(BUCKETS).fill(0);
		let calls = 0;
		let errors = 0;
		let maxMs = 0;
		for (let back = 0; back < window; back++) {
			const slot = (newest - back + SLOTS) % SLOTS;
			calls += this.calls[slot]!;
			errors += this.errors[slot]!;
			maxMs = Math.max(maxMs, this.maxMs[slot]!);
			for (let bucket = 0; bucket < BUCKETS; bucket++) histogram[bucket]! += this.histogram[slot * BUCKETS + bucket]!;
		}
		const quantile = (q: number): number | undefined => {
			if (!calls) return undefined;
			const rank = Math.ceil(q * calls);
			let seen = 0;
			for (let bucket = 0; bucket < BUCKETS; bucket++) {
				seen += histogram[bucket]!;
				// A bucket's upper bound, never more than the slowest call seen.
				if (seen >= rank) return Math.min(BOUNDS_MS[bucket] ?? maxMs, maxMs);
			}
			return maxMs;
		};
		return {
			window_seconds: window,
			calls,
			errors,
			calls_per_second: calls / window,
			p50_ms: quantile(0.5),
			p99_ms: quantile(0.99),
			total_calls: this.totalCalls,
			total_errors: this.totalErrors,
			total_tool_calls: this.totalToolCalls,
			total_tool_errors: this.totalToolErrors,
			since: new Date(this.startedAt).toISOString(),
			last_error: this.lastError,
		};
	}

	/** The slot of the current second, after clearing the seconds that passed without calls. */
	private advance(): number {
		const second = Math.floor(this.now() / 1000);
		// (A clock set back keeps counting into the newest second until it catches up.)
		if (second > this.second) {
			const passed = Math.min(second - this.second, SLOTS);
			for (let step = 1; step <= passed; step++) {
				const slot = (this.second + step) % SLOTS;
				this.calls[slot] = 0;
				this.errors[slot] = 0;
				this.maxMs[slot] = 0;
				this.histogram.fill(0, slot * BUCKETS, (slot + 1) * BUCKETS);
			}
			this.second = second;
		}
		return this.second % SLOTS;
	}

	/** `GET STATS_PATH?window=N` with `Authorization: Bearer <token>`; `serverProcesses` adds a stdio server's processes. */
	route(token: string, serverProcesses?: () => ProxyStats['server_processes']): HttpHandler {
		const expected = Buffer.from(`Bearer ${token}`);
		return async ({ request, response, url }) => {
			const given = Buffer.from(request.headers.authorization ?? '');
			if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
				response.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
				return;
			}
			const window = Number(url.searchParams.get('window') ?? 10);
			const seconds = Number.isInteger(window) && window >= 1 ? Math.min(window, SLOTS) : 10;
			response.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(JSON.stringify({ ...this.snapshot(seconds), server_processes: serverProcesses?.() }));
		};
	}
}
