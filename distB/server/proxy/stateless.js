/**
 * MCP 2026-07-28 clients in front of servers of earlier revisions. The 2026-07-28 revision is
 * stateless: no `initialize`, no `Mcp-Session-Id`; every request carries its revision, the
 * client's capabilities and (optionally) its identity in `_meta`, `server/discover` describes
 * the server, and every result says `resultType`.
 *
 * The proxy keeps, per caller and capability set, one legacy session it opened itself with a
 * 2025-11-25 `initialize` (through the MCP middleware chain, like any client's) and answers
 * `server/discover` from that handshake. When the server turned out to speak 2026-07-28 itself,
 * each request reaches it as the client sent it (its claims, its input rounds, its result);
 * otherwise it goes without the 2026 `_meta` keys and its result is stamped. Either way the
 * server's messages about the request (progress, logs) stream into its reply.
 *
 * A legacy server asks its client things by sending it requests (sampling, elicitation, roots);
 * 2026-07-28 asks by answering with an input-required result instead. For a client that
 * declared those capabilities, each call gets a legacy session of its own (pooled), so that
 * every request the server sends on it is about that call; the call is then held, the
 * server's requests go to the client as `inputRequests` with a `requestState` naming the held
 * call, and the client's retry with `inputResponses` answers them and resumes the call.
 * Tasks go their own way (statelessTasks.ts).
 */
import { randomUUID } from 'node:crypto';
import { canonicalJson, decodeHeaderValue, ErrorCode, errorResponse, isRequest, mcpNameOf, MODERN_META, MODERN_REVISION, SUPPORTED_PROTOCOL_VERSIONS, } from './jsonrpc.js';
import { StatelessTasks } from './statelessTasks.js';
const { protocolVersion: PROTOCOL_VERSION_KEY, clientCapabilities: CLIENT_CAPABILITIES_KEY, clientInfo: CLIENT_INFO_KEY, serverInfo: SERVER_INFO_KEY } = MODERN_META;
/** Results a 2026-07-28 client may cache: they carry `ttlMs` and `cacheScope`. */
const CACHEABLE = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read', 'server/discover']);
/** Capabilities that let a legacy server send requests to the client, answered in input rounds. */
const SERVER_REQUEST_CAPABILITIES = ['sampling', 'elicitation', 'roots'];
/** How long a held call waits for its client to come back with the input asked for. */
const HELD_CALL_TTL_MS = 10 * 60_000;
const REQUEST_STATE_PREFIX = 'hangar-held:';
/** Where a 2026-07-28 server names the `subscriptions/listen` request a notification belongs to. */
const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';
/** The 2026-07-28 revision a request claims in its `_meta`, if it claims one. */
export function isModernRequest(request) {
    const meta = request.params?._meta;
    return meta?.[PROTOCOL_VERSION_KEY] === MODERN_REVISION;
}
/**
 * Why a 2026-07-28 request's standard headers disagree with its body, which the revision
 * requires a server to refuse (HTTP 400, `HeaderMismatch`); undefined when they agree.
 */
export function headerMismatch(headers, request) {
    const version = headers['mcp-protocol-version'];
    if (version === undefined)
        return 'the MCP-Protocol-Version header is required';
    if (typeof version !== 'string' || version.trim() !== MODERN_REVISION)
        return `the MCP-Protocol-Version header does not match the request's revision ${MODERN_REVISION}`;
    const method = headers['mcp-method'];
    if (typeof method !== 'string')
        return 'the Mcp-Method header is required';
    if (method.trim() !== request.method)
        return `the Mcp-Method header does not match the method ${request.method}`;
    const name = mcpNameOf(request.method, request.params);
    if (name === undefined)
        return undefined;
    const header = headers['mcp-name'];
    if (typeof header !== 'string')
        return `the Mcp-Name header is required for ${request.method}`;
    if (decodeHeaderValue(header) !== name)
        return `the Mcp-Name header does not match the request's ${request.method === 'resources/read' ? 'uri' : 'name'}`;
    return undefined;
}
/**
 * A call on a legacy session of its own, whose server may ask the client things: the server's
 * requests about the call are collected here (the session routes the call's messages here)
 * until the proxy hands them to the client; its other messages go to the current HTTP reply.
 */
class HeldCall {
    legacy;
    owner;
    done;
    open = true;
    /** Input key → the id of the server request it answers. */
    asked = new Map();
    outcome;
    expiry;
    reply;
    queue = [];
    wake;
    constructor(legacy, owner, done) {
        this.legacy = legacy;
        this.owner = owner;
        this.done = done;
    }
    send(message) {
        if (isRequest(message)) {
            this.queue.push(message);
            this.wake?.();
        }
        else if (this.reply?.open) {
            this.reply.send(message);
        }
    }
    cancel() {
        this.wake?.();
    }
    /** The call's response, or the requests the server has sent about it, whichever comes first. */
    async next(reply) {
        this.reply = reply;
        if (!this.queue.length) {
            const asked = new Promise((resolve) => (this.wake = resolve));
            const response = await Promise.race([this.outcome, asked]);
            this.wake = undefined;
            if (response)
                return response;
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
class RenamingReply {
    reply;
    forwarded;
    original;
    constructor(reply, forwarded, original) {
        this.reply = reply;
        this.forwarded = forwarded;
        this.original = original;
    }
    get open() {
        return this.reply.open;
    }
    send(message) {
        this.reply.send(withSubscriptionId(message, this.forwarded, this.original));
    }
    cancel() {
        this.reply.cancel();
    }
}
/** `message` with the subscription id `from` in its `_meta` (params or result) replaced by `to`. */
function withSubscriptionId(message, from, to) {
    const holder = 'result' in message ? 'result' : 'params';
    const body = message[holder];
    const meta = body?._meta;
    if (meta?.[SUBSCRIPTION_ID_KEY] !== from)
        return message;
    return { ...message, [holder]: { ...body, _meta: { ...meta, [SUBSCRIPTION_ID_KEY]: to } } };
}
export class StatelessBridge {
    sessions;
    handle;
    notify;
    /** Legacy sessions by caller and declared capabilities. */
    legacy = new Map();
    /** Idle sessions of their own for calls that may be asked things, by the same key. */
    idle = new Map();
    /** Calls waiting for their client's input, by request state. */
    held = new Map();
    tasks;
    nextId = 1;
    constructor(sessions, handle, notify) {
        this.sessions = sessions;
        this.handle = handle;
        this.notify = notify;
        this.tasks = new StatelessTasks(handle, notify);
    }
    /** Answers one 2026-07-28 request; the server's messages about it go to `reply` first. */
    async answer(exchange, request, reply) {
        const meta = (request.params?._meta ?? {});
        const capabilities = meta[CLIENT_CAPABILITIES_KEY];
        if (typeof capabilities !== 'object' || capabilities === null) {
            return errorResponse(request.id, ErrorCode.InvalidParams, `Invalid params: _meta["${CLIENT_CAPABILITIES_KEY}"] is required on protocol revision ${MODERN_REVISION}`);
        }
        const declared = capabilities;
        const owner = exchange.identity?.subject ?? '';
        const key = `${owner}\n${canonicalJson(declared)}`;
        const legacy = await this.sessionFor(key, exchange, declared, meta[CLIENT_INFO_KEY]);
        if (!('session' in legacy))
            return { ...legacy, id: request.id };
        if (request.method === 'server/discover')
            return this.discovered(request, legacy.handshake);
        if (legacy.session.backend.speaksModern)
            return this.forward(exchange, request, request.params, legacy, reply);
        const params = withoutClaims(request.params ?? {}, meta);
        const { requestState, inputResponses, ...call } = params;
        if (typeof requestState === 'string' && requestState.startsWith(REQUEST_STATE_PREFIX))
            return this.resume(exchange, request, requestState, inputResponses, owner, reply);
        const tasked = await this.tasks.answer({ exchange, request, params, session: legacy.session, handshake: legacy.handshake, owner, declared });
        if (tasked)
            return this.stamped(request, tasked, legacy.handshake);
        if (!SERVER_REQUEST_CAPABILITIES.some((name) => declared[name] !== undefined))
            return this.forward(exchange, request, params, legacy, reply);
        const own = await this.checkOut(key, exchange, declared, meta[CLIENT_INFO_KEY]);
        if (!('session' in own))
            return { ...own, id: request.id };
        return this.hold(exchange, request, call, own, owner, key, reply);
    }
    /** Forwards a request on a shared legacy session; the server's messages about it go to `reply`. */
    async forward(exchange, request, params, legacy, reply) {
        // Another stateless caller may use the same id on the same legacy session: forwarded under one of the proxy's.
        const id = `hangar-${this.nextId++}`;
        const { session } = legacy;
        // Without a session there is nothing to resume: a client that hangs up has given the call up
        // (a `subscriptions/listen` ends that way).
        const hungUp = new AbortController();
        const onClose = () => exchange.response.writableFinished || hungUp.abort('the client hung up');
        exchange.response.once('close', onClose);
        session.track(id, session.backend.speaksModern ? new RenamingReply(reply, id, request.id) : reply);
        try {
            const signal = AbortSignal.any([session.signal, hungUp.signal]);
            const response = await this.handle({ request: { jsonrpc: '2.0', id, method: request.method, params }, session, signal, exchange });
            return this.stamped(request, withSubscriptionId({ ...response, id: request.id }, id, request.id), legacy.handshake);
        }
        finally {
            exchange.response.off('close', onClose);
            session.untrack(id);
        }
    }
    /** Starts a call that the server may ask the client about, on a session of its own. */
    hold(exchange, request, params, own, owner, key, reply) {
        const id = `hangar-${this.nextId++}`;
        const call = new HeldCall(own, owner, () => {
            own.session.untrack(id);
            if (own.session.signal.aborted)
                return;
            const idle = this.idle.get(key) ?? [];
            idle.push(own);
            this.idle.set(key, idle);
        });
        own.session.track(id, call);
        call.outcome = this.handle({ request: { jsonrpc: '2.0', id, method: request.method, params }, session: own.session, signal: own.session.signal, exchange });
        return this.settle(request, call, reply);
    }
    /** A client's retry with the input its held call asked for: the answers go to the server, and the call goes on. */
    async resume(exchange, request, requestState, inputResponses, owner, reply) {
        const call = this.held.get(requestState);
        if (!call || call.owner !== owner)
            return errorResponse(request.id, ErrorCode.InvalidParams, 'Invalid params: requestState names no call waiting for input (it may have expired)');
        this.held.delete(requestState);
        clearTimeout(call.expiry);
        const responses = typeof inputResponses === 'object' && inputResponses !== null ? inputResponses : {};
        for (const [key, result] of Object.entries(responses)) {
            const serverRequest = call.asked.get(key);
            if (serverRequest === undefined)
                continue;
            call.asked.delete(key);
            const refused = await this.notify({ message: { jsonrpc: '2.0', id: serverRequest, result: result }, session: call.legacy.session, exchange });
            if (refused) {
                // The call cannot go on without that answer: it is given up, with its session.
                call.legacy.session.close();
                return { ...refused, id: request.id };
            }
        }
        return this.settle(request, call, reply);
    }
    /** The held call's response, or an input-required result with what the server asked, held again. */
    async settle(request, call, reply) {
        const next = await call.next(reply);
        if (!Array.isArray(next)) {
            call.done();
            return this.stamped(request, { ...next, id: request.id }, call.legacy.handshake);
        }
        const inputRequests = {};
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
            call.legacy.session.close();
        }, HELD_CALL_TTL_MS).unref();
        return { jsonrpc: '2.0', id: request.id, result: { resultType: 'input_required', inputRequests, requestState } };
    }
    /** An idle session of its own for a call, or a new one. */
    checkOut(key, exchange, capabilities, clientInfo) {
        const idle = this.idle.get(key);
        while (idle?.length) {
            const legacy = idle.pop();
            if (!legacy.session.signal.aborted)
                return Promise.resolve(legacy);
        }
        return this.open(exchange, capabilities, clientInfo);
    }
    sessionFor(key, exchange, capabilities, clientInfo) {
        let opened = this.legacy.get(key);
        if (!opened) {
            opened = this.open(exchange, capabilities, clientInfo);
            this.legacy.set(key, opened);
            // A failed handshake, or a session that ended, is opened again next time.
            void opened.then((result) => {
                if (!('session' in result))
                    this.legacy.delete(key);
                else
                    result.session.signal.addEventListener('abort', () => this.legacy.delete(key), { once: true });
            });
        }
        return opened;
    }
    async open(exchange, capabilities, clientInfo) {
        const session = this.sessions.create('streamable', exchange.identity?.subject);
        const initialize = {
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
        return { session, handshake: answer.result };
    }
    discovered(request, handshake) {
        const capabilities = StatelessTasks.offered((handshake.capabilities ?? {}));
        const result = { supportedVersions: [MODERN_REVISION], capabilities };
        if (typeof handshake.instructions === 'string')
            result.instructions = handshake.instructions;
        return this.stamped(request, { jsonrpc: '2.0', id: request.id, result }, handshake);
    }
    /** A result as 2026-07-28 has it: `resultType`, cache fields where required, the server's identity in `_meta`. */
    stamped(request, response, handshake) {
        if (!response.result)
            return response;
        const result = { ...response.result };
        result.resultType ??= 'complete';
        if (CACHEABLE.has(request.method)) {
            result.ttlMs ??= 0;
            result.cacheScope ??= 'private';
        }
        if (handshake.serverInfo)
            result._meta = { ...result._meta, [SERVER_INFO_KEY]: handshake.serverInfo };
        return { ...response, result };
    }
}
/** A 2026-07-28 request's params for a legacy server: without the revision's claims in `_meta`. */
function withoutClaims(all, meta) {
    const { [PROTOCOL_VERSION_KEY]: _version, [CLIENT_CAPABILITIES_KEY]: _capabilities, [CLIENT_INFO_KEY]: _info, ...rest } = meta;
    const { _meta: _claims, ...params } = all;
    if (Object.keys(rest).length > 0)
        params._meta = rest;
    return params;
}
//# sourceMappingURL=stateless.js.map