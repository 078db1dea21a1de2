/**
 * The proxy's spans, recorded without the SDK's span objects. A sampled span is a few strings
 * and a start time until it ends, then a few hundred bytes of OTLP protobuf in the batch that
 * will carry it (otlpSpans.ts); an unsampled one is nothing until an upstream request asks for
 * its `traceparent`. The SDK's tracer (a context and a span object per span, attribute
 * sanitising, span processors, its own metrics) made traces cost the proxy 35–55 µs of CPU per
 * call on the lean bench, 16–42 µs without it (docs/benchmarks.md); the daemon's few spans keep
 * the SDK.
 *
 * Sampling is parent-based like the SDK's default: a client's `traceparent` decides, else the
 * configured rate.
 */
import { randomFillSync } from 'node:crypto';
import { SpanStatusCode, TraceFlags, type SpanContext, type SpanKind } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { Logger } from '../../../log.js';
import type { CallSpan } from '../chain.js';
import { SpanBatch, type EncodedSpans, type FinishedSpan, type SpanAttributes } from './otlpSpans.js';

/** Where batches go: the OTLP sender's thread (otlpSender.ts), which the caller ends. */
export interface SpanExporter {
	export(spans: EncodedSpans, done: (result: ExportResult) => void): void;
}

/**
 * Spans per export (about half a megabyte). Each export is an HTTP request costing the sender's
 * thread as much as encoding a few hundred spans; with every call traced, batches of 512 cost
 * the proxy twice what these do.
 */
const BATCH_SIZE = 2_048;
/** Full batches kept while an export is under way; beyond, new spans are dropped (and counted). */
const MAX_WAITING = 4;
const EXPORT_DELAY_MS = 2_000;

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

/** What a span is called and says. */
export interface SpanDescription {
	readonly name: string;
	readonly attributes: SpanAttributes;
}

/** Describes a span by its subject (a call); asked only when the span is sampled. */
export type Describe<T> = (subject: T) => SpanDescription;

function traceparentOf(traceId: string, spanId: string, sampled: boolean, traceState: SpanContext['traceState']): Record<string, string> {
	const traceparent = `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
	const serialized = traceState?.serialize();
	return serialized ? { traceparent, tracestate: serialized } : { traceparent };
}

/** A span that is recorded: its ids, name and attributes, and the time it started. */
export class RecordedSpan implements CallSpan, FinishedSpan {
	readonly sampled = true;
	readonly context: SpanContext;
	readonly name: string;
	readonly attributes: SpanAttributes;
	readonly startedAt = performance.now();
	endedAt = 0;
	status: FinishedSpan['status'] = { code: SpanStatusCode.UNSET };
	readonly #recorder: SpanRecorder;

	constructor(
		recorder: SpanRecorder,
		readonly kind: SpanKind,
		{ name, attributes }: SpanDescription,
		readonly parent: SpanContext | undefined,
	) {
		this.#recorder = recorder;
		this.context = { traceId: parent?.traceId ?? randomId(16), spanId: randomId(8), traceFlags: TraceFlags.SAMPLED, traceState: parent?.traceState };
		this.name = name;
		this.attributes = attributes;
	}

	/** The headers that make this span the parent of an upstream request. */
	get headers(): Record<string, string> {
		const { traceId, spanId, traceState } = this.context;
		return traceparentOf(traceId, spanId, true, traceState);
	}

	/** A child of this span. */
	child<T>(kind: SpanKind, describe: Describe<T>, subject: T): RecordedSpan {
		return new RecordedSpan(this.#recorder, kind, describe(subject), this.context);
	}

	fail(message: string): void {
		this.status = { code: SpanStatusCode.ERROR, message };
	}

	end(): void {
		this.endedAt = performance.now();
		this.#recorder.add(this);
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
export const UNSAMPLED_ROOT = new UnsampledSpan();

export class SpanRecorder {
	#batch = new SpanBatch();
	/** Full batches waiting for the export under way. */
	readonly #waiting: EncodedSpans[] = [];
	#exporting: Promise<void> | undefined;
	#timer: NodeJS.Timeout | undefined;
	#dropped = 0;

	constructor(
		private readonly exporter: SpanExporter,
		private readonly samplingRate: number,
		private readonly log: Logger,
	) {}

	/**
	 * A span starting now: under a client's span when it sent one (whose flag decides the
	 * sampling), else the root of a new trace, sampled at the configured rate. `describe` is
	 * asked only for a sampled span (a function and its subject, not a closure made per call).
	 */
	start<T>(kind: SpanKind, describe: Describe<T>, subject: T, parent?: SpanContext): RecordedSpan | UnsampledSpan {
		const sampled = parent ? (parent.traceFlags & TraceFlags.SAMPLED) !== 0 : this.samplingRate >= 1 || Math.random() < this.samplingRate;
		if (sampled) return new RecordedSpan(this, kind, describe(subject), parent);
		return parent ? new UnsampledSpan(parent) : UNSAMPLED_ROOT;
	}

	/** Encodes a span that ended into the batch being filled. */
	add(span: FinishedSpan): void {
		if (this.#waiting.length >= MAX_WAITING) {
			this.#dropped++;
			return;
		}
		this.#batch.add(span);
		if (this.#batch.count >= BATCH_SIZE) {
			this.#waiting.push(this.#batch.take());
			this.#export();
		} else this.#timer ??= setTimeout(() => this.#export(), EXPORT_DELAY_MS).unref();
	}

	/** Sends what is recorded, and resolves once every batch is through. */
	async flush(): Promise<void> {
		while (this.#exporting || this.#waiting.length || this.#batch.count) await (this.#exporting ?? this.#export());
	}

	#export(): Promise<void> | undefined {
		clearTimeout(this.#timer);
		this.#timer = undefined;
		if (this.#exporting) return this.#exporting;
		const batch = this.#waiting.shift() ?? (this.#batch.count ? this.#batch.take() : undefined);
		if (!batch) return undefined;
		this.#exporting = new Promise<void>((resolve) =>
			this.exporter.export(batch, (result) => {
				if (result.code !== ExportResultCode.SUCCESS) this.log.debug(`cannot export ${batch.count} spans: ${result.error?.message ?? 'failed'}`);
				resolve();
			}),
		).then(() => {
			this.#exporting = undefined;
			if (this.#dropped) {
				this.log.warn(`${this.#dropped} spans were dropped while the trace exporter was behind`);
				this.#dropped = 0;
			}
			if (this.#waiting.length) this.#export();
			else if (this.#batch.count) this.#timer ??= setTimeout(() => this.#export(), EXPORT_DELAY_MS).unref();
		});
		return this.#exporting;
	}
}
