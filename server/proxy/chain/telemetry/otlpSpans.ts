/**
 * The proxy's spans in OTLP's protobuf encoding (opentelemetry-proto's `trace.proto`), written
 * into the batch that will carry them as each span ends. From then on a span is a few hundred
 * bytes in a buffer: nothing for the garbage collector to trace or promote while the batch
 * fills, and no second pass to serialise it. The official exporter's HTTP transport sends the
 * batches, from a thread of its own (otlpSender.ts).
 *
 * With the official serializer, which read span objects a batch at a time, a sampled call cost
 * the proxy about twice as much (docs/benchmarks.md); a test checks that both encode the same
 * spans alike.
 */
import { SpanStatusCode, type SpanContext, type SpanKind } from '@opentelemetry/api';

export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** What a finished span says, as the encoding reads it. Times are `performance.now()` readings. */
export interface FinishedSpan {
	readonly context: SpanContext;
	/** `isRemote` when it is the client's (a span of another process). */
	readonly parent: SpanContext | undefined;
	readonly name: string;
	readonly kind: SpanKind;
	readonly startedAt: number;
	readonly endedAt: number;
	readonly attributes: SpanAttributes;
	readonly status: { readonly code: SpanStatusCode; readonly message?: string };
}

/** Encoded spans, each one a `spans` field of a `ScopeSpans` message. */
export interface EncodedSpans {
	readonly bytes: Uint8Array;
	readonly count: number;
}

// Wire types.
const VARINT = 0;
const FIXED64 = 1;
const LENGTH = 2;
const FIXED32 = 5;
const tag = (field: number, wireType: number) => (field << 3) | wireType;

// `Span.flags`: the low byte is W3C's trace flags; these two say whether the parent is remote.
const FLAG_HAS_IS_REMOTE = 0x100;
const FLAG_IS_REMOTE = 0x200;

/** The Unix time, in milliseconds, `performance.now()` counts from (a getter's call per read). */
const TIME_ORIGIN = performance.timeOrigin;
const TWO_TO_16 = 0x1_0000;
const TWO_TO_32 = 0x1_0000_0000;

/** A hex digit's value by its character code (lower or upper case). */
const HEX_DIGITS = new Uint8Array(128);
for (let digit = 0; digit < 16; digit++) {
	HEX_DIGITS['0123456789abcdef'.charCodeAt(digit)] = digit;
	HEX_DIGITS['0123456789ABCDEF'.charCodeAt(digit)] = digit;
}

function varintSize(value: number): number {
	let size = 1;
	while (value >= 0x80) {
		value = Math.floor(value / 128);
		size++;
	}
	return size;
}

/**
 * A protobuf writer over a growing buffer. Short ASCII strings and hex ids are written in
 * JavaScript: each call into Buffer's C++ writers costs more than the loop. Its buffers are
 * never slices of Node's pool: a request's bytes move to the sender's thread as they are.
 */
class ProtoWriter {
	buffer: Buffer;
	position = 0;

	constructor(capacity: number) {
		this.buffer = Buffer.allocUnsafeSlow(capacity);
	}

	ensure(extra: number): void {
		if (this.position + extra <= this.buffer.length) return;
		const grown = Buffer.allocUnsafeSlow(Math.max(this.buffer.length * 2, this.position + extra));
		this.buffer.copy(grown, 0, 0, this.position);
		this.buffer = grown;
	}

	byte(value: number): void {
		this.ensure(1);
		this.buffer[this.position++] = value;
	}

	/** A non-negative integer up to 2^53. */
	varint(value: number): void {
		this.ensure(10);
		while (value >= 0x80) {
			this.buffer[this.position++] = (value & 0x7f) | 0x80;
			value = Math.floor(value / 128);
		}
		this.buffer[this.position++] = value;
	}

	/** A signed 64-bit integer, two's complement as protobuf's `int64` wants it. */
	int64(value: number): void {
		if (value >= 0) return this.varint(value);
		this.ensure(10);
		let low = value >>> 0;
		let high = Math.floor(value / TWO_TO_32) >>> 0;
		for (let index = 0; index < 9; index++) {
			this.buffer[this.position++] = (low & 0x7f) | 0x80;
			low = (low >>> 7) | ((high & 0x7f) << 25);
			high >>>= 7;
		}
		this.buffer[this.position++] = low & 0x01;
	}

	/**
	 * A `performance.now()` reading as Unix nanoseconds, `fixed64`: in two 32-bit halves, every
	 * step exact in a double (the product itself, up to 2^61, would not be).
	 */
	timestamp(milliseconds: number): void {
		const unix = TIME_ORIGIN + milliseconds;
		const whole = Math.floor(unix);
		// nanoseconds = upper * 2^16 * 10^6 + lower
		const upper = Math.floor(whole / TWO_TO_16);
		const lower = (whole % TWO_TO_16) * 1e6 + Math.round((unix - whole) * 1e6);
		const scaled = upper * 1e6; // times 2^16: its top bits go to the high word
		const low = (scaled % TWO_TO_16) * TWO_TO_16 + lower;
		this.fixed32(low % TWO_TO_32);
		this.fixed32(Math.floor(scaled / TWO_TO_16) + Math.floor(low / TWO_TO_32));
	}

	fixed32(value: number): void {
		this.ensure(4);
		this.buffer.writeUInt32LE(value, this.position);
		this.position += 4;
	}

	double(value: number): void {
		this.ensure(8);
		this.buffer.writeDoubleLE(value, this.position);
		this.position += 8;
	}

	/** A length-delimited string. */
	string(value: string): void {
		const length = value.length;
		if (length < 0x80) {
			this.ensure(1 + length);
			const start = this.position + 1;
			let index = 0;
			for (; index < length; index++) {
				const code = value.charCodeAt(index);
				if (code >= 0x80) break;
				this.buffer[start + index] = code;
			}
			if (index === length) {
				this.buffer[this.position] = length;
				this.position = start + length;
				return;
			}
		}
		const size = Buffer.byteLength(value);
		this.varint(size);
		this.ensure(size);
		this.position += this.buffer.write(value, this.position, size, 'utf8');
	}

	/** Length-delimited bytes, given in hex (an id). */
	hex(value: string): void {
		const size = value.length >>> 1;
		this.ensure(1 + size);
		this.buffer[this.position++] = size;
		for (let index = 0; index < value.length; index += 2) {
			this.buffer[this.position++] = (HEX_DIGITS[value.charCodeAt(index) & 0x7f]! << 4) | HEX_DIGITS[value.charCodeAt(index + 1) & 0x7f]!;
		}
	}

	bytes(value: Uint8Array): void {
		this.ensure(value.length);
		this.buffer.set(value, this.position);
		this.position += value.length;
	}

	/** Starts a length-delimited field whose length is written by `finish`. */
	begin(field: number): number {
		this.byte(tag(field, LENGTH));
		this.byte(0); // the length's first byte; most messages here need no more
		return this.position;
	}

	finish(start: number): void {
		const length = this.position - start;
		if (length < 0x80) {
			this.buffer[start - 1] = length;
			return;
		}
		// A longer length: the message moves along to make room.
		const extra = varintSize(length) - 1;
		this.ensure(extra);
		this.buffer.copyWithin(start + extra, start, this.position);
		let at = start - 1;
		let rest = length;
		while (rest >= 0x80) {
			this.buffer[at++] = (rest & 0x7f) | 0x80;
			rest >>>= 7;
		}
		this.buffer[at] = rest;
		this.position += extra;
	}

	/** What was written so far (a view, not a copy). */
	get written(): Uint8Array {
		return this.buffer.subarray(0, this.position);
	}

	/** What was written, handed over: the writer starts again on a new buffer. */
	take(): Uint8Array {
		const written = this.buffer.subarray(0, this.position);
		this.buffer = Buffer.allocUnsafeSlow(Math.max(256, this.position));
		this.position = 0;
		return written;
	}
}

/** Writes `attributes` as repeated `KeyValue` in `field` (undefined values are left out). */
function writeAttributes(writer: ProtoWriter, field: number, attributes: SpanAttributes): void {
	for (const key in attributes) {
		const value = attributes[key];
		if (value === undefined) continue;
		const pair = writer.begin(field);
		writer.byte(tag(1, LENGTH)); // KeyValue.key
		writer.string(key);
		const any = writer.begin(2); // KeyValue.value
		if (typeof value === 'string') {
			writer.byte(tag(1, LENGTH)); // AnyValue.string_value
			writer.string(value);
		} else if (typeof value === 'boolean') {
			writer.byte(tag(2, VARINT)); // AnyValue.bool_value
			writer.byte(value ? 1 : 0);
		} else if (Number.isSafeInteger(value)) {
			writer.byte(tag(3, VARINT)); // AnyValue.int_value
			writer.int64(value);
		} else {
			writer.byte(tag(4, FIXED64)); // AnyValue.double_value
			writer.double(value);
		}
		writer.finish(any);
		writer.finish(pair);
	}
}

/** A `Span` as a `spans` field of `ScopeSpans`. */
function writeSpan(writer: ProtoWriter, span: FinishedSpan): void {
	const start = writer.begin(2);
	const { context, parent } = span;
	writer.byte(tag(1, LENGTH)); // trace_id
	writer.hex(context.traceId);
	writer.byte(tag(2, LENGTH)); // span_id
	writer.hex(context.spanId);
	const traceState = context.traceState?.serialize();
	if (traceState) {
		writer.byte(tag(3, LENGTH)); // trace_state
		writer.string(traceState);
	}
	if (parent) {
		writer.byte(tag(4, LENGTH)); // parent_span_id
		writer.hex(parent.spanId);
	}
	writer.byte(tag(5, LENGTH)); // name
	writer.string(span.name);
	writer.byte(tag(6, VARINT)); // kind: OTLP's enum counts from "unspecified"
	writer.varint(span.kind + 1);
	writer.byte(tag(7, FIXED64)); // start_time_unix_nano
	writer.timestamp(span.startedAt);
	writer.byte(tag(8, FIXED64)); // end_time_unix_nano
	writer.timestamp(span.endedAt);
	writeAttributes(writer, 9, span.attributes);
	const { code, message } = span.status;
	const status = writer.begin(15); // always, as the official serializer writes it
	if (message) {
		writer.byte(tag(2, LENGTH)); // Status.message
		writer.string(message);
	}
	if (code !== SpanStatusCode.UNSET) {
		writer.byte(tag(3, VARINT)); // Status.code
		writer.byte(code);
	}
	writer.finish(status);
	writer.varint(tag(16, FIXED32)); // flags
	writer.fixed32((context.traceFlags & 0xff) | FLAG_HAS_IS_REMOTE | (parent?.isRemote ? FLAG_IS_REMOTE : 0));
	writer.finish(start);
}

/** Spans encoded as they end, until the batch is taken. */
export class SpanBatch {
	#spans = new ProtoWriter(64 * 1024);
	#count = 0;

	get count(): number {
		return this.#count;
	}

	add(span: FinishedSpan): void {
		writeSpan(this.#spans, span);
		this.#count++;
	}

	take(): EncodedSpans {
		const taken = { bytes: this.#spans.take(), count: this.#count };
		this.#count = 0;
		return taken;
	}
}

/** An `ExportTraceServiceRequest` of one resource and one scope around a batch's spans. */
export function encodeSpanRequest(resource: SpanAttributes, scopeName: string, { bytes }: EncodedSpans): Uint8Array {
	const writer = new ProtoWriter(bytes.length + 1024);
	const resourceSpans = writer.begin(1); // ExportTraceServiceRequest.resource_spans
	const resourceField = writer.begin(1); // ResourceSpans.resource
	writeAttributes(writer, 1, resource);
	writer.finish(resourceField);
	const scopeSpans = writer.begin(2); // ResourceSpans.scope_spans
	const scope = writer.begin(1); // ScopeSpans.scope
	writer.byte(tag(1, LENGTH)); // InstrumentationScope.name
	writer.string(scopeName);
	writer.finish(scope);
	writer.bytes(bytes);
	writer.finish(scopeSpans);
	writer.finish(resourceSpans);
	return writer.written;
}
