/**
 * The proxy's spans, recorded without the SDK's span objects. A sampled span is a few strings
 * and a start time until it ends, then the plain record that the official OTLP exporter
 * serialises, sent in batches; an unsampled one is nothing until an upstream request asks for its
 * `traceparent`. The SDK's tracer (a context and a span object per span, attribute sanitising,
 * span processors, its own metrics) made traces cost the proxy 35–55 µs of CPU per call on the
 * lean bench, 16–42 µs without it (docs/benchmarks.md); the daemon's few spans keep the SDK.
 *
 * Sampling is parent-based like the SDK's default: a client's `traceparent` decides, else the
 * configured rate.
 */
import { randomFillSync } from 'node:crypto';
import { SpanStatusCode, TraceFlags, type Attributes, type HrTime, type SpanContext, type SpanKind, type SpanStatus } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../../log.js';
import type { CallSpan } from '../chain.js';

/** Spans per export; a busy proxy fills one in well under a second. */
const BATCH_SIZE = 512;
/** Spans kept while an export is under way; beyond, new ones are dropped (and counted). */
const MAX_QUEUE = 8_192;
const EXPORT_DELAY_MS = 2_000;
const SCOPE = { name: 'hangar-proxy' };

/** Random ids from a pool refilled 4 KiB at a time (one call to the CSPRNG per ~170 spans). */
const pool = Buffer.alloc(4_096);
let poolOffset = pool.length;
function randomId(bytes: 8 | 16): string {
	for (;;) {
		if (poolOffset + bytes > pool.length) {
			randomFillSync(pool);
			poolOffset = 0;
		}
		const id = pool.toString('hex', poolOffset, (poolOffset += bytes));
		// All zeros is the invalid id of W3C Trace Context.
		if (/[^0]/.test(id)) return id;
	}
}

function hrTime(milliseconds: number): HrTime {
	const seconds = Math.floor(milliseconds / 1_000);
	return [seconds, Math.min(999_999_999, Math.round((milliseconds - seconds * 1_000) * 1e6))];
}

/** What a sampled span is called and says; asked only when the span is sampled. */
export type SpanDescription = () => { readonly name: string; readonly attributes: Attributes };

function traceparentOf(traceId: string, spanId: string, sampled: boolean, traceState: SpanContext['traceState']): Record<string, string> {
	const traceparent = `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
	const serialized = traceState?.serialize();
	return serialized ? { traceparent, tracestate: serialized } : { traceparent };
}

/** A span that is recorded: its ids, name and attributes, and the time it started. */
export class RecordedSpan implements CallSpan {
	readonly sampled = true;
	readonly context: SpanContext;
	readonly name: string;
	readonly attributes: Attributes;
	readonly #recorder: SpanRecorder;
	readonly #startedAt = performance.now();
	#status: SpanStatus = { code: SpanStatusCode.UNSET };

	constructor(
		recorder: SpanRecorder,
		readonly kind: SpanKind,
		describe: SpanDescription,
		readonly parent: SpanContext | undefined,
	) {
		this.#recorder = recorder;
		this.context = { traceId: parent?.traceId ?? randomId(16), spanId: randomId(8), traceFlags: TraceFlags.SAMPLED, traceState: parent?.traceState };
		({ name: this.name, attributes: this.attributes } = describe());
	}

	/** The headers that make this span the parent of an upstream request. */
	get headers(): Record<string, string> {
		const { traceId, spanId, traceState } = this.context;
		return traceparentOf(traceId, spanId, true, traceState);
	}

	/** A child of this span. */
	child(kind: SpanKind, describe: SpanDescription): RecordedSpan {
		return new RecordedSpan(this.#recorder, kind, describe, this.context);
	}

	fail(message: string): void {
		this.#status = { code: SpanStatusCode.ERROR, message };
	}

	end(): void {
		const endedAt = performance.now();
		const origin = performance.timeOrigin;
		const { context, parent, name, kind, attributes } = this;
		this.#recorder.add({
			name,
			kind,
			spanContext: () => context,
			parentSpanContext: parent,
			startTime: hrTime(origin + this.#startedAt),
			endTime: hrTime(origin + endedAt),
			duration: hrTime(endedAt - this.#startedAt),
			status: this.#status,
			attributes,
			links: [],
			events: [],
			ended: true,
			resource: this.#recorder.resource,
			instrumentationScope: SCOPE,
			droppedAttributesCount: 0,
			droppedEventsCount: 0,
			droppedLinksCount: 0,
		});
	}
}

/**
 * A span that is not recorded, which costs nothing until an upstream request asks for its
 * `traceparent`: the server then hears, with fresh ids (or in the client's trace), that the trace
 * is not sampled, as the SDK would tell it.
 */
export class UnsampledSpan implements CallSpan {
	readonly sampled = false;

	constructor(readonly parent?: SpanContext) {}

	get headers(): Record<string, string> {
		return traceparentOf(this.parent?.traceId ?? randomId(16), randomId(8), false, this.parent?.traceState);
	}
}

/** The unsampled span of every call that came with no trace of its own. */
const UNSAMPLED_ROOT = new UnsampledSpan();

export class SpanRecorder {
	#queue: ReadableSpan[] = [];
	#exporting: Promise<void> | undefined;
	#timer: NodeJS.Timeout | undefined;
	#dropped = 0;

	constructor(
		private readonly exporter: SpanExporter,
		readonly resource: Resource,
		private readonly samplingRate: number,
		private readonly log: Logger,
	) {}

	/**
	 * A span starting now: under a client's span when it sent one (whose flag decides the
	 * sampling), else the root of a new trace, sampled at the configured rate. `describe` is
	 * asked only for a sampled span.
	 */
	start(kind: SpanKind, describe: SpanDescription, parent?: SpanContext): RecordedSpan | UnsampledSpan {
		const sampled = parent ? (parent.traceFlags & TraceFlags.SAMPLED) !== 0 : this.samplingRate >= 1 || Math.random() < this.samplingRate;
		if (sampled) return new RecordedSpan(this, kind, describe, parent);
		return parent ? new UnsampledSpan(parent) : UNSAMPLED_ROOT;
	}

	add(span: ReadableSpan): void {
		if (this.#queue.length >= MAX_QUEUE) {
			this.#dropped++;
			return;
		}
		this.#queue.push(span);
		if (this.#queue.length >= BATCH_SIZE) this.#export();
		else this.#timer ??= setTimeout(() => this.#export(), EXPORT_DELAY_MS).unref();
	}

	/** Sends what is queued, then stops the exporter. */
	async shutdown(): Promise<void> {
		while (this.#exporting || this.#queue.length) await (this.#exporting ?? this.#export());
		await this.exporter.shutdown();
	}

	#export(): Promise<void> | undefined {
		clearTimeout(this.#timer);
		this.#timer = undefined;
		if (this.#exporting || !this.#queue.length) return this.#exporting;
		const batch = this.#queue.splice(0, BATCH_SIZE);
		this.#exporting = new Promise<void>((resolve) =>
			this.exporter.export(batch, (result) => {
				if (result.code !== ExportResultCode.SUCCESS) this.log.debug(`cannot export ${batch.length} spans: ${result.error?.message ?? 'failed'}`);
				resolve();
			}),
		).then(() => {
			this.#exporting = undefined;
			if (this.#dropped) {
				this.log.warn(`${this.#dropped} spans were dropped while the trace exporter was behind`);
				this.#dropped = 0;
			}
			if (this.#queue.length >= BATCH_SIZE) this.#export();
			else if (this.#queue.length) this.#timer ??= setTimeout(() => this.#export(), EXPORT_DELAY_MS).unref();
		});
		return this.#exporting;
	}
}
