/**
 * The link (core/link.ts) on the aggregate's side: one member session as one `GET /link` on the
 * member's Unix socket, upgraded, its messages written as lines on the connection as they come
 * (those of before the upgrade once it is done), the member's read from it. The member's proxy
 * runs its whole chain on each message (fronts/link.ts); neither side frames or parses an HTTP
 * message per call.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { ClientSessionSink, UpstreamSession } from '../../core/backend.js';
import { CallTable } from '../../core/callTable.js';
import { onAbort } from '../../core/abort.js';
import { cancellationOf, ErrorCode, errorResponse, isResponse, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse, type RequestId } from '../../core/jsonrpc.js';
import { readBody, readLines } from '../../../net/body.js';
import { MAX_LINE_LENGTH, writeLine } from '../../core/lines.js';
import { LINK_PATH, LINK_PROTOCOL, parseLine } from '../../core/link.js';

/** How much of a refusal's body is read for its message. */
const MAX_REFUSAL_LENGTH = 4096;

/** A member's proxy, reached by links on its Unix socket. */
export class LinkTransport {
	constructor(
		private readonly socketPath: string,
		/** The proxy's URL: its request guard wants its address as the Host. */
		private readonly url: URL,
	) {}

	open(sink: ClientSessionSink): UpstreamSession {
		return new LinkSession(this.socketPath, this.url.host, sink);
	}

	close(): void {
		// Each link is its session's and closes with it.
	}
}

class LinkSession implements UpstreamSession {
	private readonly upgrade: ClientRequest;
	/** The connection, once upgraded. */
	private socket: Socket | undefined;
	/** Messages written before it was. */
	private queued: Array<JsonRpcRequest | JsonRpcNotification | JsonRpcResponse> = [];
	/** The requests sent and not yet answered, by id. */
	private readonly pending = new CallTable<(answer: JsonRpcResponse) => void>();
	/** Why the link ended, once it has. */
	private endedBy: string | undefined;

	constructor(
		socketPath: string,
		host: string,
		private readonly sink: ClientSessionSink,
	) {
		this.upgrade = httpRequest({ socketPath, path: LINK_PATH, agent: false, headers: { Host: host, Connection: 'Upgrade', Upgrade: LINK_PROTOCOL } });
		this.upgrade.on('upgrade', (_response, socket, head) => this.opened(socket, head));
		this.upgrade.on('response', (response) => this.refused(response));
		this.upgrade.on('error', (error) => this.lost(`the link to the member's proxy failed: ${error.message}`));
		this.upgrade.end();
	}

	request(message: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		if (this.endedBy) return Promise.resolve(errorResponse(message.id, ErrorCode.ConnectionClosed, this.endedBy));
		if (signal.aborted) return Promise.resolve(errorResponse(message.id, ErrorCode.RequestTimeout, 'request cancelled'));
		return new Promise((resolve) => {
			// The signal is the session's, shared by its calls: a hook on it, not a listener per call.
			const unhook = onAbort(signal, (reason) => this.cancel(message.id, String(reason ?? 'cancelled')));
			this.pending.set(message.id, (answer) => {
				unhook();
				resolve(answer);
			});
			this.write(message);
		});
	}

	cancel(id: RequestId, reason: string): void {
		const settle = this.pending.get(id);
		if (!settle) return;
		this.pending.delete(id);
		this.write(cancellationOf(id, reason));
		settle(errorResponse(id, ErrorCode.RequestTimeout, `request cancelled: ${reason}`));
	}

	send(message: JsonRpcNotification | JsonRpcResponse): void {
		this.write(message);
	}

	close(): void {
		this.end('the session closed');
		if (this.socket) this.socket.end();
		else this.upgrade.destroy();
	}

	private write(message: JsonRpcRequest | JsonRpcNotification | JsonRpcResponse): void {
		if (this.endedBy) return;
		if (this.socket) writeLine(this.socket, message, this.pending.size > 1);
		else this.queued.push(message);
	}

	private opened(socket: Socket, head: Buffer): void {
		if (this.endedBy) return void socket.destroy();
		this.socket = socket;
		socket.on('error', (error) => this.lost(`the link to the member's proxy failed: ${error.message}`));
		socket.once('close', () => this.lost("the member's proxy ended the link"));
		if (head.length > 0) socket.unshift(head);
		readLines(socket, MAX_LINE_LENGTH, (line) => this.received(line), () => {
			this.lost(`the member's proxy sent a message over ${MAX_LINE_LENGTH} characters`);
			socket.destroy();
		});
		for (const message of this.queued) writeLine(socket, message, true);
		this.queued = [];
	}

	private received(line: string): void {
		const parsed = parseLine(line);
		if (!parsed) return;
		const { message, call } = parsed;
		if (call === undefined && isResponse(message) && message.id !== null) {
			const settle = this.pending.get(message.id);
			if (settle) {
				this.pending.delete(message.id);
				return settle(message);
			}
		}
		this.sink.deliver(message, call);
	}

	/** The member's proxy would not link (its request guard, its authentication, or a proxy from before this link). */
	private async refused(response: IncomingMessage): Promise<void> {
		const text = await readBody(response, MAX_REFUSAL_LENGTH, (body) => body.toString('utf8')).catch(() => '');
		const detail = refusalOf(text);
		const stale = response.statusCode === 404 || response.statusCode === 405;
		const hint = stale ? ' (its proxy predates this link: restart the member)' : '';
		this.lost(`the member's proxy refused the link with HTTP ${response.statusCode}${detail ? `: ${detail}` : ''}${hint}`);
		this.upgrade.destroy();
	}

	private lost(reason: string): void {
		if (this.endedBy) return;
		this.end(reason);
		this.sink.ended(reason);
	}

	/** Answers every request still waiting with `reason`. */
	private end(reason: string): void {
		if (this.endedBy) return;
		this.endedBy = reason;
		for (const [id, settle] of this.pending.entries()) settle(errorResponse(id, ErrorCode.ConnectionClosed, reason));
		this.pending.clear();
	}
}

/** The message of a proxy's refusal: a JSON-RPC error's, an OAuth-style `error_description`, else the text. */
function refusalOf(text: string): string {
	try {
		const body = JSON.parse(text) as { error?: { message?: unknown } | string; error_description?: unknown };
		const message = typeof body.error === 'object' ? body.error?.message : (body.error_description ?? body.error);
		if (typeof message === 'string') return message;
	} catch {
		// not JSON: the text itself
	}
	return text.slice(0, 200);
}
