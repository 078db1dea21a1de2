/**
 * One session of an aggregate's client session to one member's proxy, over a link (link.ts) or
 * the proxy's own Streamable HTTP client (backends/http.ts): what the member sends about a call
 * (its requests to the client, progress, logs) comes tied to that call, and so is told apart
 * from what it sends on its own, as the member's proxy told it.
 */
import { VERSION } from '../../../version.js';
import type { ClientSessionSink, UpstreamSession } from '../../core/backend.js';
import { linkedController } from '../../core/abort.js';
import { CallTable } from '../../core/callTable.js';
import type { MemberContext } from './search.js';
import { SUPPORTED_PROTOCOL_VERSIONS, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcResponse, type RequestId } from '../../core/jsonrpc.js';

/** How a member's proxy is reached: a link on its Unix socket (link.ts), or its URL (backends/http.ts). */
export interface MemberTransport {
	open(sink: ClientSessionSink): UpstreamSession;
	close(): void | Promise<void>;
}

export interface MemberEvents {
	/** A message from the member; `call` is the client request of the aggregate it is about, when it is about one. */
	message(message: JsonRpcMessage, call: RequestId | undefined): void;
	/** The member's proxy ended the session. */
	ended(reason: string): void;
}

/**
 * A client request of the aggregate, in flight: a member request sent on its behalf notes its
 * session and id here, so that the client's cancellation reaches it.
 */
export interface ClientCall {
	readonly id: RequestId;
	sent?: { readonly session: MemberSession; readonly id: RequestId };
}

export class MemberSession {
	/** The member's capabilities, once initialised. */
	capabilities: Record<string, unknown> = {};
	/** What the member says of itself at initialize (its title, description and instructions). */
	context: MemberContext = {};
	private readonly upstream: UpstreamSession;
	private nextId = 1;
	/** This session's request id → the aggregate client's request it was sent for. */
	private readonly calls = new CallTable<RequestId>();
	/** Requests in flight on a transport that cannot cancel one (`UpstreamSession.cancel`): a signal of their own. */
	private readonly controllers = new CallTable<AbortController>();

	constructor(transport: MemberTransport, events: MemberEvents) {
		this.upstream = transport.open({
			deliver: (message, relatedTo) => events.message(message, relatedTo === undefined ? undefined : this.calls.get(relatedTo)),
			ended: (reason) => events.ended(reason),
		});
	}

	/** The handshake, declaring the client capabilities the aggregate relays (`capabilities`); rejects when the member refuses it. */
	async initialize(capabilities: Record<string, unknown>, signal: AbortSignal): Promise<void> {
		const params = { protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.at(-1), capabilities, clientInfo: { name: 'hangar-aggregate', version: VERSION } };
		const answer = await this.request('initialize', params, signal);
		if (answer.error) throw new Error(answer.error.message);
		this.capabilities = (answer.result?.capabilities as Record<string, unknown> | undefined) ?? {};
		const info = (answer.result?.serverInfo ?? {}) as Record<string, unknown>;
		const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
		this.context = { title: text(info.title), description: text(info.description), instructions: text(answer.result?.instructions) };
		await this.upstream.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
	}

	/** A request to the member, on behalf of the client request `call` (its messages are tied to it); never rejects. */
	async request(method: string, params: Record<string, unknown> | undefined, signal: AbortSignal, call?: ClientCall): Promise<JsonRpcResponse> {
		const id = this.nextId++;
		let linked: ReturnType<typeof linkedController> | undefined;
		if (call) {
			this.calls.set(id, call.id);
			call.sent = { session: this, id };
			if (!this.upstream.cancel) {
				linked = linkedController(signal);
				this.controllers.set(id, linked.controller);
			}
		}
		try {
			return await this.upstream.request({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) }, linked?.controller.signal ?? signal);
		} finally {
			this.calls.delete(id);
			if (linked) {
				linked.unlink();
				this.controllers.delete(id);
			}
		}
	}

	/** Gives up the request `id` in flight: its caller is answered with an error, the member told. */
	cancel(id: RequestId, reason: string): void {
		if (this.upstream.cancel) this.upstream.cancel(id, reason);
		else this.controllers.get(id)?.abort(reason);
	}

	/** A notification, or the client's answer to one of the member's requests (under the member's own id). */
	send(message: JsonRpcNotification | JsonRpcResponse): void | Promise<void> {
		return this.upstream.send(message);
	}

	close(): void {
		this.upstream.close();
	}
}
