import { forwardNotice, refusalOf } from './chain.js';
import { asMessage, ErrorCode, errorResponse, isRequest, MODERN_REVISION, SUPPORTED_PROTOCOL_VERSIONS, } from './jsonrpc.js';
import { EventStream, ReplyStream } from './sse.js';
import { headerMismatch, isModernRequest, StatelessBridge } from './stateless.js';
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
export class HttpError extends Error {
    status;
    code;
    constructor(status, message, code = ErrorCode.InvalidRequest) {
        super(message);
        this.status = status;
        this.code = code;
    }
}
/** Reads a JSON body (at most 4 MiB). Events rather than async iteration: this is the hot path. */
export function readJson(request) {
    return new Promise((resolve, reject) => {
        const chunks = [];
        let size = 0;
        request.on('data', (chunk) => {
            size += chunk.length;
            if (size > MAX_MESSAGE_BYTES) {
                request.removeAllListeners('data');
                request.resume();
                reject(new HttpError(413, 'message over 4 MiB'));
            }
            else {
                chunks.push(chunk);
            }
        });
        request.once('error', reject);
        request.once('end', () => {
            try {
                resolve(JSON.parse(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8')));
            }
            catch {
                reject(new HttpError(400, 'Parse error: the body is not JSON', ErrorCode.ParseError));
            }
        });
    });
}
/** Writes a JSON-RPC error without an id, as the transport answers malformed requests. */
export function sendError(response, error, headers = {}) {
    if (response.headersSent)
        return;
    const body = JSON.stringify(errorResponse(null, error.code, error.message));
    response.writeHead(error.status, { ...headers, 'Content-Type': 'application/json' }).end(body);
}
/** A message the proxy refused, with its HTTP status. */
export function sendRefusal(response, answer, status, headers = {}) {
    const body = JSON.stringify(answer);
    response.writeHead(status, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
}
export class StreamableHttpFront {
    sessions;
    handle;
    notify;
    stateless;
    constructor(sessions, handle, 
    /** Notifications and the client's responses go through the notice middleware. */
    notify = forwardNotice) {
        this.sessions = sessions;
        this.handle = handle;
        this.notify = notify;
        this.stateless = new StatelessBridge(sessions, handle, notify);
    }
    async serve(exchange) {
        try {
            const version = exchange.request.headers['mcp-protocol-version'];
            if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version) && version !== MODERN_REVISION) {
                throw new HttpError(400, `Bad Request: unsupported MCP-Protocol-Version ${version} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
            }
            switch (exchange.request.method) {
                case 'POST':
                    return await this.post(exchange);
                case 'GET':
                    return await this.get(exchange);
                case 'DELETE':
                    return await this.delete(exchange);
                default:
                    exchange.response.setHeader('Allow', 'GET, POST, DELETE');
                    throw new HttpError(405, 'Method not allowed');
            }
        }
        catch (error) {
            if (error instanceof HttpError)
                sendError(exchange.response, error);
            else
                throw error;
        }
    }
    /** The request's session: this replica's own, else one another replica saved. */
    async session(exchange) {
        const id = exchange.request.headers['mcp-session-id'];
        if (typeof id !== 'string' || !id)
            throw new HttpError(400, 'Bad Request: Mcp-Session-Id header is required');
        const owner = exchange.identity?.subject;
        const session = this.sessions.find(id, 'streamable', owner) ?? (await this.sessions.restore(id, owner));
        if (!session)
            throw new HttpError(404, 'Session not found', ErrorCode.ConnectionClosed);
        session.touch();
        return session;
    }
    async post(exchange) {
        const { request, response } = exchange;
        const type = request.headers['content-type'] ?? '';
        if (!type.includes('application/json'))
            throw new HttpError(415, 'Unsupported Media Type: Content-Type must be application/json');
        const body = await readJson(request);
        const batch = Array.isArray(body);
        const messages = (batch ? body : [body]).map((item) => {
            const message = asMessage(item);
            if (!message)
                throw new HttpError(400, 'Invalid Request: not a JSON-RPC 2.0 message');
            return message;
        });
        if (messages.length === 0)
            throw new HttpError(400, 'Invalid Request: empty batch');
        exchange.messages = messages;
        if (exchange.request.headers['mcp-session-id'] === undefined && !batch) {
            const [message] = messages;
            if (isRequest(message) && isModernRequest(message))
                return this.answerStateless(exchange, message);
            if (!isRequest(message) && exchange.request.headers['mcp-protocol-version'] === MODERN_REVISION) {
                response.writeHead(202).end(); // a 2026-07-28 client's notification: there is no session it could belong to
                return;
            }
        }
        let session;
        const initialize = messages.find((message) => isRequest(message) && message.method === 'initialize');
        if (initialize) {
            if (messages.length > 1)
                throw new HttpError(400, 'Invalid Request: initialize must be sent alone');
            session = this.sessions.create('streamable', exchange.identity?.subject);
        }
        else {
            session = await this.session(exchange);
        }
        const requests = [];
        let refused;
        for (const message of messages) {
            if (isRequest(message))
                requests.push(message);
            else
                refused ??= await this.notify({ message: message, session, exchange });
        }
        const headers = { 'Mcp-Session-Id': session.id };
        if (requests.length === 0) {
            const refusal = refused && refusalOf(refused);
            if (refusal)
                return sendRefusal(response, refused, refusal.status, { ...headers, ...refusal.headers });
            response.writeHead(202, headers).end();
            return;
        }
        if (!batch) {
            const answer = await this.call(exchange, session, requests[0], headers);
            if (initialize && answer.error)
                session.close();
            return;
        }
        const answers = await Promise.all(requests.map((message) => this.run(exchange, session, message)));
        const text = JSON.stringify(answers);
        response.writeHead(200, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
    }
    async answerStateless(exchange, message) {
        const mismatch = headerMismatch(exchange.request.headers, message);
        if (mismatch)
            return sendRefusal(exchange.response, errorResponse(message.id, ErrorCode.HeaderMismatch, `Bad Request: ${mismatch}`), 400);
        const reply = new ReplyStream(exchange.response, {});
        const answer = await this.stateless.answer(exchange, message, reply);
        const refusal = refusalOf(answer);
        reply.finish(answer, refusal?.status, refusal?.headers);
    }
    /** Runs one request, streaming related server messages into its reply. */
    async call(exchange, session, message, headers) {
        // A handshake may wait for a server process to start; its answer stays plain JSON, as clients expect.
        const reply = new ReplyStream(exchange.response, headers, session.formatFor(message.id), message.method !== 'initialize');
        session.track(message.id, reply);
        try {
            const answer = await this.run(exchange, session, message);
            if (message.method === 'initialize' && answer.result)
                await this.sessions.opened(session, message.params ?? {});
            const refusal = refusalOf(answer);
            session.answer(message.id, reply, answer, refusal?.status, refusal?.headers);
            return answer;
        }
        finally {
            session.untrack(message.id);
        }
    }
    /**
     * Runs one request. A client that drops the connection has not cancelled the call (it
     * cancels with `notifications/cancelled`): the answer reaches it on a resumed or GET stream.
     */
    run(exchange, session, message) {
        return this.handle({ request: message, session, signal: session.signal, exchange });
    }
    async get(exchange) {
        const accept = exchange.request.headers.accept ?? '';
        if (!accept.includes('text/event-stream'))
            throw new HttpError(406, 'Not Acceptable: the client must accept text/event-stream');
        const session = await this.session(exchange);
        const headers = { 'Mcp-Session-Id': session.id };
        const open = (format) => {
            const stream = new EventStream(exchange.response, headers, format);
            exchange.response.once('close', () => session.detachStream(stream));
            return stream;
        };
        const lastEventId = exchange.request.headers['last-event-id'];
        if (typeof lastEventId === 'string' && session.resume(lastEventId, open))
            return;
        if (session.hasStream)
            throw new HttpError(409, 'Conflict: only one event stream is allowed per session');
        session.attachStream(open(session.formatFor(undefined)));
    }
    async delete(exchange) {
        const session = await this.session(exchange);
        session.close();
        exchange.response.writeHead(200).end();
    }
}
//# sourceMappingURL=streamable.js.map