/**
 * HTTP servers behind the proxy: an sse or streamable-http server in a container (through
 * its port published on loopback) or a remote URL. Each client session gets its own
 * upstream MCP session, so the server sees every client as it would without the proxy,
 * while the proxy's middleware sees every message whatever the transport on either side.
 * The client's own headers (its token above all) are never passed upstream; configured
 * `header_forward` headers are.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { metadataGuardedLookup } from '../../net/addresses.js';
import { deniedUpstream, isSignInState } from '../backend.js';
import { ErrorCode, errorResponse, isResponse, parseMessage, } from '../jsonrpc.js';
import { outboundContext } from '../outbound.js';
import { ModernDialect } from './modern.js';
import { UpstreamAuthError } from '../upstreamAuth/errors.js';
const MAX_BODY_BYTES = 16 * 1024 * 1024;
const PROBE_INTERVAL_MS = 250;
const RECONNECT_DELAY_MS = 1_000;
/** The longest `retry:` the proxy honours before resuming an upstream stream. */
const MAX_RETRY_MS = 30_000;
export class HttpBackend {
    options;
    state = 'connecting';
    detail = 'locating the server';
    onStateChange;
    current;
    locating;
    httpAgent;
    httpsAgent;
    closed = false;
    constructor(options) {
        this.options = options;
        const agentOptions = { keepAlive: true, maxSockets: 256, ...(options.guardAddresses ? { lookup: metadataGuardedLookup } : {}) };
        this.httpAgent = new HttpAgent(agentOptions);
        this.httpsAgent = new HttpsAgent(agentOptions);
        if (options.auth)
            options.auth.onStateChange = () => this.setState(this.connection, this.connectionDetail);
    }
    /** The state of the connection alone; `state` is the authenticator's while it cannot authenticate. */
    connection = 'connecting';
    connectionDetail = 'locating the server';
    setState(connection, connectionDetail) {
        this.connection = connection;
        this.connectionDetail = connectionDetail;
        const auth = this.options.auth;
        const [state, detail] = auth && isSignInState(auth.state) ? [auth.state, auth.detail] : [connection, connectionDetail];
        if (this.state === state && this.detail === detail)
            return;
        this.state = state;
        this.detail = detail;
        this.onStateChange?.(state, detail);
    }
    async start() {
        for (;;) {
            try {
                const url = await this.url();
                if (this.options.probe)
                    await probe(url);
                this.setState('connected');
                return;
            }
            catch (error) {
                if (this.closed)
                    return;
                this.locating = undefined;
                this.setState('connecting', error.message);
                await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
            }
        }
    }
    url() {
        if (this.current)
            return Promise.resolve(this.current);
        return (this.locating ??= this.options.locate().then((url) => (this.current = url)));
    }
    /** A request failed to connect: find the server again next time. */
    failed(error) {
        this.current = undefined;
        this.locating = undefined;
        this.setState('disconnected', error.message);
    }
    succeeded() {
        if (this.connection !== 'connected')
            this.setState('connected');
    }
    /**
     * Sends one HTTP request upstream with the configured headers and, for a server behind OAuth,
     * the proxy's access token. A 401 or 403 the authenticator can cure (a refreshed token) is
     * retried once; one it cannot is an UpstreamAuthError (the workload needs a sign-in).
     */
    async send(method, url, headers, body, signal) {
        const auth = this.options.auth;
        if (!auth)
            return this.transmit(method, url, headers, body, signal);
        for (let attempt = 0;; attempt++) {
            const authorization = await auth.authorization();
            const response = await this.transmit(method, url, authorization ? { ...headers, Authorization: authorization } : headers, body, signal);
            const status = response.statusCode;
            if (status !== 401 && status !== 403)
                return response;
            const challenge = response.headers['www-authenticate'];
            const retry = await auth.denied(status, Array.isArray(challenge) ? challenge.join(', ') : challenge, authorization);
            if (retry && attempt === 0) {
                response.resume();
                continue;
            }
            if (isSignInState(auth.state)) {
                response.resume();
                throw new UpstreamAuthError(auth.refusal());
            }
            return response;
        }
    }
    /**
     * Whether the server wants a token before anything else: its answer to a plain GET without
     * credentials (a 401 with a Bearer challenge does). Undefined when it cannot be asked.
     */
    async challenge() {
        try {
            const response = await this.transmit('GET', await this.url(), { Accept: 'text/event-stream' }, undefined, AbortSignal.timeout(5_000));
            response.destroy();
            const header = response.headers['www-authenticate'];
            return { status: response.statusCode ?? 0, challenge: Array.isArray(header) ? header.join(', ') : header };
        }
        catch {
            return undefined;
        }
    }
    /** One HTTP request. A kept-alive connection the server closed just as it was reused fails before anything reached the server: retried once. */
    async transmit(method, url, headers, body, signal, retried = false) {
        const https = url.protocol === 'https:';
        return new Promise((resolve, reject) => {
            const request = (https ? httpsRequest : httpRequest)(url, {
                method,
                agent: https ? this.httpsAgent : this.httpAgent,
                headers: { ...this.options.headers, ...outboundContext.headers?.(signal), ...headers, ...(body === undefined ? {} : { 'Content-Length': Buffer.byteLength(body) }) },
                signal,
            });
            request.once('response', resolve);
            request.once('error', (error) => {
                if (!retried && request.reusedSocket && error.code === 'ECONNRESET' && !signal.aborted) {
                    resolve(this.transmit(method, url, headers, body, signal, true));
                }
                else {
                    reject(error);
                }
            });
            request.end(body);
        });
    }
    open(sink, options = {}) {
        return this.options.transport === 'sse' ? new SseUpstreamSession(this, sink) : new StreamableUpstreamSession(this, sink, options);
    }
    async close() {
        this.closed = true;
        this.options.auth?.close();
        this.httpAgent.destroy();
        this.httpsAgent.destroy();
    }
}
/**
 * Ready when the server answers HTTP at all: a published port accepts connections before the
 * server in the container listens (Docker's port proxy), so a TCP connect proves nothing.
 */
function probe(url) {
    return new Promise((resolve, reject) => {
        const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: 'GET', headers: { Accept: 'text/event-stream' }, timeout: 2_000 }, (response) => {
            response.destroy();
            resolve();
        });
        request.once('timeout', () => request.destroy(new Error(`no answer from ${url.host}`)));
        request.once('error', reject);
        request.end();
    });
}
export async function readText(response) {
    const chunks = [];
    let size = 0;
    for await (const chunk of response) {
        size += chunk.length;
        if (size > MAX_BODY_BYTES)
            throw new Error('the server sent a body over 16 MiB');
        chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
}
/** Parses an event stream (`event:`/`data:`/`id:`/`retry:` lines, blank-line separated; comments skipped). */
export async function* sseEvents(response) {
    response.setEncoding('utf8');
    let buffered = '';
    let event = '';
    let data = [];
    let id;
    let retry;
    for await (const chunk of response) {
        buffered += chunk;
        let newline = buffered.indexOf('\n');
        while (newline >= 0) {
            const line = buffered.slice(0, newline).replace(/\r$/, '');
            buffered = buffered.slice(newline + 1);
            newline = buffered.indexOf('\n');
            if (line === '') {
                if (data.length || id !== undefined || retry !== undefined)
                    yield { event: event || 'message', data: data.join('\n'), id, retry };
                event = '';
                data = [];
                id = undefined;
                retry = undefined;
            }
            else if (line.startsWith('data:'))
                data.push(line.slice(line[5] === ' ' ? 6 : 5));
            else if (line.startsWith('event:'))
                event = line.slice(6).trim();
            else if (line.startsWith('id:'))
                id = line.slice(line[3] === ' ' ? 4 : 3);
            else if (line.startsWith('retry:') && /^\d+$/.test(line.slice(6).trim()))
                retry = Number(line.slice(6).trim());
        }
    }
}
/** The messages of an event stream. */
async function* messagesOf(response) {
    for await (const event of sseEvents(response)) {
        const received = parseMessage(event.data);
        if (received)
            yield received;
    }
}
/** What tells the server a call was given up (on a timeout, or the client session ended). */
function cancellationOf(message, signal) {
    return { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: message.id, reason: String(signal.reason ?? 'cancelled') } };
}
function connectionError(backend, id, error) {
    if (error instanceof UpstreamAuthError) {
        return errorResponse(id, ErrorCode.Unauthenticated, error.message, error.retryAfterSeconds === undefined ? undefined : { retryAfterSeconds: error.retryAfterSeconds });
    }
    backend.failed(error);
    return errorResponse(id, ErrorCode.ConnectionClosed, `cannot reach the MCP server: ${error.message}`);
}
function isUpstreamSnapshot(value) {
    return typeof value?.sessionId === 'string';
}
class StreamableUpstreamSession {
    backend;
    sink;
    options;
    sessionId;
    protocolVersion;
    controller = new AbortController();
    /** Set when the server speaks only MCP 2026-07-28. */
    dialect;
    clientStreaming = false;
    /** Follows the server's stream while this replica's client streams, when the session is replicated. */
    listening;
    constructor(backend, sink, options = {}) {
        this.backend = backend;
        this.sink = sink;
        this.options = options;
        if (isUpstreamSnapshot(options.adopt)) {
            this.sessionId = options.adopt.sessionId;
            this.protocolVersion = options.adopt.protocolVersion;
        }
    }
    snapshot() {
        // A 2026-07-28 server has no session to hand over: a replica's own discovery is as good.
        return this.sessionId && !this.dialect ? { sessionId: this.sessionId, protocolVersion: this.protocolVersion } : undefined;
    }
    get speaksModern() {
        return this.dialect !== undefined;
    }
    headers(kind) {
        const headers = {};
        if (kind === 'post') {
            headers['Content-Type'] = 'application/json';
            headers.Accept = 'application/json, text/event-stream';
        }
        else if (kind === 'get') {
            headers.Accept = 'text/event-stream';
        }
        if (this.sessionId)
            headers['Mcp-Session-Id'] = this.sessionId;
        if (this.protocolVersion)
            headers['Mcp-Protocol-Version'] = this.protocolVersion;
        return headers;
    }
    async request(message, signal) {
        if (this.dialect)
            return this.dialect.request(message, signal);
        const cancel = () => void this.post(cancellationOf(message, signal));
        signal.addEventListener('abort', cancel, { once: true });
        try {
            const answer = await this.exchange(message, signal);
            if (message.method === 'initialize' && answer.error && !signal.aborted)
                return (await this.discover(message, signal)) ?? answer;
            return answer;
        }
        finally {
            signal.removeEventListener('abort', cancel);
        }
    }
    /** The server may speak only MCP 2026-07-28: then this client's session is carried in that revision. */
    async discover(initialize, signal) {
        const discovered = await ModernDialect.discover(this, this.sink, initialize, signal);
        this.dialect = discovered?.dialect;
        this.dialect?.streaming(this.clientStreaming);
        return discovered?.answer;
    }
    /** A request answered by a stream of messages (`subscriptions/listen`), or the server's refusal of it. */
    async open(message, signal, headers) {
        let response;
        try {
            response = await this.backend.send('POST', await this.backend.url(), { ...this.headers('post'), ...headers }, JSON.stringify(message), signal);
        }
        catch (error) {
            return signal.aborted ? errorResponse(message.id, ErrorCode.RequestTimeout, 'request cancelled') : connectionError(this.backend, message.id, error);
        }
        if (!String(response.headers['content-type'] ?? '').includes('text/event-stream')) {
            const text = await readText(response).catch(() => '');
            const received = parseMessage(text);
            return received && isResponse(received) && received.error ? received : httpError(message.id, response, text);
        }
        return messagesOf(response);
    }
    async exchange(message, signal, extraHeaders) {
        let response;
        try {
            const headers = extraHeaders ? { ...this.headers('post'), ...extraHeaders } : this.headers('post');
            response = await this.backend.send('POST', await this.backend.url(), headers, JSON.stringify(message), signal);
        }
        catch (error) {
            if (signal.aborted)
                return errorResponse(message.id, ErrorCode.RequestTimeout, 'request cancelled');
            return connectionError(this.backend, message.id, error);
        }
        this.backend.succeeded();
        try {
            const answer = await this.answerOf(message, response, signal);
            if (message.method === 'initialize' && answer.result) {
                this.sessionId = response.headers['mcp-session-id'] ?? this.sessionId;
                this.protocolVersion = answer.result.protocolVersion;
            }
            return answer;
        }
        catch (error) {
            if (signal.aborted)
                return errorResponse(message.id, ErrorCode.RequestTimeout, 'request cancelled');
            return errorResponse(message.id, ErrorCode.InternalError, `the MCP server's answer could not be read: ${error.message}`);
        }
    }
    async answerOf(message, response, signal) {
        const status = response.statusCode ?? 0;
        const type = String(response.headers['content-type'] ?? '');
        if (status === 404 && this.sessionId) {
            response.resume();
            this.sink.ended('the MCP server ended the session');
            return errorResponse(message.id, ErrorCode.ConnectionClosed, 'the MCP server ended the session');
        }
        if (type.includes('text/event-stream') && status < 300) {
            // A server may close the stream before answering once it sent an event id (SSE polling,
            // 2025-11-25): the answer comes on a GET that resumes after that id, when the server says.
            let lastEventId;
            let retryMs = 0;
            let stream = response;
            while (stream) {
                for await (const event of sseEvents(stream)) {
                    if (event.id !== undefined)
                        lastEventId = event.id;
                    if (event.retry !== undefined)
                        retryMs = Math.min(event.retry, MAX_RETRY_MS);
                    const received = parseMessage(event.data);
                    if (!received)
                        continue;
                    if (isResponse(received) && received.id === message.id) {
                        stream.destroy();
                        return received;
                    }
                    this.sink.deliver(received, message.id);
                }
                if (lastEventId === undefined || signal.aborted)
                    break;
                await new Promise((resolve) => setTimeout(resolve, retryMs));
                stream = await this.resumeStream(lastEventId, signal);
            }
            return errorResponse(message.id, ErrorCode.InternalError, 'the MCP server closed the stream without answering');
        }
        const text = await readText(response);
        const received = parseMessage(text);
        if (received && isResponse(received) && status !== 401 && status !== 403)
            return { ...received, id: message.id };
        return httpError(message.id, response, text);
    }
    /** A GET resuming a stream after `lastEventId`; undefined when the server will not. */
    async resumeStream(lastEventId, signal) {
        const response = await this.backend.send('GET', await this.backend.url(), { ...this.headers('get'), 'Last-Event-ID': lastEventId }, undefined, signal);
        if (response.statusCode === 200 && String(response.headers['content-type'] ?? '').includes('text/event-stream'))
            return response;
        response.resume();
        return undefined;
    }
    send(message) {
        if (this.dialect) {
            this.dialect.send(message);
            return Promise.resolve();
        }
        return this.post(message);
    }
    async post(message) {
        try {
            const response = await this.backend.send('POST', await this.backend.url(), this.headers('post'), JSON.stringify(message), this.controller.signal);
            response.resume();
            if ('method' in message && message.method === 'notifications/initialized' && !this.options.replicated)
                void this.listen(this.controller.signal);
        }
        catch (error) {
            if (!this.controller.signal.aborted)
                this.backend.options.log.warn(`could not relay ${'method' in message ? message.method : 'a response'}: ${error.message}`);
        }
    }
    /** The GET stream of server-initiated messages, reopened until `signal` aborts. */
    async listen(signal) {
        while (!signal.aborted) {
            try {
                const response = await this.backend.send('GET', await this.backend.url(), this.headers('get'), undefined, signal);
                if (response.statusCode !== 200) {
                    response.resume();
                    return; // 405: the server offers no such stream
                }
                for await (const event of sseEvents(response)) {
                    const received = parseMessage(event.data);
                    if (received)
                        this.sink.deliver(received);
                }
            }
            catch {
                if (signal.aborted)
                    return;
            }
            await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
        }
    }
    streaming(open) {
        this.clientStreaming = open;
        this.dialect?.streaming(open);
        if (!this.options.replicated || this.dialect || !this.sessionId)
            return;
        // One replica at a time holds the client's stream, and so the server's.
        this.listening?.abort();
        this.listening = undefined;
        if (open) {
            this.listening = new AbortController();
            void this.listen(AbortSignal.any([this.controller.signal, this.listening.signal]));
        }
    }
    release() {
        this.controller.abort();
        this.dialect?.close();
    }
    close() {
        this.controller.abort();
        this.dialect?.close();
        if (!this.sessionId)
            return;
        const headers = this.headers('delete');
        void this.backend
            .url()
            .then((url) => this.backend.send('DELETE', url, headers, undefined, AbortSignal.timeout(5_000)))
            .then((response) => response.resume())
            .catch(() => undefined);
    }
}
/** An upstream legacy SSE session: one GET /sse stream, messages POSTed to its endpoint. */
class SseUpstreamSession {
    backend;
    sink;
    controller = new AbortController();
    endpoint;
    pending = new Map();
    constructor(backend, sink) {
        this.backend = backend;
        this.sink = sink;
        this.endpoint = this.connect();
        this.endpoint.catch(() => undefined);
    }
    connect() {
        return new Promise((resolve, reject) => {
            void (async () => {
                let announced = false;
                try {
                    const url = await this.backend.url();
                    const response = await this.backend.send('GET', url, { Accept: 'text/event-stream' }, undefined, this.controller.signal);
                    if (response.statusCode !== 200) {
                        response.resume();
                        throw new Error(`the MCP server answered HTTP ${response.statusCode} to GET ${url.pathname}`);
                    }
                    this.backend.succeeded();
                    for await (const event of sseEvents(response)) {
                        if (event.event === 'endpoint') {
                            const endpoint = new URL(event.data.trim(), url);
                            if (endpoint.origin !== url.origin)
                                throw new Error(`the MCP server sent an endpoint on another origin (${endpoint.origin})`);
                            announced = true;
                            resolve(endpoint);
                            continue;
                        }
                        const received = parseMessage(event.data);
                        if (!received)
                            continue;
                        const id = isResponse(received) ? received.id : null;
                        const waiting = id === null ? undefined : this.pending.get(id);
                        if (waiting) {
                            this.pending.delete(id);
                            waiting(received);
                        }
                        else {
                            this.sink.deliver(received);
                        }
                    }
                    throw new Error('the MCP server closed its event stream');
                }
                catch (error) {
                    if (!announced)
                        reject(error);
                    if (this.controller.signal.aborted)
                        return;
                    if (!announced && !(error instanceof UpstreamAuthError))
                        this.backend.failed(error);
                    for (const [id, waiting] of this.pending)
                        waiting(errorResponse(id, ErrorCode.ConnectionClosed, error.message));
                    this.pending.clear();
                    this.sink.ended(error.message);
                }
            })();
        });
    }
    async request(message, signal) {
        let endpoint;
        try {
            endpoint = await this.endpoint;
        }
        catch (error) {
            return connectionError(this.backend, message.id, error);
        }
        const answer = new Promise((resolve) => this.pending.set(message.id, resolve));
        const onAbort = () => {
            const waiting = this.pending.get(message.id);
            this.pending.delete(message.id);
            waiting?.(errorResponse(message.id, ErrorCode.RequestTimeout, 'request cancelled'));
            void this.send(cancellationOf(message, signal));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        try {
            const response = await this.backend.send('POST', endpoint, { 'Content-Type': 'application/json' }, JSON.stringify(message), signal);
            const status = response.statusCode ?? 0;
            const text = await readText(response);
            if (status >= 300) {
                this.pending.delete(message.id);
                return httpError(message.id, response, text);
            }
            return await answer;
        }
        catch (error) {
            this.pending.delete(message.id);
            if (signal.aborted)
                return errorResponse(message.id, ErrorCode.RequestTimeout, 'request cancelled');
            return connectionError(this.backend, message.id, error);
        }
        finally {
            signal.removeEventListener('abort', onAbort);
        }
    }
    send(message) {
        return this.endpoint
            .then((endpoint) => this.backend.send('POST', endpoint, { 'Content-Type': 'application/json' }, JSON.stringify(message), this.controller.signal))
            .then((response) => void response.resume())
            .catch((error) => {
            if (!this.controller.signal.aborted)
                this.backend.options.log.warn(`could not relay a message: ${error.message}`);
        });
    }
    close() {
        this.controller.abort();
    }
}
/** The answer to a request the server refused with an HTTP error; a 401 or 403 is marked as such. */
function httpError(id, response, text) {
    const status = response.statusCode ?? 0;
    const answer = errorResponse(id, ErrorCode.InternalError, `the MCP server answered HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`);
    if (status !== 401 && status !== 403)
        return answer;
    const challenge = response.headers['www-authenticate'];
    return deniedUpstream(answer, { status, challenge: Array.isArray(challenge) ? challenge.join(', ') : challenge });
}
//# sourceMappingURL=http.js.map