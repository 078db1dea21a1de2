/**
 * The link (core/link.ts) on the proxy's side: `GET /link` upgraded to `hangar-link`, served on
 * its Unix socket only, for the aggregates of its group. The connection is one client session,
 * which ends when either side closes it. Its HTTP middleware ran once, for the upgrade; every
 * message then goes through the MCP chain as a Streamable HTTP one does, so the member's policies
 * hold for an aggregate's calls, but a call costs neither side an HTTP request or chunk of its
 * own (docs/benchmarks.md).
 */
import type { Socket } from 'node:net';
import type { Logger } from '../../log.js';
import type { HttpExchange, McpHandler, NoticeHandler } from '../chain/chain.js';
import { readLines } from '../../net/body.js';
import { MAX_LINE_LENGTH, writeLine } from '../core/lines.js';
import { LINK_PROTOCOL, parseLine, type CallMessage } from '../core/link.js';
import { ErrorCode, errorResponse, isRequest, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse, type RequestId } from '../core/jsonrpc.js';
import type { CallReply, ClientSession, ClientSessionRegistry } from '../sessions/clientSession.js';
import type { SessionStream } from '../sessions/streams.js';
import { HttpError, sendError } from './http.js';

export class LinkFront {
	constructor(
		private readonly sessions: ClientSessionRegistry,
		private readonly handle: McpHandler,
		private readonly notify: NoticeHandler,
		private readonly log: Logger,
	) {}

	/** Settles when the link ends; a request that does not upgrade to the link is refused. */
	serve(exchange: HttpExchange): Promise<void> {
		const { request, response, upgrade } = exchange;
		if (request.method !== 'GET') {
			response.setHeader('Allow', 'GET');
			sendError(response, new HttpError(405, 'Method not allowed'));
			return Promise.resolve();
		}
		if (!upgrade || request.headers.upgrade?.toLowerCase() !== LINK_PROTOCOL) {
			sendError(response, new HttpError(426, `Upgrade Required: the link is a GET with Upgrade: ${LINK_PROTOCOL}`), { Upgrade: LINK_PROTOCOL });
			return Promise.resolve();
		}
		// The connection is the link's from here: the response object that came with it goes unused.
		response.detachSocket(upgrade);
		const session = this.sessions.create('link', exchange.identity?.subject);
		return new Link(session, upgrade, exchange, this.sessions, this.handle, this.notify, this.log).ended;
	}
}

/** One link: the client session's messages in, its answers and the server's messages out. */
class Link implements SessionStream {
	readonly ended: Promise<void>;
	/** Notices on their way: a message after one waits for them, as over HTTP it would wait for the 202. */
	private notices: Promise<unknown> = Promise.resolve();
	private noticesInFlight = 0;
	/** Requests being answered: while several are, answers written in one turn leave together. */
	private running = 0;

	constructor(
		private readonly session: ClientSession,
		private readonly socket: Socket,
		private readonly exchange: HttpExchange,
		private readonly sessions: ClientSessionRegistry,
		private readonly handle: McpHandler,
		private readonly notify: NoticeHandler,
		private readonly log: Logger,
	) {
		const headers = Object.entries(session.headers).map(([name, value]) => `${name}: ${value}\r\n`);
		socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${LINK_PROTOCOL}\r\n${headers.join('')}\r\n`);
		session.attachStream(this);
		readLines(socket, MAX_LINE_LENGTH, (line) => this.received(line), () => this.fail(`a message over ${MAX_LINE_LENGTH} characters`));
		this.ended = new Promise((resolve) => {
			// The aggregate closed its side: the server's side closes with it.
			socket.once('end', () => socket.end());
			socket.once('close', () => {
				session.close();
				resolve();
			});
		});
	}

	get open(): boolean {
		return !this.socket.writableEnded && !this.socket.destroyed;
	}

	send(message: JsonRpcMessage | CallMessage): void {
		if (this.open) writeLine(this.socket, message, this.running > 1);
	}

	end(): void {
		if (this.open) this.socket.end();
	}

	private received(line: string): void {
		if (!this.open) return;
		const parsed = parseLine(line);
		if (!parsed || parsed.call !== undefined) return this.send(errorResponse(null, ErrorCode.ParseError, 'Parse error: a line that is no JSON-RPC 2.0 message'));
		const { message } = parsed;
		this.session.touch();
		if (!isRequest(message)) {
			this.noticesInFlight++;
			this.notices = this.notices
				.then(() => this.notify({ message: message as JsonRpcNotification | JsonRpcResponse, session: this.session, exchange: this.exchange }))
				.catch((error: unknown) => this.log.error(`a notice on the link failed: ${(error as Error)?.stack ?? error}`))
				.finally(() => this.noticesInFlight--);
		} else if (this.noticesInFlight > 0) {
			void this.notices.then(() => this.run(message));
		} else {
			void this.run(message);
		}
	}

	private async run(request: JsonRpcRequest): Promise<void> {
		const reply = new LinkReply(this, request.id);
		this.session.track(request.id, reply);
		this.running++;
		let answer: JsonRpcResponse;
		try {
			answer = await this.handle({ request, session: this.session, signal: this.session.signal, exchange: this.exchange });
			if (request.method === 'initialize' && answer.result) await this.sessions.opened(this.session, request.params ?? {});
		} catch (error) {
			this.log.error(`${request.method} on the link failed: ${(error as Error)?.stack ?? error}`);
			answer = errorResponse(request.id, ErrorCode.InternalError, 'internal error');
		} finally {
			this.session.untrack(request.id);
			reply.done = true;
		}
		this.send(answer);
		this.running--;
		if (request.method === 'initialize' && answer.error) this.session.close();
	}

	private fail(reason: string): void {
		this.send(errorResponse(null, ErrorCode.InvalidRequest, `Invalid Request: ${reason}; the link is closed`));
		this.session.close();
	}
}

/** Where the server's messages about one call go: the link, wrapped with the call's id. */
class LinkReply implements CallReply {
	done = false;

	constructor(
		private readonly link: Link,
		private readonly call: RequestId,
	) {}

	get open(): boolean {
		return !this.done && this.link.open;
	}

	send(message: JsonRpcMessage): void {
		this.link.send({ call: this.call, message });
	}

	cancel(): void {
		this.done = true;
	}
}
