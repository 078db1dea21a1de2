/**
 * Client sessions of the proxy: one per Streamable HTTP session (`Mcp-Session-Id`) or legacy
 * SSE stream, each with its own backend session. A session routes the server's messages to
 * the client: to the open reply of the request they belong to, else to the session's event
 * stream, else into a short backlog until the client opens one.
 *
 * Streamable HTTP sessions number their events (`id:`) and keep the last ones, per stream, so
 * that a client that lost a stream resumes it with `Last-Event-ID` (MCP 2025-03-26 and later).
 * A lost connection is not a cancellation: the call goes on, and what it still sends waits
 * for the client to resume that stream, or, when the stream had no event id to resume from
 * (a plain JSON reply), goes to the session's GET stream.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Backend, BackendSession, SessionSink } from './backend.js';
import { isRequest, isResponse, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcResponse, type RequestId } from './jsonrpc.js';
import type { EventFormat, EventStream, ReplyStream } from './sse.js';

const BACKLOG_LIMIT = 100;
/** Events kept per session for resumption. */
const REPLAY_LIMIT = 200;
/** Sessions idle this long, with no open stream, are closed. */
const SESSION_TTL_MS = 2 * 60 * 60_000;
/** The key of the session's GET stream in the replay buffer; a POST's reply is keyed by its request id. */
const GET_STREAM = '';

/** What the server does about one call, as the request timeout needs to know. */
export type CallActivity = 'progress' | 'asked' | 'answered';

interface ReplayEntry {
	readonly id: number;
	readonly stream: string;
	readonly text: string;
	/** The event carries the response that ends its stream. */
	readonly last: boolean;
}

/** Where the server's messages about a request in flight go, when not to the client's HTTP reply itself. */
export interface CallReply {
	readonly open: boolean;
	send(message: JsonRpcMessage): void;
	/** The session closed. */
	cancel(): void;
}

export class ClientSession implements SessionSink {
	readonly id = randomUUID();
	readonly backend: BackendSession;
	private lastSeen = Date.now();
	private readonly replies = new Map<RequestId, ReplyStream | EventStream | CallReply>();
	private stream: EventStream | undefined;
	private backlog: JsonRpcMessage[] = [];
	private closed = false;
	/** Aborted when the session closes: cancels the session's calls in flight. */
	private readonly controller = new AbortController();
	private readonly watchers = new Map<RequestId, (activity: CallActivity) => void>();
	/** Server request id → the client request it was asked for, while unanswered. */
	private readonly asked = new Map<RequestId, RequestId>();
	private nextEventId = 1;
	private readonly replay: ReplayEntry[] = [];
	private claimant: ((message: JsonRpcMessage) => boolean) | undefined;

	constructor(
		backend: Backend,
		readonly kind: 'streamable' | 'sse',
		/** The subject of the identity that opened the session, when callers authenticate. */
		readonly owner: string | undefined,
		private readonly onClose: (session: ClientSession) => void,
	) {
		this.backend = backend.open(this);
		// Every call in flight listens to the session's end: any number of them is no leak.
		setMaxListeners(0, this.controller.signal);
	}

	get signal(): AbortSignal {
		return this.controller.signal;
	}

	get hasStream(): boolean {
		return this.stream?.open ?? false;
	}

	touch(): void {
		this.lastSeen = Date.now();
	}

	idleSince(now: number): number {
		return this.replies.size > 0 || this.hasStream ? 0 : now - this.lastSeen;
	}

	/** How events of a stream are written: numbered and remembered on Streamable HTTP, plain on legacy SSE. */
	formatFor(stream: RequestId | undefined): EventFormat | undefined {
		if (this.kind !== 'streamable') return undefined;
		const key = stream === undefined ? GET_STREAM : streamKeyOf(stream);
		return (message) => this.remember(key, message);
	}

	private remember(stream: string, message: JsonRpcMessage): string {
		const id = this.nextEventId++;
		const text = `id: ${id}\nevent: message\ndata: ${JSON.stringify(message)}\n\n`;
		if (this.replay.length >= REPLAY_LIMIT) this.replay.shift();
		this.replay.push({ id, stream, text, last: stream !== GET_STREAM && isResponse(message) });
		return text;
	}

	/** The reply of a request in flight, where the server's related messages go. */
	track(id: RequestId, reply: ReplyStream | CallReply): void {
		this.replies.set(id, reply);
	}

	untrack(id: RequestId): void {
		this.replies.delete(id);
	}

	/** Tells `listener` what the server does about the call `id`: progress, a request to the client, its answer. */
	watch(id: RequestId, listener: (activity: CallActivity) => void): () => void {
		this.watchers.set(id, listener);
		return () => this.watchers.delete(id);
	}

	attachStream(stream: EventStream): void {
		this.stream = stream;
		const waiting = this.backlog;
		this.backlog = [];
		for (const message of waiting) stream.send(message);
		this.backend.streaming?.(true);
	}

	detachStream(stream: EventStream): void {
		if (this.stream !== stream) return;
		this.stream = undefined;
		if (!this.closed) this.backend.streaming?.(false);
	}

	/**
	 * A GET with `Last-Event-ID`: the events of that event's stream after it, then what that
	 * stream still has to send. False when the id is not (or no longer) known here.
	 */
	resume(lastEventId: string, open: (format: EventFormat | undefined) => EventStream): boolean {
		const last = Number(lastEventId);
		const from = this.replay.find((entry) => entry.id === last);
		if (!from) return false;
		const missed = this.replay.filter((entry) => entry.stream === from.stream && entry.id > last);
		const key = from.stream;
		const stream = open(key === GET_STREAM ? this.formatFor(undefined) : (message) => this.remember(key, message));
		for (const entry of missed) stream.write(entry.text);
		const call = key === GET_STREAM ? undefined : requestIdOfKey(key);
		if (call === undefined) this.attachStream(stream);
		else if (this.replies.has(call) && !missed.some((entry) => entry.last)) this.replies.set(call, stream);
		else stream.end(); // the call is over: everything it sent has been replayed
		return true;
	}

	/** A message from the client that is not a request: a notification, or its answer to a server request. */
	relay(message: JsonRpcNotification | JsonRpcResponse): void | Promise<void> {
		if (this.asked.size > 0 && isResponse(message) && message.id !== null) {
			const call = this.asked.get(message.id);
			if (call !== undefined) {
				this.asked.delete(message.id);
				this.watchers.get(call)?.('answered');
			}
		}
		return this.backend.send(message);
	}

	/**
	 * Server messages `take` accepts are its own and go nowhere else, whichever call they came
	 * with: the stateless bridge hears the requests of its tasks so.
	 */
	claim(take: (message: JsonRpcMessage) => boolean): void {
		this.claimant = take;
	}

	deliver(message: JsonRpcMessage, relatedTo?: RequestId): void {
		if (this.claimant?.(message)) return;
		if (relatedTo !== undefined) {
			const watcher = this.watchers.get(relatedTo);
			if (watcher) {
				if (isRequest(message)) {
					this.asked.set(message.id, relatedTo);
					watcher('asked');
				} else if ((message as JsonRpcNotification).method === 'notifications/progress') {
					watcher('progress');
				}
			}
			const reply = this.replies.get(relatedTo);
			if (reply?.open) return reply.send(message);
			if (reply && this.kind === 'streamable' && (reply as ReplyStream).sentEvents !== false) {
				// Lost after sending an event id: kept for the client to resume.
				this.remember(streamKeyOf(relatedTo), message);
				return;
			}
		}
		if (this.stream?.open) this.stream.send(message);
		else if (this.backlog.length < BACKLOG_LIMIT) this.backlog.push(message);
	}

	/** The response to a request, whether or not its reply is still open. */
	answer(id: RequestId, reply: ReplyStream, response: JsonRpcResponse, status?: number, headers?: Readonly<Record<string, string>>): void {
		const current = this.replies.get(id);
		if (current === reply && reply.open) return reply.finish(response, status, headers);
		if (current && current !== reply) {
			// Resumed on a GET stream: the response ends it.
			current.send(response);
			(current as EventStream).end();
			return;
		}
		this.deliver(response, id);
	}

	ended(): void {
		this.close();
	}

	close(): void {
		if (this.closed) return;
		this.closed = true;
		this.controller.abort();
		this.backend.close();
		for (const reply of this.replies.values()) {
			if ('cancel' in reply) reply.cancel();
			else reply.end();
		}
		this.replies.clear();
		this.stream?.end();
		this.onClose(this);
	}
}

/** Replay keys are strings; a request id of either type maps to one. */
function streamKeyOf(id: RequestId): string {
	return typeof id === 'number' ? `#${id}` : `'${id}`;
}

function requestIdOfKey(key: string): RequestId {
	return key.startsWith('#') ? Number(key.slice(1)) : key.slice(1);
}

export class SessionRegistry {
	private readonly sessions = new Map<string, ClientSession>();
	private readonly sweeper: NodeJS.Timeout;

	constructor(private readonly backend: Backend) {
		this.sweeper = setInterval(() => this.sweep(), 60_000);
		this.sweeper.unref();
	}

	create(kind: 'streamable' | 'sse', owner?: string): ClientSession {
		const session = new ClientSession(this.backend, kind, owner, (closed) => this.sessions.delete(closed.id));
		this.sessions.set(session.id, session);
		return session;
	}

	/** The session `id` of this kind, if the identity that opened it is `owner`: another caller's token does not reach it. */
	find(id: string, kind: ClientSession['kind'], owner: string | undefined): ClientSession | undefined {
		const session = this.sessions.get(id);
		return session?.kind === kind && session.owner === owner ? session : undefined;
	}

	get size(): number {
		return this.sessions.size;
	}

	closeAll(): void {
		clearInterval(this.sweeper);
		for (const session of [...this.sessions.values()]) session.close();
	}

	private sweep(): void {
		const now = Date.now();
		for (const session of [...this.sessions.values()]) {
			if (session.idleSince(now) > SESSION_TTL_MS) session.close();
		}
	}
}
