/**
 * The link between an aggregate and a member's proxy (fronts/link.ts serves it, the aggregate's
 * backends/aggregate/link.ts opens it): one `POST /link` on the member's Unix socket per client
 * session, whose request and response bodies stay open and carry JSON-RPC messages both ways,
 * one per line. What the member sends about a call in flight (progress, a log, a request to the
 * client) comes wrapped, `{"call": ID, "message": …}`, so the aggregate ties it to its call as a
 * Streamable HTTP client does by the POST it came on.
 */
import { StringDecoder } from 'node:string_decoder';
import { asMessage, type JsonRpcMessage, type RequestId } from './jsonrpc.js';
import { parseJsonBounded } from '../../json.js';

export const LINK_PATH = '/link';
export const LINK_CONTENT_TYPE = 'application/jsonl';
/** The longest line either end reads, in characters: 4 Mi, as a message over Streamable HTTP. */
export const MAX_LINE_LENGTH = 4 * 1024 * 1024;

/** A message of the member's about the call `call`. */
export interface CallMessage {
	readonly call: RequestId;
	readonly message: JsonRpcMessage;
}

export function lineOf(message: JsonRpcMessage | CallMessage): string {
	return `${JSON.stringify(message)}\n`;
}

/** A line's message, with the call it is about when wrapped; undefined when the line holds no JSON-RPC message. */
export function parseLine(line: string): { message: JsonRpcMessage; call?: RequestId } | undefined {
	let value: unknown;
	try {
		value = parseJsonBounded(line);
	} catch {
		return undefined;
	}
	const wrapped = typeof value === 'object' && value !== null && 'call' in value && 'message' in value ? (value as { call: unknown; message: unknown }) : undefined;
	const message = asMessage(wrapped ? wrapped.message : value);
	if (!message) return undefined;
	if (!wrapped) return { message };
	return typeof wrapped.call === 'string' || typeof wrapped.call === 'number' ? { message, call: wrapped.call } : undefined;
}

/** Splits a stream's chunks into lines for `onLine`; a line over `maxLength` characters stops it with `onTooLong`. */
export class LineReader {
	private readonly decoder = new StringDecoder('utf8');
	private buffered = '';
	private stopped = false;

	constructor(
		private readonly onLine: (line: string) => void,
		private readonly maxLength: number,
		private readonly onTooLong: () => void,
	) {}

	push(chunk: Buffer): void {
		if (this.stopped) return;
		this.buffered += this.decoder.write(chunk);
		let newline = this.buffered.indexOf('\n');
		while (newline >= 0 && !this.stopped) {
			if (newline > this.maxLength) return this.tooLong();
			const line = this.buffered.slice(0, newline);
			this.buffered = this.buffered.slice(newline + 1);
			if (line.length > 0) this.onLine(line);
			newline = this.buffered.indexOf('\n');
		}
		if (!this.stopped && this.buffered.length > this.maxLength) this.tooLong();
	}

	stop(): void {
		this.stopped = true;
	}

	private tooLong(): void {
		this.stopped = true;
		this.onTooLong();
	}
}
