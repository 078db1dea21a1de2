/**
 * Reads LSP-framed JSON-RPC messages (`Content-Length: N\r\n\r\n<body>`) from a stream.
 *
 * vscode-jsonrpc's own reader reports a bad frame as a connection error and leaves the
 * peer without an answer. This one answers every frame it cannot deliver with a JSON-RPC
 * error (parse error, invalid request, oversized message) and carries on with the next
 * frame, so a misbehaving client never takes the daemon down or leaves it waiting.
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
import { describeJsonError } from '../json.js';

const HEADER_END = Buffer.from('\r\n\r\n', 'ascii');
const MAX_HEADER_BYTES = 8 * 1024;

export interface FramingOptions {
	/** Largest body accepted; larger ones are skipped and answered with an error. */
	readonly maxMessageBytes: number;
	/** Sends the error answer of a frame that could not be delivered. */
	readonly reject: (response: ResponseMessage) => void;
}

export class FramedMessageReader extends AbstractMessageReader implements MessageReader {
	private buffer: Buffer = Buffer.alloc(0);
	/** Body length announced by the last header, or -1 while reading a header. */
	private bodyLength = -1;
	/** Bytes of an oversized body still to be skipped. */
	private skipping = 0;
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
		const onClose = () => this.fireClose();
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
		if (this.skipping > 0) {
			const skipped = Math.min(this.skipping, this.buffer.length);
			this.buffer = this.buffer.subarray(skipped);
			this.skipping -= skipped;
			return this.skipping === 0 && this.buffer.length > 0;
		}
		if (this.bodyLength < 0) return this.readHeader();
		if (this.buffer.length < this.bodyLength) return false;
		const body = this.buffer.subarray(0, this.bodyLength);
		this.buffer = this.buffer.subarray(this.bodyLength);
		this.bodyLength = -1;
		this.deliver(body);
		return this.buffer.length > 0;
	}

	private readHeader(): boolean {
		const end = this.buffer.indexOf(HEADER_END);
		if (end < 0) {
			if (this.buffer.length > MAX_HEADER_BYTES) {
				this.buffer = Buffer.alloc(0);
				this.reject(ErrorCodes.ParseError, 'frame header too long or missing; expected "Content-Length: N\\r\\n\\r\\n"');
			}
			return false;
		}
		const header = this.buffer.subarray(0, end).toString('ascii');
		this.buffer = this.buffer.subarray(end + HEADER_END.length);
		const length = contentLength(header);
		if (length === undefined) {
			this.reject(ErrorCodes.ParseError, 'frame header has no valid Content-Length');
		} else if (length > this.options.maxMessageBytes) {
			this.skipping = length;
			this.reject(
				ErrorCodes.InvalidRequest,
				`message of ${length} bytes exceeds the limit of ${this.options.maxMessageBytes} bytes`,
			);
		} else {
			this.bodyLength = length;
		}
		return this.buffer.length > 0 || this.bodyLength === 0;
	}

	private deliver(body: Buffer): void {
		let message: unknown;
		try {
			message = JSON.parse(body.toString('utf8'));
		} catch (error) {
			this.reject(ErrorCodes.ParseError, `parse error: ${describeJsonError(error)}`);
			return;
		}
		if (!isMessage(message)) {
			const id = typeof message === 'object' && message !== null ? (message as { id?: unknown }).id : undefined;
			const detail = Array.isArray(message) ? 'batches are not supported' : 'not a JSON-RPC 2.0 message';
			this.reject(ErrorCodes.InvalidRequest, `invalid request: ${detail}`, typeof id === 'number' || typeof id === 'string' ? id : null);
			return;
		}
		this.callback?.(message);
	}

	private reject(code: number, message: string, id: number | string | null = null): void {
		this.options.reject({ jsonrpc: '2.0', id, error: { code, message } });
	}
}

function contentLength(header: string): number | undefined {
	for (const line of header.split('\r\n')) {
		const colon = line.indexOf(':');
		if (colon < 0 || line.slice(0, colon).trim().toLowerCase() !== 'content-length') continue;
		const value = line.slice(colon + 1).trim();
		return /^\d+$/.test(value) ? Number(value) : undefined;
	}
	return undefined;
}

function isMessage(value: unknown): value is Message {
	if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
	const candidate = value as { jsonrpc?: unknown; method?: unknown; id?: unknown };
	if (candidate.jsonrpc !== '2.0') return false;
	return typeof candidate.method === 'string' || 'id' in candidate;
}
