/**
 * The proxy's own OTLP/protobuf span encoding against the official one: the same spans, encoded
 * by both and decoded with every field of opentelemetry-proto's `trace.proto` that either
 * writes, must read the same (the end-to-end tests in telemetry.test.ts send them to a receiver).
 */
import { SpanKind, SpanStatusCode, TraceFlags, type HrTime } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { encodeSpanRequest, SpanBatch, type FinishedSpan } from '../server/proxy/chain/telemetry/otlpSpans.js';
import { ExportTraceServiceRequest } from './fixtures/telemetry/receivers.js';

const decode = (bytes: Uint8Array) => ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(bytes), { longs: String, bytes: String, defaults: true });

/** The Unix nanoseconds of a `performance.now()` reading, computed exactly. */
function unixNanos(milliseconds: number): bigint {
	const unix = performance.timeOrigin + milliseconds;
	const whole = Math.floor(unix);
	return BigInt(whole) * 1_000_000n + BigInt(Math.round((unix - whole) * 1e6));
}

const hrTimeOf = (nanos: bigint): HrTime => [Number(nanos / 1_000_000_000n), Number(nanos % 1_000_000_000n)];

const RESOURCE = { 'service.name': 'hangar', 'hangar.workload': 'fetch', 'deployment.environment': 'café' };
const SCOPE = 'hangar-proxy';
/** One object each: the official serializer groups spans by their resource's and scope's identity. */
const RESOURCE_OF_SPANS = resourceFromAttributes(RESOURCE);
const SCOPE_OF_SPANS = { name: SCOPE };

/** The official serializer's input for the same span. */
function readableOf(span: FinishedSpan): ReadableSpan {
	return {
		name: span.name,
		kind: span.kind,
		spanContext: () => span.context,
		parentSpanContext: span.parent,
		startTime: hrTimeOf(unixNanos(span.startedAt)),
		endTime: hrTimeOf(unixNanos(span.endedAt)),
		duration: [0, 0],
		status: span.status,
		attributes: Object.fromEntries(Object.entries(span.attributes).filter(([, value]) => value !== undefined)) as Record<string, string | number | boolean>,
		links: [],
		events: [],
		ended: true,
		resource: RESOURCE_OF_SPANS,
		instrumentationScope: SCOPE_OF_SPANS,
		droppedAttributesCount: 0,
		droppedEventsCount: 0,
		droppedLinksCount: 0,
	};
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

/** A span of the test trace; `spanId` is its own, `parent` (with `isRemote`) its parent's. */
function span(overrides: Partial<Omit<FinishedSpan, 'context' | 'parent'>> & { spanId?: string; traceState?: string; parent?: { spanId: string; isRemote?: boolean } } = {}): FinishedSpan {
	const { spanId = '00f067aa0ba902b7', traceState, parent, ...rest } = overrides;
	const state = traceState ? new TraceState(traceState) : undefined;
	return {
		context: { traceId: TRACE_ID, spanId, traceFlags: TraceFlags.SAMPLED, traceState: state },
		parent: parent && { traceId: TRACE_ID, spanId: parent.spanId, traceFlags: TraceFlags.SAMPLED, traceState: state, isRemote: parent.isRemote },
		name: 'tools/call echo',
		kind: SpanKind.SERVER,
		startedAt: 1_234.5678,
		endedAt: 1_240.0001,
		attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'echo' },
		status: { code: SpanStatusCode.UNSET },
		...rest,
	};
}

const SPANS: Record<string, FinishedSpan> = {
	'a root span with string attributes': span(),
	'a child of a client\'s span, with its tracestate': span({ parent: { spanId: 'b7ad6b7169203331', isRemote: true }, traceState: 'vendor=opaque,other=1' }),
	'a local child, failed with a message': span({ kind: SpanKind.CLIENT, name: 'upstream tools/call', parent: { spanId: 'b7ad6b7169203331' }, status: { code: SpanStatusCode.ERROR, message: 'the server went away' } }),
	'numbers, negative and fractional, booleans, an undefined value': span({
		attributes: { 'rpc.jsonrpc.error_code': -32601, 'http.response.status_code': 403, 'hangar.ratio': 0.25, 'hangar.large': 2 ** 40, 'hangar.flag': true, 'hangar.off': false, 'hangar.nothing': undefined },
		status: { code: SpanStatusCode.ERROR },
	}),
	'long and non-ASCII strings (lengths of two bytes)': span({
		name: `resources/read ${'file:///'.padEnd(300, 'x')}`,
		attributes: { 'mcp.resource.uri': `file:///${'é'.repeat(200)}`, 'gen_ai.tool.name': 'überprüfen 🚀', 'hangar.long': 'y'.repeat(127), 'hangar.longer': 'z'.repeat(128) },
	}),
};

describe('the proxy\'s OTLP span encoding', () => {
	for (const [name, finished] of Object.entries(SPANS)) {
		it(`reads as the official serializer's: ${name}`, () => {
			const batch = new SpanBatch();
			batch.add(finished);
			const ours = encodeSpanRequest(RESOURCE, SCOPE, batch.take());
			const official = ProtobufTraceSerializer.serializeRequest([readableOf(finished)])!;
			expect(decode(ours)).toEqual(decode(official));
		});
	}

	it('carries many spans in one batch, in order, and starts empty again once taken', () => {
		const batch = new SpanBatch();
		const spans = Array.from({ length: 600 }, (_, index) => span({ name: `tools/call tool-${index}`, spanId: (index + 1).toString(16).padStart(16, '0') }));
		for (const each of spans) batch.add(each);
		expect(batch.count).toBe(600);
		const taken = batch.take();
		expect(taken.count).toBe(600);
		expect(batch.count).toBe(0);
		const ours = decode(encodeSpanRequest(RESOURCE, SCOPE, taken));
		expect(ours).toEqual(decode(ProtobufTraceSerializer.serializeRequest(spans.map(readableOf))!));
		expect(decode(encodeSpanRequest(RESOURCE, SCOPE, batch.take())).resourceSpans[0].scopeSpans[0].spans).toEqual([]);
	});

	it('writes times to the nanosecond, as exact integer arithmetic does', () => {
		const readings = [0, 0.000001, 1.5, 999.9999994, 86_400_000.123456, ...Array.from({ length: 200 }, () => Math.random() * 1e10)];
		const batch = new SpanBatch();
		for (const reading of readings) batch.add(span({ startedAt: reading, endedAt: reading + 0.0005 }));
		const [{ scopeSpans }] = decode(encodeSpanRequest(RESOURCE, SCOPE, batch.take())).resourceSpans;
		const times = scopeSpans[0].spans.map((each: { startTimeUnixNano: string; endTimeUnixNano: string }) => [each.startTimeUnixNano, each.endTimeUnixNano]);
		expect(times).toEqual(readings.map((reading) => [String(unixNanos(reading)), String(unixNanos(reading + 0.0005))]));
	});
});
