/**
 * Reads LSP-framed JSON-RPC messages (`Content-Length: N\r\n\r\n<body>`) from a stream.
 *
 * vscode-jsonrpc's own reader reports a bad frame as a connection error and leaves the
 * peer without an answer. This one answers every frame it cannot deliver with a JSON-RPC
 * error (parse error, invalid request, oversized message) and carries on with the next
 * frame, so a misbehaving client never takes the daemon down or leaves it waiting.
 *
 * Stray bytes never wedge it: it resynchronises at the next `Content-Length:` header.
 * A header line followed by a raw CRLF cannot occur in valid JSON (not as a token, and raw
 * line breaks are not allowed inside strings), so finding one inside a body proves the body
 * was cut short or its length was wrong, and reading restarts there.
 */
import type { Readable } from 'node:stream';
import {
	AbstractMessageReader,
	ErrorCodes,
	type DataCallback,
	type Disposable,
	type Message,
	type MessageReader,
	type ResponseMessage,
} from 'vscode-jsonrpc/node';
import { describeJsonError, JsonTooDeep, parseJsonBounded } from '../json.js';

const HEADER_END = Buffer.from('\r\n\r\n', 'ascii');
const MAX_HEADER_BYTES = 8 * 1024;
/** A `Content-Length` header line: where a frame starts. */
const HEADER_LINE = /content-length:[ \t]*\d+[ \t]*\r\n/i;
/** Longer than any header line worth finding, so a line split across chunks is still seen. */
const SCAN_OVERLAP = 64;
const HEADER_FIELD = /^[A-Za-z0-9-]+:[^\r\n]*$/;

export interface FramingOptions {
	/** Largest body accepted; larger ones are skipped and answered with an error. */
	readonly maxMessageBytes: number;
	/** Sends the error answer of a frame that could not be delivered. */
	readonly reject: (response: ResponseMessage) => void;
	/** Reports a message the connection could not take (logged, never fatal). */
	readonly onDeliveryError?: (error: unknown) => void;
	/**
	 * Delivered once after the last frame when the stream ends, before the close event: the
	 * connection handles it after every message read before it.
	 */
	readonly endOfInput?: Message;
}

type ReadState =
	| { kind: 'header' }
	/** Reading a body of `length` bytes; bytes before `scanned` hold no header line. */
	| { kind: 'body'; length: number; scanned: number }
	/** Dropping `remaining` bytes of an oversized body. */
	| { kind: 'discard'; remaining: number };

export class FramedMessageReader extends AbstractMessageReader implements MessageReader {
	private buffer: Buffer = Buffer.alloc(0);
	private state: ReadState = { kind: 'header' };
	private callback: DataCallback | undefined;

	constructor(
		private readonly readable: Readable,
		private readonly options: FramingOptions,
	) {
		super();
	}

	listen(callback: DataCallback): Disposable {
		this.callback = callback;
		const onData = (chunk: Buffer) => this.onData(chunk);
		const onError = (error: Error) => this.fireError(error);
		let ended = false;
		const onClose = () => {
			if (ended) return;
			ended = true;
			if (this.options.endOfInput) this.callback?.(this.options.endOfInput);
			this.fireClose();
		};
		this.readable.on('data', onData);
		this.readable.on('error', onError);
		this.readable.on('close', onClose);
		this.readable.on('end', onClose);
		return {
			dispose: () => {
				this.readable.off('data', onData);
				this.readable.off('error', onError);
				this.readable.off('close', onClose);
				this.readable.off('end', onClose);
			},
		};
	}

	private onData(chunk: Buffer): void {
		this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
		while (this.step()) {
			// Each step consumes one header, one body or one skipped run.
		}
	}

	/** Consumes what it can of the buffer; false when more bytes are needed. */
	private step(): boolean {
		switch (this.state.kind) {
			case 'header':
				return this.readHeader();
			case 'body':
				return this.readBody(this.state);
			case 'discard':
				return this.discard(this.state);
		}
	}

	private readHeader(): boolean {
		const end = this.buffer.indexOf(HEADER_END);
		if (end < 0) {
			if (this.buffer.length > MAX_HEADER_BYTES) {
				// Keep the tail: it may hold the start of the next header.
				this.buffer = this.buffer.subarray(this.buffer.length - SCAN_OVERLAP);
				this.reject(ErrorCodes.ParseError, 'frame header too long or missing; expected "Content-Length: N\\r\\n\\r\\n"');
			}
			return false;
		}
		const header = this.buffer.subarray(0, end).toString('latin1');
		const length = contentLength(header);
		if (length === undefined) {
			const start = headerStartIn(header);
			if (start > 0) {
				this.buffer = this.buffer.subarray(start);
				this.reject(ErrorCodes.ParseError, `skipped ${start} stray bytes before a frame header`);
				return true;
			}
			this.buffer = this.buffer.subarray(end + HEADER_END.length);
			this.reject(ErrorCodes.ParseError, 'frame header has no valid Content-Length');
			return this.buffer.length > 0;
		}
		this.buffer = this.buffer.subarray(end + HEADER_END.length);
		if (length > this.options.maxMessageBytes) {
			this.state = { kind: 'discard', remaining: length };
			this.reject(
				ErrorCodes.InvalidRequest,
				`message of ${length} bytes exceeds the limit of ${this.options.maxMessageBytes} bytes`,
			);
		} else {
			this.state = { kind: 'body', length, scanned: 0 };
		}
		return this.buffer.length > 0 || length === 0;
	}

	private readBody(state: { length: number; scanned: number }): boolean {
		if (this.buffer.length >= state.length) {
			const body = this.buffer.subarray(0, state.length);
			const message = parse(body);
			if (message.ok) {
				this.buffer = this.buffer.subarray(state.length);
				this.state = { kind: 'header' };
				this.deliver(message.value);
				return this.buffer.length > 0;
			}
			if (!this.resynchronise(body, state.scanned)) {
				this.buffer = this.buffer.subarray(state.length);
				this.state = { kind: 'header' };
				this.reject(ErrorCodes.ParseError, `parse error: ${message.reason}`);
			}
			return this.buffer.length > 0;
		}
		if (this.resynchronise(this.buffer, state.scanned)) return true;
		state.scanned = Math.max(0, this.buffer.length - SCAN_OVERLAP);
		return false;
	}

	/** Restarts at a header line found in `body` (from `from` on); false if there is none. */
	private resynchronise(body: Buffer, from: number): boolean {
		const at = headerLineIn(body, from);
		if (at < 0) return false;
		this.buffer = this.buffer.subarray(at);
		this.state = { kind: 'header' };
		this.reject(ErrorCodes.ParseError, 'frame body shorter than its Content-Length; resynchronised at the next header');
		return true;
	}

	private discard(state: { remaining: number }): boolean {
		const window = this.buffer.subarray(0, Math.min(this.buffer.length, state.remaining));
		const at = headerLineIn(window, 0);
		if (at >= 0) {
			// The announced length was a lie: a frame starts inside it.
			this.buffer = this.buffer.subarray(at);
			this.state = { kind: 'header' };
			return true;
		}
		const dropped = Math.min(state.remaining, Math.max(0, this.buffer.length - SCAN_OVERLAP));
		this.buffer = this.buffer.subarray(dropped);
		state.remaining -= dropped;
		if (state.remaining === 0) this.state = { kind: 'header' };
		return dropped > 0 && this.buffer.length > 0;
	}

	private deliver(message: unknown): void {
		if (!isMessage(message)) {
			const id = typeof message === 'object' && message !== null ? (message as { id?: unknown }).id : undefined;
			const detail = Array.isArray(message) ? 'batches are not supported' : 'not a JSON-RPC 2.0 message';
			this.reject(ErrorCodes.InvalidRequest, `invalid request: ${detail}`, typeof id === 'number' || typeof id === 'string' ? id : null);
			return;
		}
		if (isMalformedCancel(message)) {
			// vscode-jsonrpc reads `params.id` unguarded; a cancel of nothing cancels nothing.
			this.options.onDeliveryError?.(new Error('ignored $/cancelRequest without a string or number params.id'));
			return;
		}
		try {
			this.callback?.(message);
		} catch (error) {
			this.options.onDeliveryError?.(error);
			const id = (message as { id?: unknown }).id;
			if ('method' in message && (typeof id === 'number' || typeof id === 'string')) {
				this.reject(ErrorCodes.InternalError, 'internal error: the message could not be handled', id);
			}
		}
	}

	private reject(code: number, message: string, id: number | string | null = null): void {
		this.options.reject({ jsonrpc: '2.0', id, error: { code, message } });
	}
}

function parse(body: Buffer): { ok: true; value: unknown } | { ok: false; reason: string } {
	try {
		return { ok: true, value: parseJsonBounded(body.toString('utf8')) };
	} catch (error) {
		return { ok: false, reason: error instanceof JsonTooDeep ? error.message : describeJsonError(error) };
	}
}

/** The body length a header block announces, or undefined when it is not a valid header. */
function contentLength(header: string): number | undefined {
	let length: number | undefined;
	for (const line of header.split('\r\n')) {
		if (!HEADER_FIELD.test(line)) return undefined;
		const colon = line.indexOf(':');
		if (line.slice(0, colon).toLowerCase() !== 'content-length') continue;
		const value = line.slice(colon + 1).trim();
		if (!/^\d+$/.test(value)) return undefined;
		length = Number(value);
	}
	return length;
}

/** Where a valid header starts inside a header block preceded by stray bytes; 0 when nowhere. */
function headerStartIn(header: string): number {
	const pattern = /content-length:/gi;
	for (let match = pattern.exec(header); match; match = pattern.exec(header)) {
		if (match.index > 0 && contentLength(header.slice(match.index)) !== undefined) return match.index;
	}
	return 0;
}

/** Offset of the first `Content-Length` header line in `bytes` at or after `from`; -1 when none. */
function headerLineIn(bytes: Buffer, from: number): number {
	const match = HEADER_LINE.exec(bytes.subarray(from).toString('latin1'));
	return match ? from + match.index : -1;
}

function isMessage(value: unknown): value is Message {
	if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
	const candidate = value as { jsonrpc?: unknown; method?: unknown; id?: unknown };
	if (candidate.jsonrpc !== '2.0') return false;
	return typeof candidate.method === 'string' || 'id' in candidate;
}

function isMalformedCancel(message: Message): boolean {
	const { method, params } = message as { method?: unknown; params?: { id?: unknown } | null };
	if (method !== '$/cancelRequest') return false;
	const id = typeof params === 'object' && params !== null ? params.id : undefined;
	return typeof id !== 'number' && typeof id !== 'string';
}
