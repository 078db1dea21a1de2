/**
 * The legacy HTTP+SSE side of the proxy (MCP 2024-11-05), for older clients: `GET /sse` opens
 * a session whose first event, `endpoint`, names the URL to POST messages to
 * (`/messages?session_id=…`); POSTs answer 202 and every response and server message
 * travels on the event stream. The session ends when the stream closes.
 */
import { forwardNotice, type HttpExchange, type McpHandler, type NoticeHandler } from '../chain/chain.js';
import { isRequest, type JsonRpcNotification, type JsonRpcResponse } from '../core/jsonrpc.js';
import type { PublicAddress } from '../net/publicAddress.js';
import type { ClientSessionRegistry } from '../sessions/clientSession.js';
import { EventStream } from '../sessions/streams.js';
import { HttpError, messageOf, readJson, sendError, sendRefusal } from './http.js';
import { tagsOf } from '../core/tags.js';

export class LegacySseFront {
	constructor(
		private readonly sessions: ClientSessionRegistry,
		private readonly handle: McpHandler,
		private readonly messagesPath: string,
		/** A reverse proxy's path prefix goes before the messages path. */
		private readonly address: PublicAddress,
		/** Notifications and the client's responses go through the notice middleware. */
		private readonly notify: NoticeHandler = forwardNotice,
	) {}

	/** `GET /sse`: a new session and its event stream. */
	connect(exchange: HttpExchange): void {
		const { request, response } = exchange;
		if (request.method !== 'GET') {
			response.setHeader('Allow', 'GET');
			return sendError(response, new HttpError(405, 'Method not allowed'));
		}
		const session = this.sessions.create('sse', exchange.identity?.subject);
		const stream = new EventStream(response);
		stream.write(`event: endpoint\ndata: ${this.address.prefix(request)}${this.messagesPath}?session_id=${session.id}\n\n`);
		session.attachStream(stream);
		response.once('close', () => session.close());
	}

	/**
	 * `POST /messages?session_id=…`: 202 once the message is on its way to the server; answers
	 * follow on the stream. A call the proxy refuses (403, 429…) gets that status and the error
	 * as the POST's own response instead.
	 */
	async post(exchange: HttpExchange): Promise<void> {
		const { request, response, url } = exchange;
		try {
			if (request.method !== 'POST') {
				response.setHeader('Allow', 'POST');
				throw new HttpError(405, 'Method not allowed');
			}
			const id = url.searchParams.get('session_id') ?? url.searchParams.get('sessionId');
			if (!id) throw new HttpError(400, 'Bad Request: session_id is required');
			const session = this.sessions.find(id, 'sse', exchange.identity?.subject);
			if (!session) throw new HttpError(404, 'Session not found');
			const message = messageOf(await readJson(request));
			exchange.messages = [message];
			session.touch();
			const accepted = () => {
				if (!response.headersSent) response.writeHead(202, { 'Content-Type': 'text/plain' }).end('Accepted');
			};
			if (!isRequest(message)) {
				const refused = await this.notify({ message: message as JsonRpcNotification | JsonRpcResponse, session, exchange });
				const refusal = refused && tagsOf(refused)?.refusal;
				if (refusal) return sendRefusal(response, refused!, refusal.status, refusal.headers);
				accepted();
				return;
			}
			const answer = await this.handle({ request: message, session, signal: session.signal, exchange, accepted });
			const refusal = tagsOf(answer)?.refusal;
			if (refusal && !response.headersSent) return sendRefusal(response, answer, refusal.status, refusal.headers);
			accepted();
			session.deliver(answer);
		} catch (error) {
			if (error instanceof HttpError) sendError(response, error);
			else throw error;
		}
	}
}
