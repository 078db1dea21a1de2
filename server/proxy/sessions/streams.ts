/**
 * Server-Sent Events towards clients: long-lived streams (Streamable HTTP's GET stream, the
 * legacy SSE stream) and replies to one POST, which start as plain JSON and turn into an
 * event stream only if something must be sent before the response (a progress
 * notification, a server request) or the call outlasts the keep-alive interval.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Deadlines, type Deadline } from '../core/deadlines.js';
import type { JsonRpcMessage, RequestId } from '../core/jsonrpc.js';

/** Interval of keep-alive comments (`HANGAR_PROXY_KEEPALIVE_MS` overrides it). */
export const KEEP_ALIVE_MS = Number(process.env.HANGAR_PROXY_KEEPALIVE_MS) || 15_000;

const SSE_HEADERS: OutgoingHttpHeaders = {
	'Content-Type': 'text/event-stream',
	'Cache-Control': 'no-cache, no-transform',
	Connection: 'keep-alive',
	// Reverse proxies in front of this one must not buffer events.
	'X-Accel-Buffering': 'no',
};

/**
 * The headers of a JSON reply: `base`, then `extra`, then the body's type and length. Object
 * spread costs over half a microsecond on this Node, Object.assign a twentieth of that, and this
 * runs for every reply.
 */
export function jsonHeaders(base: Readonly<OutgoingHttpHeaders>, extra: Readonly<OutgoingHttpHeaders> | undefined, length: number): OutgoingHttpHeaders {
	const headers: OutgoingHttpHeaders = Object.assign({}, base, extra);
	headers['Content-Type'] = 'application/json';
	headers['Content-Length'] = length;
	return headers;
}

export function eventOf(message: JsonRpcMessage): string {
	return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/** Turns a message into an event (a resumable stream numbers and remembers it). */
export type EventFormat = (message: JsonRpcMessage) => string;

/** Gives the format of each stream of a session: its GET stream (`undefined`) or a request's reply. */
export interface EventFormats {
	formatFor(stream: RequestId | undefined): EventFormat | undefined;
}

/** Where a session's messages go when they belong to no call in flight: its event stream, or a link (fronts/link.ts). */
export interface SessionStream {
	readonly open: boolean;
	send(message: JsonRpcMessage): void;
	end(): void;
}

/** A long-lived event stream with keep-alive comments. */
export class EventStream implements SessionStream {
	private readonly timer: NodeJS.Timeout;

	constructor(
		private readonly response: ServerResponse,
		headers: OutgoingHttpHeaders = {},
		private readonly format: EventFormat = eventOf,
	) {
		response.writeHead(200, Object.assign({}, SSE_HEADERS, headers));
		response.flushHeaders();
		this.timer = setInterval(() => response.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
		this.timer.unref();
		response.once('close', () => clearInterval(this.timer));
	}

	get open(): boolean {
		return !this.response.writableEnded && !this.response.destroyed;
	}

	/** Writes a raw event (`event:` and `data:` lines, blank-line terminated). */
	write(event: string): void {
		if (this.open) this.response.write(event);
	}

	send(message: JsonRpcMessage): void {
		this.write(this.format(message));
	}

	end(): void {
		clearInterval(this.timer);
		if (this.open) this.response.end();
	}
}

/** Replies still JSON that turn into event streams if their call outlasts the keep-alive interval. */
const longCalls = new Deadlines<ReplyStream>(KEEP_ALIVE_MS, (reply) => reply.keepAlive());

/** The reply to one POSTed request: JSON if possible, else an event stream. */
export class ReplyStream {
	private stream: EventStream | undefined;
	private readonly longCall: Deadline<ReplyStream> | undefined;

	constructor(
		private readonly response: ServerResponse,
		private readonly headers: OutgoingHttpHeaders,
		/** A long call switches to SSE so keep-alive comments hold the connection open; false keeps the reply JSON unless a message comes first. */
		keepAlive = true,
		/** How the reply's events are written, asked only if it becomes an event stream (plain events without). */
		private readonly formats?: { readonly source: EventFormats; readonly stream: RequestId },
	) {
		this.longCall = keepAlive ? longCalls.add(this) : undefined;
	}

	/** The call outlasted the keep-alive interval: the reply becomes an event stream, which keep-alive comments hold open. */
	keepAlive(): void {
		if (this.open) this.events();
	}

	private events(): EventStream {
		return (this.stream ??= new EventStream(this.response, this.headers, this.formats?.source.formatFor(this.formats.stream)));
	}

	/** The client is still connected to read what comes. */
	get open(): boolean {
		return !this.response.destroyed && !this.response.writableEnded;
	}

	/** The reply sent an event, so the client can resume it from that event's id. */
	sentEvents = false;

	/** A message that must reach the client before the response. */
	send(message: JsonRpcMessage): void {
		this.sentEvents = true;
		this.events().send(message);
	}

	/** Sends the response: as JSON with `status` (and extra headers) unless an event stream has begun. */
	finish(message: JsonRpcMessage, status = 200, headers?: OutgoingHttpHeaders): void {
		longCalls.delete(this.longCall);
		if (!this.open) return;
		if (this.stream) {
			this.stream.send(message);
			this.stream.end();
		} else if (!this.response.destroyed) {
			const body = JSON.stringify(message);
			this.response.writeHead(status, jsonHeaders(this.headers, headers, Buffer.byteLength(body)));
			this.response.end(body);
		}
	}

	cancel(): void {
		longCalls.delete(this.longCall);
		this.stream?.end();
	}
}
