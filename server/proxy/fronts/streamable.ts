/**
 * The Streamable HTTP side of the proxy (MCP 2025-03-26 and later) at `/mcp`:
 *
 * - POST carries client messages. `initialize` opens a session whose id comes back in
 *   `Mcp-Session-Id`; every later request must send it (400 without, 404 for an unknown or
 *   ended one). Notifications and responses alone get 202. A request gets its response as
 *   JSON, or as an event stream when server messages come first or the call is long.
 * - GET opens the session's stream of server-initiated messages (one at a time; 409 for a
 *   second).
 * - DELETE ends the session.
 * - `MCP-Protocol-Version`, when sent, must be a revision the proxy speaks (else 400).
 */
import { forwardNotice, type HttpExchange, type McpHandler, type NoticeHandler } from '../chain/chain.js';
import {
	ErrorCode,
	isRequest,
	REVISION_2026,
	SUPPORTED_PROTOCOL_VERSIONS,
	type JsonRpcMessage,
	type JsonRpcNotification,
	type JsonRpcRequest,
	type JsonRpcResponse,
} from '../core/jsonrpc.js';
import type { ClientSession, ClientSessionRegistry } from '../sessions/clientSession.js';
import { EventStream, jsonHeaders, ReplyStream, type EventFormat } from '../sessions/streams.js';
import { isRequest2026, Client2026Bridge } from '../revisions/client2026.js';
import { tagsOf } from '../core/tags.js';
import { HttpError, messageOf, readJson, sendError, sendRefusal } from './http.js';

/** Answers a request the front turned away (an HttpError); anything else is the server's to report. */
function refused(exchange: HttpExchange, error: unknown): Promise<void> {
	if (!(error instanceof HttpError)) return Promise.reject(error);
	sendError(exchange.response, error);
	return Promise.resolve();
}

export class StreamableHttpFront {
	private readonly clients2026: Client2026Bridge;

	constructor(
		private readonly sessions: ClientSessionRegistry,
		private readonly handle: McpHandler,
		/** Notifications and the client's responses go through the notice middleware. */
		private readonly notify: NoticeHandler = forwardNotice,
	) {
		this.clients2026 = new Client2026Bridge(sessions, handle, notify);
	}

	/** Not an async function, nor is anything above it: each would add a promise per request. */
	serve(exchange: HttpExchange): Promise<void> {
		const { 'mcp-protocol-version': version, 'mcp-session-id': session } = exchange.request.headers;
		// Without a session, a POST names its revision for the 2026-07-28 side to answer (revisions/client2026.ts).
		const sessionless = session === undefined && exchange.request.method === 'POST';
		if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version) && version !== REVISION_2026 && !sessionless) {
			return refused(exchange, new HttpError(400, `Bad Request: unsupported MCP-Protocol-Version ${version} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`));
		}
		switch (exchange.request.method) {
			case 'POST':
				return this.post(exchange);
			case 'GET':
				return this.get(exchange).catch((error: unknown) => refused(exchange, error));
			case 'DELETE':
				return this.delete(exchange).catch((error: unknown) => refused(exchange, error));
			default:
				exchange.response.setHeader('Allow', 'GET, POST, DELETE');
				return refused(exchange, new HttpError(405, 'Method not allowed'));
		}
	}

	/** The request's session: this replica's own, else one another replica saved. */
	private async session(exchange: HttpExchange): Promise<ClientSession> {
		return this.ownSession(exchange) ?? this.savedSession(exchange);
	}

	/** The request's session if this replica holds it (no promise: this is every request's). */
	private ownSession(exchange: HttpExchange): ClientSession | undefined {
		const id = exchange.request.headers['mcp-session-id'];
		if (typeof id !== 'string' || !id) throw new HttpError(400, 'Bad Request: Mcp-Session-Id header is required');
		const session = this.sessions.find(id, 'streamable', exchange.identity?.subject);
		session?.touch();
		return session;
	}

	private async savedSession(exchange: HttpExchange): Promise<ClientSession> {
		const session = await this.sessions.restore(exchange.request.headers['mcp-session-id'] as string, exchange.identity?.subject);
		if (!session) throw new HttpError(404, 'Session not found', ErrorCode.ConnectionClosed);
		session.touch();
		return session;
	}

	/**
	 * A POST. The usual one, a single request of an open session, takes the shortest way: one
	 * async function from the body to the reply (each one more costs a promise and a turn).
	 */
	private async post(exchange: HttpExchange): Promise<void> {
		try {
			const type = exchange.request.headers['content-type'] ?? '';
			if (!type.includes('application/json')) throw new HttpError(415, 'Unsupported Media Type: Content-Type must be application/json');
			const body = await readJson(exchange.request);
			if (Array.isArray(body)) return await this.postBatch(exchange, body.map(messageOf));
			const message = messageOf(body);
			exchange.messages = [message];
			if (!isRequest(message)) return await this.postNotice(exchange, message as JsonRpcNotification | JsonRpcResponse);
			if (exchange.request.headers['mcp-session-id'] === undefined && isRequest2026(exchange.request.headers, message)) return await this.answer2026(exchange, message);

			const initialize = message.method === 'initialize';
			const session = initialize ? this.sessions.create('streamable', exchange.identity?.subject) : (this.ownSession(exchange) ?? (await this.savedSession(exchange)));
			// A handshake may wait for a server process to start; its answer stays plain JSON, as clients expect.
			const reply = new ReplyStream(exchange.response, session.headers, !initialize, { source: session, stream: message.id });
			session.track(message.id, reply);
			try {
				const answer = await this.run(exchange, session, message);
				if (initialize && answer.result) await this.sessions.opened(session, message.params ?? {});
				const refusal = tagsOf(answer)?.refusal;
				session.answer(message.id, reply, answer, refusal?.status, refusal?.headers);
				if (initialize && answer.error) session.close();
			} finally {
				session.untrack(message.id);
			}
		} catch (error) {
			await refused(exchange, error);
		}
	}

	/** A notification or a response to a server request, alone: 202 once it is on its way. */
	private async postNotice(exchange: HttpExchange, message: JsonRpcNotification | JsonRpcResponse): Promise<void> {
		if (exchange.request.headers['mcp-session-id'] === undefined && exchange.request.headers['mcp-protocol-version'] === REVISION_2026) {
			exchange.response.writeHead(202).end(); // a 2026-07-28 client's notification: there is no session it could belong to
			return;
		}
		const session = await this.session(exchange);
		const refusedBy = await this.notify({ message, session, exchange });
		this.acknowledge(exchange, session, refusedBy);
	}

	/** A JSON-RPC batch (2025-03-26 allows them): requests answered together in one JSON array. */
	private async postBatch(exchange: HttpExchange, messages: JsonRpcMessage[]): Promise<void> {
		if (messages.length === 0) throw new HttpError(400, 'Invalid Request: empty batch');
		exchange.messages = messages;
		if (messages.some((message) => isRequest(message) && message.method === 'initialize')) throw new HttpError(400, 'Invalid Request: initialize must be sent alone');
		const session = await this.session(exchange);
		const requests: JsonRpcRequest[] = [];
		let refusedBy: JsonRpcResponse | undefined;
		for (const message of messages) {
			if (isRequest(message)) requests.push(message);
			else refusedBy ??= await this.notify({ message: message as JsonRpcNotification | JsonRpcResponse, session, exchange });
		}
		if (requests.length === 0) return this.acknowledge(exchange, session, refusedBy);
		const answers = await Promise.all(requests.map((message) => this.run(exchange, session, message)));
		const text = JSON.stringify(answers);
		exchange.response.writeHead(200, jsonHeaders(session.headers, undefined, Buffer.byteLength(text))).end(text);
	}

	/** 202 for messages that are on their way; the refusal, with its status, for one that was stopped. */
	private acknowledge({ response }: HttpExchange, session: ClientSession, refusedBy: JsonRpcResponse | undefined): void {
		const refusal = refusedBy && tagsOf(refusedBy)?.refusal;
		if (refusal) return sendRefusal(response, refusedBy!, refusal.status, Object.assign({}, session.headers, refusal.headers));
		response.writeHead(202, session.headers).end();
	}

	/** A 2026-07-28 request: "method not found" goes with HTTP 404, as that revision requires. */
	private async answer2026(exchange: HttpExchange, message: JsonRpcRequest): Promise<void> {
		const reply = new ReplyStream(exchange.response, {});
		const answer = await this.clients2026.answer(exchange, message, reply);
		const refusal = tagsOf(answer)?.refusal;
		reply.finish(answer, refusal?.status ?? (answer.error?.code === ErrorCode.MethodNotFound ? 404 : undefined), refusal?.headers);
	}

	/**
	 * Runs one request. A client that drops the connection has not cancelled the call (it
	 * cancels with `notifications/cancelled`): the answer reaches it on a resumed or GET stream.
	 */
	private run(exchange: HttpExchange, session: ClientSession, message: JsonRpcRequest): Promise<JsonRpcResponse> {
		return this.handle({ request: message, session, signal: session.signal, exchange });
	}

	private async get(exchange: HttpExchange): Promise<void> {
		const accept = exchange.request.headers.accept ?? '';
		if (!accept.includes('text/event-stream')) throw new HttpError(406, 'Not Acceptable: the client must accept text/event-stream');
		const session = await this.session(exchange);
		const open = (format: EventFormat | undefined) => {
			const stream = new EventStream(exchange.response, session.headers, format);
			exchange.response.once('close', () => session.detachStream(stream));
			return stream;
		};
		const lastEventId = exchange.request.headers['last-event-id'];
		if (typeof lastEventId === 'string' && session.resume(lastEventId, open)) return;
		if (session.hasStream) throw new HttpError(409, 'Conflict: only one event stream is allowed per session');
		session.attachStream(open(session.formatFor(undefined)));
	}

	private async delete(exchange: HttpExchange): Promise<void> {
		const session = await this.session(exchange);
		session.close();
		exchange.response.writeHead(200).end();
	}
}
