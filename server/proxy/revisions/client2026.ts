/**
 * MCP 2026-07-28 clients in front of servers of earlier revisions. The 2026-07-28 revision keeps
 * no session: no `initialize`, no `Mcp-Session-Id`; every request carries its revision, the
 * client's capabilities and (optionally) its identity in `_meta`, `server/discover` describes
 * the server, and every result says `resultType`.
 *
 * A server that speaks 2026-07-28 itself (`Backend.speaks2026`, asked once) gets each request
 * as the client sent it, on a session without a handshake. Otherwise the proxy keeps, per
 * caller and capability set, one 2025 session it opened itself with a
 * 2025-11-25 `initialize` (through the MCP middleware chain, like any client's) and answers
 * `server/discover` from that handshake. When the server turned out to speak 2026-07-28 itself
 * (instances spread, which are not asked first),
 * each request reaches it as the client sent it (its claims, its input rounds, its result);
 * otherwise it goes without the 2026 `_meta` keys and its result is stamped. Either way the
 * server's messages about the request (progress, logs) stream into its reply.
 *
 * A 2025 server asks its client things by sending it requests (sampling, elicitation, roots);
 * 2026-07-28 asks by answering with an input-required result instead. For a client that
 * declared those capabilities, each call gets a 2025 session of its own (pooled), so that
 * every request the server sends on it is about that call; the call is then held, the
 * server's requests go to the client as `inputRequests` with a `requestState` naming the held
 * call, and the client's retry with `inputResponses` answers them and resumes the call.
 * Tasks go their own way (client2026Tasks.ts).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { HttpExchange, McpHandler, NoticeHandler } from '../chain/chain.js';
import {
	canonicalJson,
	decodeHeaderValue,
	ErrorCode,
	errorResponse,
	isRequest,
	mcpNameOf,
	META_2026,
	REVISION_2026,
	SUPPORTED_PROTOCOL_VERSIONS,
	type JsonRpcMessage,
	type JsonRpcRequest,
	type JsonRpcResponse,
	type RequestId,
} from '../core/jsonrpc.js';
import type { CallReply, ClientSession, ClientSessionRegistry } from '../sessions/clientSession.js';
import type { ReplyStream } from '../sessions/streams.js';
import { tag, tagsOf } from '../core/tags.js';
import { Client2026Listens, SUBSCRIPTION_ID_KEY } from './client2026Listen.js';
import { Client2026Tasks } from './client2026Tasks.js';

const { protocolVersion: PROTOCOL_VERSION_KEY, clientCapabilities: CLIENT_CAPABILITIES_KEY, clientInfo: CLIENT_INFO_KEY, serverInfo: SERVER_INFO_KEY } = META_2026;
/** Results a 2026-07-28 client may cache: they carry `ttlMs` and `cacheScope`. */
const CACHEABLE = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read', 'server/discover']);
/** Capabilities that let a 2025 server send requests to the client, answered in input rounds. */
const SERVER_REQUEST_CAPABILITIES = ['sampling', 'elicitation', 'roots'];
/**
 * Client capabilities that change what a 2025 server may send its client: sessions are keyed by
 * these alone (and the `experimental` keys the server advertises), so that callers whose
 * capabilities differ in nothing else share one session (and one server process).
 */
const SESSION_CAPABILITIES = ['sampling', 'elicitation', 'roots', 'tasks', 'extensions'];
/** The most 2025 sessions (each may be a server process of its own) the bridge holds for one caller, and for all. */
export const MAX_SESSIONS_PER_CALLER = 16;
export const MAX_SESSIONS = 64;
/** A bridge session with nothing in flight this long is closed. */
const SESSION_IDLE_MS = 5 * 60_000;
/** The most calls one caller may have waiting for its input at once. */
export const MAX_HELD_CALLS_PER_CALLER = 4;
/** How long a held call waits for its client to come back with the input asked for. */
const HELD_CALL_TTL_MS = 10 * 60_000;
const REQUEST_STATE_PREFIX = 'hangar-held:';

/** Methods 2026-07-28 removed: a 2026-07-28 client gets "method not found" for them, whatever the server behind speaks. */
const REMOVED_METHODS = new Set(['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'tasks/result', 'tasks/list']);

/**
 * Whether a request without a session is a 2026-07-28 client's: its `_meta` claims that revision,
 * or its `MCP-Protocol-Version` header names none of the session-based ones (then it is answered
 * as 2026-07-28 answers an unsupported revision).
 */
export function isRequest2026(headers: IncomingHttpHeaders, request: JsonRpcRequest): boolean {
	const meta = request.params?._meta as Record<string, unknown> | undefined;
	if (meta?.[PROTOCOL_VERSION_KEY] === REVISION_2026) return true;
	const version = headers['mcp-protocol-version'];
	return typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version.trim());
}

/**
 * The refusal 2026-07-28 requires of a malformed request, with its HTTP status 400: a `_meta`
 * without the revision's required keys (`InvalidParams`), standard headers that disagree with
 * the body (`HeaderMismatch`), a revision other than 2026-07-28 (`UnsupportedProtocolVersion`,
 * naming the one supported). Undefined for a well-formed request.
 */
export function refusal2026(headers: IncomingHttpHeaders, request: JsonRpcRequest): JsonRpcResponse | undefined {
	const meta = request.params?._meta;
	const missing = missingClaims(meta);
	if (missing.length) return refused(request.id, ErrorCode.InvalidParams, `Invalid params: the request lacks ${missing.join(', ')}, required on protocol revision ${REVISION_2026}`, { envelope: { missing } });
	const claimed = (meta as Record<string, unknown>)[PROTOCOL_VERSION_KEY] as string;
	const version = headers['mcp-protocol-version'];
	if (version === undefined) return refused(request.id, ErrorCode.HeaderMismatch, 'Bad Request: the MCP-Protocol-Version header is required');
	if (typeof version !== 'string' || version.trim() !== claimed) return refused(request.id, ErrorCode.HeaderMismatch, `Bad Request: the MCP-Protocol-Version header does not match the request's revision ${claimed}`);
	if (claimed !== REVISION_2026) return refused(request.id, ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version: ${claimed}`, { supported: [REVISION_2026], requested: claimed });
	const mismatch = headerMismatch(headers, request);
	return mismatch ? refused(request.id, ErrorCode.HeaderMismatch, `Bad Request: ${mismatch}`) : undefined;
}

/** The `_meta` keys 2026-07-28 requires that `meta` lacks (all of `_meta` when it is not an object). */
function missingClaims(meta: unknown): string[] {
	if (!isObject(meta)) return ['_meta'];
	const missing: string[] = [];
	if (typeof meta[PROTOCOL_VERSION_KEY] !== 'string') missing.push(`_meta["${PROTOCOL_VERSION_KEY}"]`);
	if (!isObject(meta[CLIENT_CAPABILITIES_KEY])) missing.push(`_meta["${CLIENT_CAPABILITIES_KEY}"]`);
	return missing;
}

/** Why the `Mcp-Method` or `Mcp-Name` header disagrees with the body; undefined when they agree. */
function headerMismatch(headers: IncomingHttpHeaders, request: JsonRpcRequest): string | undefined {
	const method = headers['mcp-method'];
	if (typeof method !== 'string') return 'the Mcp-Method header is required';
	if (method.trim() !== request.method) return `the Mcp-Method header does not match the method ${request.method}`;
	const name = mcpNameOf(request.method, request.params);
	if (name === undefined) return undefined;
	const header = headers['mcp-name'];
	if (typeof header !== 'string') return `the Mcp-Name header is required for ${request.method}`;
	if (decodeHeaderValue(header) !== name) return `the Mcp-Name header does not match the request's ${request.method === 'resources/read' ? 'uri' : 'name'}`;
	return undefined;
}

/**
 * Why a retry's input is malformed, if it is: 2026-07-28 has `inputResponses` an object of the
 * client's results (each an object) and `requestState` a string.
 */
function malformedInput(params: Record<string, unknown>): string | undefined {
	const responses = params.inputResponses;
	if ('inputResponses' in params && (!isObject(responses) || !Object.values(responses).every(isObject))) return 'inputResponses must be an object of the client\'s results, each an object';
	if ('requestState' in params && typeof params.requestState !== 'string') return 'requestState must be a string';
	return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An error the proxy answers a malformed 2026-07-28 request with, over HTTP 400. */
function refused(id: RequestId, code: number, message: string, data?: unknown): JsonRpcResponse {
	return tag(errorResponse(id, code, message, data), { refusal: { status: 400 } });
}

interface Session2025 {
	readonly session: ClientSession;
	readonly handshake: Record<string, unknown>;
}

/**
 * A call on a 2025 session of its own, whose server may ask the client things: the server's
 * requests about the call are collected here (the session routes the call's messages here)
 * until the proxy hands them to the client; its other messages go to the current HTTP reply.
 */
class HeldCall implements CallReply {
	readonly open = true;
	/** Input key → the id of the server request it answers. */
	readonly asked = new Map<string, RequestId>();
	outcome!: Promise<JsonRpcResponse>;
	expiry: NodeJS.Timeout | undefined;
	private reply: ReplyStream | undefined;
	private queue: JsonRpcRequest[] = [];
	private wake: (() => void) | undefined;

	constructor(
		readonly session2025: Session2025,
		readonly owner: string,
		readonly done: () => void,
	) {}

	send(message: JsonRpcMessage): void {
		if (isRequest(message)) {
			this.queue.push(message);
			this.wake?.();
		} else if (this.reply?.open) {
			this.reply.send(message);
		}
	}

	cancel(): void {
		this.wake?.();
	}

	/** The call's response, or the requests the server has sent about it, whichever comes first. */
	async next(reply: ReplyStream): Promise<JsonRpcResponse | JsonRpcRequest[]> {
		this.reply = reply;
		if (!this.queue.length) {
			const asked = new Promise<void>((resolve) => (this.wake = resolve));
			const response = await Promise.race([this.outcome, asked]);
			this.wake = undefined;
			if (response) return response;
		}
		const requests = this.queue;
		this.queue = [];
		return requests.length ? requests : this.outcome;
	}
}

/**
 * A 2026-07-28 server names the listen request its notifications belong to by that request's
 * id, which the proxy replaced with its own: the client gets its own id back.
 */
class RenamingReply implements CallReply {
	constructor(
		private readonly reply: ReplyStream,
		private readonly forwarded: RequestId,
		private readonly original: RequestId,
	) {}

	get open(): boolean {
		return this.reply.open;
	}

	send(message: JsonRpcMessage): void {
		this.reply.send(withSubscriptionId(message, this.forwarded, this.original));
	}

	cancel(): void {
		this.reply.cancel();
	}
}

/** `message` with the subscription id `from` in its `_meta` (params or result) replaced by `to`. */
function withSubscriptionId<T extends JsonRpcMessage>(message: T, from: RequestId, to: RequestId): T {
	const holder = 'result' in message ? 'result' : 'params';
	const body = (message as unknown as Record<string, unknown>)[holder] as Record<string, unknown> | undefined;
	const meta = body?._meta as Record<string, unknown> | undefined;
	if (meta?.[SUBSCRIPTION_ID_KEY] !== from) return message;
	return { ...message, [holder]: { ...body, _meta: { ...meta, [SUBSCRIPTION_ID_KEY]: to } } };
}

export class Client2026Bridge {
	/** 2025 sessions by caller and declared capabilities. */
	private readonly sessions2025 = new Map<string, Promise<Session2025 | JsonRpcResponse>>();
	/** Idle sessions of their own for calls that may be asked things, by the same key. */
	private readonly idle = new Map<string, Session2025[]>();
	/** Sessions without a handshake on a server that speaks 2026-07-28, by caller. */
	private readonly stateless = new Map<string, Session2025>();
	/** Calls waiting for their client's input, by request state. */
	private readonly held = new Map<string, HeldCall>();
	private readonly tasks: Client2026Tasks;
	private readonly listens: Client2026Listens;
	/** Every 2025 session the bridge opened, with its caller: counted against the limits, closed when idle. */
	private readonly opened = new Map<ClientSession, string>();
	/** The server's `experimental` capabilities, once a handshake told them. */
	private advertised: Record<string, unknown> | undefined;
	private readonly sweeper: NodeJS.Timeout;
	private nextId = 1;

	constructor(
		private readonly sessions: ClientSessionRegistry,
		private readonly handle: McpHandler,
		private readonly notify: NoticeHandler,
	) {
		this.tasks = new Client2026Tasks(handle, notify);
		this.listens = new Client2026Listens(handle);
		this.sweeper = setInterval(() => this.sweep(), 60_000);
		this.sweeper.unref();
	}

	/** Answers one 2026-07-28 request; the server's messages about it go to `reply` first. */
	async answer(exchange: HttpExchange, request: JsonRpcRequest, reply: ReplyStream): Promise<JsonRpcResponse> {
		const refusal = refusal2026(exchange.request.headers, request);
		if (refusal) return refusal;
		if (REMOVED_METHODS.has(request.method)) return errorResponse(request.id, ErrorCode.MethodNotFound, `Method not found: ${request.method} is not part of protocol revision ${REVISION_2026}`);
		const meta = request.params!._meta as Record<string, unknown>;
		const declared = this.sessionCapabilities(meta[CLIENT_CAPABILITIES_KEY] as Record<string, unknown>);
		const owner = exchange.identity?.subject ?? '';
		if (await this.sessions.backend.speaks2026?.(claimsOf(meta))) return this.forward(exchange, request, request.params, this.statelessFor(owner, exchange), reply);
		const key = `${owner}\n${canonicalJson(declared)}`;
		const session2025 = await this.sessionFor(key, exchange, declared, meta[CLIENT_INFO_KEY]);
		if (!('session' in session2025)) return { ...session2025, id: request.id };
		session2025.session.touch();
		if (request.method === 'server/discover') return this.discovered(request, session2025.handshake);
		if (session2025.session.backend.speaks2026) return this.forward(exchange, request, request.params, session2025, reply);
		if (request.method === 'subscriptions/listen') {
			const listened = await this.listens.listen(exchange, request, request.params!, session2025.session, session2025.handshake, owner, reply);
			return this.stamped(request, listened, session2025.handshake);
		}

		const params = withoutClaims(request.params ?? {}, meta);
		const malformed = malformedInput(params);
		if (malformed) return refused(request.id, ErrorCode.InvalidParams, `Invalid params: ${malformed}`);
		const { requestState, inputResponses, ...call } = params;
		if (typeof requestState === 'string' && requestState.startsWith(REQUEST_STATE_PREFIX)) return this.resume(exchange, request, requestState, inputResponses, owner, reply);
		const tasked = await this.tasks.answer({ exchange, request, params, session: session2025.session, handshake: session2025.handshake, owner, declared });
		if (tasked) return this.stamped(request, tasked, session2025.handshake);
		if (!SERVER_REQUEST_CAPABILITIES.some((name) => declared[name] !== undefined)) return this.forward(exchange, request, params, session2025, reply);
		if ([...this.held.values()].filter((call) => call.owner === owner).length >= MAX_HELD_CALLS_PER_CALLER) {
			return errorResponse(request.id, ErrorCode.LimitReached, `Too many held calls: this caller has ${MAX_HELD_CALLS_PER_CALLER} calls waiting for its input, the most it may have`);
		}
		const own = await this.checkOut(key, exchange, declared, meta[CLIENT_INFO_KEY]);
		if (!('session' in own)) return { ...own, id: request.id };
		own.session.touch();
		return this.hold(exchange, request, call, own, owner, key, reply);
	}

	/** Forwards a request on a shared 2025 session; the server's messages about it go to `reply`. */
	private async forward(exchange: HttpExchange, request: JsonRpcRequest, params: Record<string, unknown> | undefined, session2025: Session2025, reply: ReplyStream): Promise<JsonRpcResponse> {
		// Another 2026 caller may use the same id on the same 2025 session: forwarded under one of the proxy's.
		const id = `hangar-${this.nextId++}`;
		const { session } = session2025;
		// Without a session there is nothing to resume: a client that hangs up has given the call up
		// (a `subscriptions/listen` ends that way).
		const hungUp = new AbortController();
		const onClose = () => exchange.response.writableFinished || hungUp.abort('the client hung up');
		exchange.response.once('close', onClose);
		session.track(id, session.backend.speaks2026 ? new RenamingReply(reply, id, request.id) : reply);
		try {
			const signal = AbortSignal.any([session.signal, hungUp.signal]);
			const response = await this.handle({ request: { jsonrpc: '2.0', id, method: request.method, params }, session, signal, exchange });
			const answer = this.stamped(request, withSubscriptionId({ ...response, id: request.id }, id, request.id), session2025.handshake);
			// A 2026-07-28 server's refusal keeps its HTTP status (backends/http.ts tags it).
			const refusal = tagsOf(response)?.refusal;
			return refusal ? tag(answer, { refusal }) : answer;
		} finally {
			exchange.response.off('close', onClose);
			session.untrack(id);
		}
	}

	/** Starts a call that the server may ask the client about, on a session of its own. */
	private hold(exchange: HttpExchange, request: JsonRpcRequest, params: Record<string, unknown>, own: Session2025, owner: string, key: string, reply: ReplyStream): Promise<JsonRpcResponse> {
		const id = `hangar-${this.nextId++}`;
		const call = new HeldCall(own, owner, () => {
			own.session.untrack(id);
			if (own.session.signal.aborted) return;
			// One idle session per capability set is kept for the next call: each may be a server process.
			const idle = this.idle.get(key)?.filter((pooled) => !pooled.session.signal.aborted) ?? [];
			if (idle.length) return own.session.close();
			this.idle.set(key, [own]);
		});
		own.session.track(id, call);
		call.outcome = this.handle({ request: { jsonrpc: '2.0', id, method: request.method, params }, session: own.session, signal: own.session.signal, exchange });
		return this.settle(request, call, reply);
	}

	/** A client's retry with the input its held call asked for: the answers go to the server, and the call goes on. */
	private async resume(exchange: HttpExchange, request: JsonRpcRequest, requestState: string, inputResponses: unknown, owner: string, reply: ReplyStream): Promise<JsonRpcResponse> {
		const call = this.held.get(requestState);
		if (!call || call.owner !== owner) return errorResponse(request.id, ErrorCode.InvalidParams, 'Invalid params: requestState names no call waiting for input (it may have expired)');
		this.held.delete(requestState);
		clearTimeout(call.expiry);
		call.session2025.session.touch();
		const responses = typeof inputResponses === 'object' && inputResponses !== null ? (inputResponses as Record<string, unknown>) : {};
		for (const [key, result] of Object.entries(responses)) {
			const serverRequest = call.asked.get(key);
			if (serverRequest === undefined) continue;
			call.asked.delete(key);
			const refused = await this.notify({ message: { jsonrpc: '2.0', id: serverRequest, result: result as Record<string, unknown> }, session: call.session2025.session, exchange });
			if (refused) {
				// The call cannot go on without that answer: it is given up, with its session.
				call.session2025.session.close();
				return { ...refused, id: request.id };
			}
		}
		return this.settle(request, call, reply);
	}

	/** The held call's response, or an input-required result with what the server asked, held again. */
	private async settle(request: JsonRpcRequest, call: HeldCall, reply: ReplyStream): Promise<JsonRpcResponse> {
		const next = await call.next(reply);
		if (!Array.isArray(next)) {
			call.done();
			return this.stamped(request, { ...next, id: request.id }, call.session2025.handshake);
		}
		const inputRequests: Record<string, unknown> = {};
		for (const asked of next) {
			const key = `${typeof asked.id}:${asked.id}`;
			call.asked.set(key, asked.id);
			inputRequests[key] = asked.params === undefined ? { method: asked.method } : { method: asked.method, params: asked.params };
		}
		const requestState = `${REQUEST_STATE_PREFIX}${randomUUID()}`;
		this.held.set(requestState, call);
		// A client that never comes back: the call is given up, with its session.
		call.expiry = setTimeout(() => {
			this.held.delete(requestState);
			call.session2025.session.close();
		}, HELD_CALL_TTL_MS).unref();
		return { jsonrpc: '2.0', id: request.id, result: { resultType: 'input_required', inputRequests, requestState } };
	}

	/**
	 * The caller's session for a server that speaks 2026-07-28 itself: no handshake, each
	 * request goes as the client sent it.
	 */
	private statelessFor(owner: string, exchange: HttpExchange): Session2025 {
		let stateless = this.stateless.get(owner);
		if (!stateless || stateless.session.signal.aborted) {
			const session = this.sessions.create('streamable', exchange.identity?.subject, { stateless2026: true });
			stateless = { session, handshake: {} };
			this.stateless.set(owner, stateless);
			this.opened.set(session, owner);
			session.signal.addEventListener('abort', () => {
				this.opened.delete(session);
				if (this.stateless.get(owner)?.session === session) this.stateless.delete(owner);
			}, { once: true });
		}
		stateless.session.touch();
		return stateless;
	}

	/** An idle session of its own for a call, or a new one. */
	private checkOut(key: string, exchange: HttpExchange, capabilities: Record<string, unknown>, clientInfo: unknown): Promise<Session2025 | JsonRpcResponse> {
		const idle = this.idle.get(key);
		while (idle?.length) {
			const session2025 = idle.pop()!;
			if (!session2025.session.signal.aborted) return Promise.resolve(session2025);
		}
		return this.open(exchange, capabilities, clientInfo, true);
	}

	private sessionFor(key: string, exchange: HttpExchange, capabilities: Record<string, unknown>, clientInfo: unknown): Promise<Session2025 | JsonRpcResponse> {
		let opened = this.sessions2025.get(key);
		if (!opened) {
			opened = this.open(exchange, capabilities, clientInfo);
			this.sessions2025.set(key, opened);
			// A failed handshake, or a session that ended, is opened again next time.
			void opened.then((result) => {
				if (!('session' in result)) this.sessions2025.delete(key);
				else result.session.signal.addEventListener('abort', () => this.sessions2025.delete(key), { once: true });
			});
		}
		return opened;
	}

	/** The capabilities a caller's session is keyed by and initialised with: those that change what the server may send. */
	private sessionCapabilities(declared: Record<string, unknown>): Record<string, unknown> {
		const kept: Record<string, unknown> = {};
		for (const name of SESSION_CAPABILITIES) if (declared[name] !== undefined) kept[name] = declared[name];
		const experimental = declared.experimental;
		if (this.advertised && typeof experimental === 'object' && experimental !== null) {
			const names = Object.keys(experimental).filter((name) => Object.hasOwn(this.advertised!, name));
			if (names.length) kept.experimental = Object.fromEntries(names.map((name) => [name, (experimental as Record<string, unknown>)[name]]));
		}
		return kept;
	}

	/** Why the caller may not have another session (after the idle ones are closed), if it may not. */
	private limited(owner: string): string | undefined {
		const count = () => [...this.opened.values()].filter((caller) => caller === owner).length;
		if (this.opened.size < MAX_SESSIONS && count() < MAX_SESSIONS_PER_CALLER) return undefined;
		this.sweep();
		if (this.opened.size >= MAX_SESSIONS) return `the workload has ${MAX_SESSIONS} sessions for ${REVISION_2026} clients open, the most it may have`;
		if (count() >= MAX_SESSIONS_PER_CALLER) return `this caller has ${MAX_SESSIONS_PER_CALLER} sessions open (one per capability set and per call awaiting input), the most it may have`;
		return undefined;
	}

	/** Closes the sessions with nothing in flight (a held call counts) for SESSION_IDLE_MS. */
	private sweep(): void {
		const now = Date.now();
		for (const session of this.opened.keys()) if (session.idleSince(now) > SESSION_IDLE_MS) session.close();
	}

	/** A 2025 session; `ownProcess` for one per call that may wait for its client (a stdio process to itself, so it holds up no other caller). */
	private async open(exchange: HttpExchange, capabilities: Record<string, unknown>, clientInfo: unknown, ownProcess = false): Promise<Session2025 | JsonRpcResponse> {
		const owner = exchange.identity?.subject ?? '';
		const limit = this.limited(owner);
		if (limit) return errorResponse(null, ErrorCode.LimitReached, `Too many sessions: ${limit}`);
		const session = this.sessions.create('streamable', exchange.identity?.subject, { ownProcess });
		this.opened.set(session, owner);
		session.signal.addEventListener('abort', () => this.opened.delete(session), { once: true });
		this.listens.watch(session, owner);
		const initialize: JsonRpcRequest = {
			jsonrpc: '2.0',
			id: `hangar-${this.nextId++}`,
			method: 'initialize',
			params: {
				protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.at(-1),
				capabilities,
				clientInfo: typeof clientInfo === 'object' && clientInfo !== null ? clientInfo : { name: 'mcp-client', version: '0' },
			},
		};
		const answer = await this.handle({ request: initialize, session, signal: session.signal, exchange });
		if (!answer.result) {
			session.close();
			return answer;
		}
		const refused = await this.notify({ message: { jsonrpc: '2.0', method: 'notifications/initialized' }, session, exchange });
		if (refused) {
			session.close();
			return refused;
		}
		const offered = (answer.result.capabilities as Record<string, unknown> | undefined)?.experimental;
		this.advertised ??= typeof offered === 'object' && offered !== null ? (offered as Record<string, unknown>) : {};
		return { session, handshake: answer.result };
	}

	private discovered(request: JsonRpcRequest, handshake: Record<string, unknown>): JsonRpcResponse {
		const capabilities = Client2026Tasks.offered((handshake.capabilities ?? {}) as Record<string, unknown>);
		const result: Record<string, unknown> = { supportedVersions: [REVISION_2026], capabilities };
		if (typeof handshake.instructions === 'string') result.instructions = handshake.instructions;
		return this.stamped(request, { jsonrpc: '2.0', id: request.id, result }, handshake);
	}

	/** A result as 2026-07-28 has it: `resultType`, cache fields where required, the server's identity in `_meta`. */
	private stamped(request: JsonRpcRequest, response: JsonRpcResponse, handshake: Record<string, unknown>): JsonRpcResponse {
		if (!response.result) return response;
		const result: Record<string, unknown> = { ...response.result };
		result.resultType ??= 'complete';
		if (CACHEABLE.has(request.method)) {
			result.ttlMs ??= 0;
			result.cacheScope ??= 'private';
		}
		if (handshake.serverInfo) result._meta = { ...(result._meta as Record<string, unknown> | undefined), [SERVER_INFO_KEY]: handshake.serverInfo };
		return { ...response, result };
	}
}

/** The revision's claims of a request's `_meta`, for the proxy's own `server/discover`. */
function claimsOf(meta: Record<string, unknown>): Record<string, unknown> {
	const claims: Record<string, unknown> = { [PROTOCOL_VERSION_KEY]: meta[PROTOCOL_VERSION_KEY], [CLIENT_CAPABILITIES_KEY]: meta[CLIENT_CAPABILITIES_KEY] };
	if (meta[CLIENT_INFO_KEY] !== undefined) claims[CLIENT_INFO_KEY] = meta[CLIENT_INFO_KEY];
	return claims;
}

/** A 2026-07-28 request's params for a 2025 server: without the revision's claims in `_meta`. */
function withoutClaims(all: Record<string, unknown>, meta: Record<string, unknown>): Record<string, unknown> {
	const { [PROTOCOL_VERSION_KEY]: _version, [CLIENT_CAPABILITIES_KEY]: _capabilities, [CLIENT_INFO_KEY]: _info, ...rest } = meta;
	const { _meta: _claims, ...params } = all;
	if (Object.keys(rest).length > 0) params._meta = rest;
	return params;
}
