/**
 * Client sessions of the proxy: one per Streamable HTTP session (`Mcp-Session-Id`) or legacy
 * SSE stream, each with its own backend session. A session routes the server's messages to
 * the client: to the open reply of the request they belong to, else to the session's event
 * stream, else into a short backlog until the client opens one.
 */
import { randomUUID } from 'node:crypto';
import type { Backend, BackendSession, SessionSink } from './backend.js';
import type { JsonRpcMessage, RequestId } from './jsonrpc.js';
import type { EventStream, ReplyStream } from './sse.js';

const BACKLOG_LIMIT = 100;
/** Sessions idle this long, with no open stream, are closed. */
const SESSION_TTL_MS = 2 * 60 * 60_000;

export class ClientSession implements SessionSink {
	readonly id = randomUUID();
	readonly backend: BackendSession;
	private lastSeen = Date.now();
	private readonly replies = new Map<RequestId, ReplyStream>();
	private stream: EventStream | undefined;
	private backlog: JsonRpcMessage[] = [];
	private closed = false;
	/** Aborted when the session closes: cancels the session's calls in flight. */
	private readonly controller = new AbortController();

	constructor(
		backend: Backend,
		readonly kind: 'streamable' | 'sse',
		/** The subject of the identity that opened the session, when callers authenticate. */
		readonly owner: string | undefined,
		private readonly onClose: (session: ClientSession) => void,
	) {
		this.backend = backend.open(this);
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

	/** The reply of a request in flight, where the server's related messages go. */
	track(id: RequestId, reply: ReplyStream): void {
		this.replies.set(id, reply);
	}

	untrack(id: RequestId): void {
		this.replies.delete(id);
	}

	attachStream(stream: EventStream): void {
		this.stream = stream;
		const waiting = this.backlog;
		this.backlog = [];
		for (const message of waiting) stream.send(message);
	}

	detachStream(stream: EventStream): void {
		if (this.stream === stream) this.stream = undefined;
	}

	deliver(message: JsonRpcMessage, relatedTo?: RequestId): void {
		const reply = relatedTo === undefined ? undefined : this.replies.get(relatedTo);
		if (reply) reply.send(message);
		else if (this.stream?.open) this.stream.send(message);
		else if (this.backlog.length < BACKLOG_LIMIT) this.backlog.push(message);
	}

	ended(): void {
		this.close();
	}

	close(): void {
		if (this.closed) return;
		this.closed = true;
		this.controller.abort();
		this.backend.close();
		for (const reply of this.replies.values()) reply.cancel();
		this.replies.clear();
		this.stream?.end();
		this.onClose(this);
	}
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
