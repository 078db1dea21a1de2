/**
 * Client sessions of the proxy: one per Streamable HTTP session (`Mcp-Session-Id`), legacy SSE
 * stream or aggregate's link (fronts/link.ts), each with its own backend session. A session
 * routes the server's messages to the client: to the open reply of the request they belong to,
 * else to the session's event stream (or link), else into a short backlog until the client
 * opens one.
 *
 * Streamable HTTP sessions number their events (`id:`) and keep the last ones, per stream, so
 * that a client that lost a stream resumes it with `Last-Event-ID` (MCP 2025-03-26 and later).
 * A lost connection is not a cancellation: the call goes on, and what it still sends waits
 * for the client to resume that stream, or, when the stream had no event id to resume from
 * (a plain JSON reply), goes to the session's GET stream.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Backend, UpstreamSession, OpenOptions, ClientSessionSink } from '../core/backend.js';
import { CallTable } from '../core/callTable.js';
import type { CallWatcher, OutboundFilter } from '../chain/chain.js';
import { isRequest, isResponse, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcResponse, type RequestId } from '../core/jsonrpc.js';
import { SESSION_TTL_MS, type ClientSessionStore } from './store.js';
import type { EventFormat, EventStream, ReplyStream, SessionStream } from './streams.js';

const BACKLOG_LIMIT = 100;
/** Events kept per session for resumption. */
const REPLAY_LIMIT = 200;
/** The key of the session's GET stream in the replay buffer; a POST's reply is keyed by its request id. */
const GET_STREAM = '';

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

/** Where a session ends: for good, or only on this replica (the others serve it on). */
export type CloseScope = 'everywhere' | 'here';

export type ClientSessionKind = 'streamable' | 'sse' | 'link';

export class ClientSession implements ClientSessionSink {
	readonly backend: UpstreamSession;
	/** The client's `initialize` parameters, once the session is open. */
	handshake: Record<string, unknown> | undefined;
	/** The headers of every Streamable HTTP reply of the session. */
	readonly headers: Readonly<Record<string, string>>;
	private lastSeen = Date.now();
	private readonly replies = new CallTable<ReplyStream | EventStream | CallReply>();
	private stream: SessionStream | undefined;
	private backlog: JsonRpcMessage[] = [];
	private closed = false;
	/** Aborted when the session closes: cancels the session's calls in flight. */
	private readonly controller = new AbortController();
	private readonly watchers = new CallTable<CallWatcher>();
	/** Server request id → the client request it was asked for, while unanswered. */
	private readonly asked = new CallTable<RequestId>();
	private nextEventId = 1;
	private readonly replay: ReplayEntry[] = [];
	/** Who claims server messages before they are routed, by name (see `claim`). */
	private readonly claimants = new Map<string, (message: JsonRpcMessage) => boolean>();

	constructor(
		backend: Backend,
		readonly id: string,
		readonly kind: ClientSessionKind,
		/** The subject of the identity that opened the session, when callers authenticate. */
		readonly owner: string | undefined,
		private readonly onClose: (session: ClientSession, scope: CloseScope) => void,
		open?: OpenOptions,
		private readonly outbound?: OutboundFilter,
	) {
		this.headers = { 'Mcp-Session-Id': id };
		this.backend = backend.open(this, { ...open, caller: owner });
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

	/** Tells `watcher` what the server does about the call `id`: progress, a request to the client, its answer. */
	watch(id: RequestId, watcher: CallWatcher): void {
		this.watchers.set(id, watcher);
	}

	unwatch(id: RequestId): void {
		this.watchers.delete(id);
	}

	attachStream(stream: SessionStream): void {
		this.stream = stream;
		const waiting = this.backlog;
		this.backlog = [];
		for (const message of waiting) stream.send(message);
		this.backend.streaming?.(true);
	}

	detachStream(stream: SessionStream): void {
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
				this.watchers.get(call)?.activity('answered');
			}
		}
		return this.backend.send(message);
	}

	/**
	 * Server messages `take` accepts are its own and go nowhere else, whichever call they came
	 * with: the 2026 client bridge (revisions/) hears the requests of its tasks (`tasks`) and
	 * the list changes for its listen streams (`listen`) so. A claimant of the same name replaces
	 * the one before.
	 */
	claim(name: string, take: (message: JsonRpcMessage) => boolean): void {
		this.claimants.set(name, take);
	}

	deliver(received: JsonRpcMessage, relatedTo?: RequestId): void {
		const message = this.outbound ? this.outbound(received, this) : received;
		if (!message) return;
		if (this.claimants.size > 0) for (const take of this.claimants.values()) if (take(message)) return;
		if (relatedTo !== undefined) {
			const watcher = this.watchers.get(relatedTo);
			if (watcher) {
				if (isRequest(message)) {
					this.asked.set(message.id, relatedTo);
					watcher.activity('asked');
				} else if ((message as JsonRpcNotification).method === 'notifications/progress') {
					watcher.activity('progress');
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
		// A session that ended with the call in flight still owes the client its answer (an error, by then).
		if ((current === reply || (current === undefined && this.closed)) && reply.open) return reply.finish(response, status, headers);
		if (current && current !== reply) {
			// Resumed on a GET stream: the response ends it.
			current.send(response);
			(current as EventStream).end();
			return;
		}
		this.deliver(response, id);
	}

	/**
	 * The server ended the session. The calls in flight keep their replies: the backend answered
	 * them (with why it ended) or the session's end cancels them, and that answer still reaches
	 * the client on the reply it waits on.
	 */
	ended(): void {
		this.end('everywhere', false);
	}

	/** Ends the session; `here` only stops this replica serving it, upstream it lives on. */
	close(scope: CloseScope = 'everywhere'): void {
		this.end(scope, true);
	}

	private end(scope: CloseScope, cancelReplies: boolean): void {
		if (this.closed) return;
		this.closed = true;
		this.controller.abort('the session ended');
		if (scope === 'here' && this.backend.release) this.backend.release();
		else this.backend.close();
		if (cancelReplies) {
			for (const reply of this.replies.values()) {
				if ('cancel' in reply) reply.cancel();
				else reply.end();
			}
			this.replies.clear();
		}
		this.stream?.end();
		this.onClose(this, scope);
	}
}

/** Replay keys are strings; a request id of either type maps to one. */
function streamKeyOf(id: RequestId): string {
	return typeof id === 'number' ? `#${id}` : `'${id}`;
}

function requestIdOfKey(key: string): RequestId {
	return key.startsWith('#') ? Number(key.slice(1)) : key.slice(1);
}

export interface ClientSessionRegistryOptions {
	/** Starts every session id: the load balancer routes a legacy SSE session's posts by it. */
	readonly idPrefix?: string;
	/** Where Streamable HTTP sessions are kept for the other replicas (sessions/store.ts). */
	readonly store?: ClientSessionStore;
	/** Sees every server message toward a client before it is routed (the guardrails'). */
	readonly outbound?: OutboundFilter;
}

export class ClientSessionRegistry {
	private readonly sessions = new Map<string, ClientSession>();
	/** Sessions being read from the store, so concurrent requests restore one copy. */
	private readonly restoring = new Map<string, Promise<ClientSession | undefined>>();
	private readonly sweeper: NodeJS.Timeout;
	private readonly idPrefix: string;
	private readonly store: ClientSessionStore | undefined;
	private readonly outbound: OutboundFilter | undefined;

	constructor(
		readonly backend: Backend,
		options: ClientSessionRegistryOptions = {},
	) {
		this.idPrefix = options.idPrefix ?? '';
		this.store = options.store;
		this.outbound = options.outbound;
		if (this.store) this.store.onRemoved = (id) => this.sessions.get(id)?.close('here');
		this.sweeper = setInterval(() => this.sweep(), 60_000);
		this.sweeper.unref();
	}

	create(kind: ClientSessionKind, owner?: string, open: OpenOptions = {}): ClientSession {
		const session = this.open(this.idPrefix + randomUUID(), kind, owner, { replicated: kind === 'streamable' && this.store !== undefined, ...open });
		this.sessions.set(session.id, session);
		return session;
	}

	/** A session with its backend session open, not yet found by its id. */
	private open(id: string, kind: ClientSessionKind, owner: string | undefined, options: OpenOptions): ClientSession {
		return new ClientSession(this.backend, id, kind, owner, (closed, scope) => this.closed(closed, scope), options, this.outbound);
	}

	private closed(session: ClientSession, scope: CloseScope): void {
		if (this.sessions.get(session.id) !== session) return;
		this.sessions.delete(session.id);
		if (!this.store || session.kind !== 'streamable') return;
		if (scope === 'everywhere') void this.store.remove(session.id);
		else this.store.forget(session.id);
	}

	/** The session `id` of this kind, if the identity that opened it is `owner`: another caller's token does not reach it. */
	find(id: string, kind: ClientSession['kind'], owner: string | undefined): ClientSession | undefined {
		const session = this.sessions.get(id);
		if (session) this.store?.touch(id);
		return session?.kind === kind && session.owner === owner ? session : undefined;
	}

	/**
	 * A Streamable HTTP session this replica does not hold, taken from the store where another
	 * replica saved it, on the same terms as `find`.
	 */
	async restore(id: string, owner: string | undefined): Promise<ClientSession | undefined> {
		if (!this.store) return undefined;
		let restoring = this.restoring.get(id);
		if (!restoring) {
			restoring = this.load(id).finally(() => this.restoring.delete(id));
			this.restoring.set(id, restoring);
		}
		const session = await restoring;
		return session?.owner === owner ? session : undefined;
	}

	/**
	 * The saved session, found by its id only once it can serve: until then its other requests
	 * wait for the same restore (`restoring`) instead of reaching a server side not yet initialised.
	 */
	private async load(id: string): Promise<ClientSession | undefined> {
		const saved = await this.store!.load(id);
		if (!saved || saved.kind !== 'streamable') return undefined;
		const session = this.open(id, 'streamable', saved.owner, { replicated: true, adopt: saved.upstream });
		session.handshake = saved.handshake;
		if (saved.upstream === undefined) {
			// Nothing upstream to take over: this replica's server side is initialised as the client had it.
			const answer = await session.backend.request({ jsonrpc: '2.0', id: 0, method: 'initialize', params: saved.handshake }, session.signal);
			if (answer.error) {
				session.close('here');
				return undefined;
			}
			await session.backend.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
		}
		this.sessions.set(id, session);
		return session;
	}

	/** A Streamable HTTP session's `initialize` succeeded: saved for the other replicas before the client hears of it. */
	async opened(session: ClientSession, handshake: Record<string, unknown>): Promise<void> {
		session.handshake = handshake;
		if (this.store && session.kind === 'streamable') await this.store.save(session.id, { kind: 'streamable', owner: session.owner, handshake, upstream: session.backend.snapshot?.() });
	}

	get size(): number {
		return this.sessions.size;
	}

	/** Whether the sessions of other replicas can be found (undefined without replicas). */
	get shared(): boolean | undefined {
		return this.store?.available;
	}

	/** A notification from the proxy itself to every open session (a list that changed under the proxy's own policy). */
	notifyAll(message: JsonRpcNotification): void {
		for (const session of this.sessions.values()) session.deliver(message);
	}

	closeAll(): void {
		clearInterval(this.sweeper);
		for (const session of [...this.sessions.values()]) session.close(this.store ? 'here' : 'everywhere');
	}

	private sweep(): void {
		const now = Date.now();
		for (const session of [...this.sessions.values()]) {
			if (session.idleSince(now) > SESSION_TTL_MS) session.close(this.store ? 'here' : 'everywhere');
		}
	}
}
