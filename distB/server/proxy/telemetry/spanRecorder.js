/**
 * The proxy's spans, recorded without the SDK's span objects. A call's spans are a few strings
 * and a start time until they end; only the sampled ones then become the plain records that the
 * official OTLP exporter serialises, sent in batches. The SDK's tracer (a context and a span
 * object per span, attribute sanitising, span processors, its own metrics) made traces cost the
 * proxy 35–55 µs of CPU per call on the lean bench, 16–42 µs without it (docs/benchmarks.md);
 * the daemon's few spans keep the SDK.
 *
 * Sampling is parent-based like the SDK's default: a client's `traceparent` decides, else the
 * configured rate.
 */
import { randomFillSync } from 'node:crypto';
import { SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
/** Spans per export; a busy proxy fills one in well under a second. */
const BATCH_SIZE = 512;
/** Spans kept while an export is under way; beyond, new ones are dropped (and counted). */
const MAX_QUEUE = 8_192;
const EXPORT_DELAY_MS = 2_000;
const SCOPE = { name: 'hangar-proxy' };
/** Random ids from a pool refilled 4 KiB at a time (one call to the CSPRNG per ~170 spans). */
const pool = Buffer.alloc(4_096);
let poolOffset = pool.length;
function randomId(bytes) {
    for (;;) {
        if (poolOffset + bytes > pool.length) {
            randomFillSync(pool);
            poolOffset = 0;
        }
        const id = pool.toString('hex', poolOffset, (poolOffset += bytes));
        // All zeros is the invalid id of W3C Trace Context.
        if (/[^0]/.test(id))
            return id;
    }
}
function hrTime(milliseconds) {
    const seconds = Math.floor(milliseconds / 1_000);
    return [seconds, Math.min(999_999_999, Math.round((milliseconds - seconds * 1_000) * 1e6))];
}
const UNSAMPLED = () => ({ name: '', attributes: {} });
export class RecordedSpan {
    kind;
    parent;
    context;
    name;
    attributes;
    #recorder;
    #startedAt = performance.now();
    #status = { code: SpanStatusCode.UNSET };
    constructor(recorder, kind, describe, parent, sampled) {
        this.kind = kind;
        this.parent = parent;
        this.#recorder = recorder;
        this.context = { traceId: parent?.traceId ?? randomId(16), spanId: randomId(8), traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, traceState: parent?.traceState };
        ({ name: this.name, attributes: this.attributes } = (sampled ? describe : UNSAMPLED)());
    }
    get sampled() {
        return (this.context.traceFlags & TraceFlags.SAMPLED) !== 0;
    }
    /** The headers that make this span the parent of an upstream request. */
    get headers() {
        const { traceId, spanId, traceFlags, traceState } = this.context;
        const traceparent = `00-${traceId}-${spanId}-0${traceFlags & TraceFlags.SAMPLED}`;
        const serialized = traceState?.serialize();
        return serialized ? { traceparent, tracestate: serialized } : { traceparent };
    }
    /** A child of this span, sampled as this one is. */
    child(kind, describe) {
        return new RecordedSpan(this.#recorder, kind, describe, this.context, this.sampled);
    }
    fail(message) {
        this.#status = { code: SpanStatusCode.ERROR, message };
    }
    end() {
        if (!this.sampled)
            return;
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
export class SpanRecorder {
    exporter;
    resource;
    samplingRate;
    log;
    #queue = [];
    #exporting;
    #timer;
    #dropped = 0;
    constructor(exporter, resource, samplingRate, log) {
        this.exporter = exporter;
        this.resource = resource;
        this.samplingRate = samplingRate;
        this.log = log;
    }
    /** A span starting now: under a client's span when it sent one, else the root of a new trace. */
    start(kind, describe, parent) {
        const sampled = parent ? (parent.traceFlags & TraceFlags.SAMPLED) !== 0 : this.samplingRate >= 1 || Math.random() < this.samplingRate;
        return new RecordedSpan(this, kind, describe, parent, sampled);
    }
    add(span) {
        if (this.#queue.length >= MAX_QUEUE) {
            this.#dropped++;
            return;
        }
        this.#queue.push(span);
        if (this.#queue.length >= BATCH_SIZE)
            this.#export();
        else
            this.#timer ??= setTimeout(() => this.#export(), EXPORT_DELAY_MS).unref();
    }
    /** Sends what is queued, then stops the exporter. */
    async shutdown() {
        while (this.#exporting || this.#queue.length)
            await (this.#exporting ?? this.#export());
        await this.exporter.shutdown();
    }
    #export() {
        clearTimeout(this.#timer);
        this.#timer = undefined;
        if (this.#exporting || !this.#queue.length)
            return this.#exporting;
        const batch = this.#queue.splice(0, BATCH_SIZE);
        this.#exporting = new Promise((resolve) => this.exporter.export(batch, (result) => {
            if (result.code !== ExportResultCode.SUCCESS)
                this.log.debug(`cannot export ${batch.length} spans: ${result.error?.message ?? 'failed'}`);
            resolve();
        })).then(() => {
            this.#exporting = undefined;
            if (this.#dropped) {
                this.log.warn(`${this.#dropped} spans were dropped while the trace exporter was behind`);
                this.#dropped = 0;
            }
            if (this.#queue.length >= BATCH_SIZE)
                this.#export();
            else if (this.#queue.length)
                this.#timer ??= setTimeout(() => this.#export(), EXPORT_DELAY_MS).unref();
        });
        return this.#exporting;
    }
}
//# sourceMappingURL=spanRecorder.js.map