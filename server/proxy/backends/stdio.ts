/**
 * The stdio bridge: every client session shares one attach to the container's stdin and
 * stdout (newline-delimited JSON-RPC). The server is initialised once, by the bridge, when it
 * attaches; clients' `initialize` is answered with that result.
 *
 * Requests are multiplexed by id: each client request gets a bridge-wide id (and its progress
 * token the same number), so two clients may both send id 1. Responses and progress go back
 * to the session that asked, under its own id and token. Server requests (sampling,
 * elicitation, …) carry no link to the client request that caused them over stdio: they go
 * to the session with the most recent request in flight, else to the most recently active
 * session. Other server notifications go to every session.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Logger } from '../../log.js';
import type { Attachment, Runtime } from '../../runtime/runtime.js';
import type { Backend, BackendSession, BackendState, SessionSink } from '../backend.js';
import {
	ErrorCode,
	errorResponse,
	isRequest,
	isResponse,
	LATEST_PROTOCOL_VERSION,
	parseMessage,
	type JsonRpcMessage,
	type JsonRpcNotification,
	type JsonRpcRequest,
	type JsonRpcResponse,
	type RequestId,
} from '../jsonrpc.js';

const INITIALIZE_TIMEOUT_MS = 60_000;
const MAX_BACKOFF_MS = 10_000;

interface Pending {
	/** Undefined for the bridge's own requests. */
	readonly session: BridgeSession | undefined;
	readonly id: RequestId;
	readonly progressToken: unknown;
	readonly resolve: (response: JsonRpcResponse) => void;
}

export interface StdioBridgeOptions {
	readonly runtime: Runtime;
	/** Container id or name. */
	readonly container: string;
	readonly log: Logger;
	readonly clientInfo: { name: string; version: string };
}

export class StdioBridge implements Backend {
	state: BackendState = 'connecting';
	detail: string | undefined = 'attaching to the container';
	onStateChange?: (state: BackendState, detail: string | undefined) => void;

	private attachment: Attachment | undefined;
	private nextId = 1;
	private readonly pending = new Map<number, Pending>();
	private readonly serverRequests = new Map<RequestId, BridgeSession>();
	private readonly sessions = new Set<BridgeSession>();
	private initializeResult: Record<string, unknown> | undefined;
	private connected!: Promise<void>;
	private markConnected!: () => void;
	private stopped = false;
	private loop: Promise<void> | undefined;

	constructor(private readonly options: StdioBridgeOptions) {
		this.resetConnected();
	}

	private resetConnected(): void {
		this.connected = new Promise((resolve) => (this.markConnected = resolve));
	}

	private setState(state: BackendState, detail?: string): void {
		if (this.state === state && this.detail === detail) return;
		this.state = state;
		this.detail = detail;
		if (state === 'connected') this.markConnected();
		this.onStateChange?.(state, detail);
	}

	/** Resolves once attached and initialised; keeps reconnecting in the background after that. */
	start(): Promise<void> {
		this.loop ??= this.run();
		return this.connected;
	}

	private async run(): Promise<void> {
		let backoff = 250;
		while (!this.stopped) {
			try {
				const info = await this.options.runtime.inspect(this.options.container);
				if (!info) throw new Error('container not found');
				if (info.state !== 'running') throw new Error(`container is ${info.state}`);
				const attachment = await this.options.runtime.attach(info.id);
				this.attachment = attachment;
				this.readLines(attachment);
				const lost = attachment.closed.then(() => {
					throw new Error('the container closed its stdio');
				});
				lost.catch(() => undefined); // observed below; never an unhandled rejection
				await Promise.race([this.initialize(), lost]);
				backoff = 250;
				this.setState('connected');
				this.options.log.info(`attached to container ${info.name}`);
				await lost;
			} catch (error) {
				this.attachment?.close();
				this.attachment = undefined;
				if (this.stopped) return;
				this.dropInFlight((error as Error).message);
				if (this.state === 'connected') this.resetConnected();
				this.setState('disconnected', (error as Error).message);
				this.options.log.warn(`server connection: ${(error as Error).message}; retrying in ${backoff} ms`);
				await new Promise((resolve) => setTimeout(resolve, backoff));
				backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
			}
		}
	}

	private async initialize(): Promise<void> {
		const response = await new Promise<JsonRpcResponse>((resolve, reject) => {
			const id = this.nextId++;
			const timer = setTimeout(() => {
				this.pending.delete(id);
				reject(new Error(`the server did not answer initialize within ${INITIALIZE_TIMEOUT_MS / 1000} s`));
			}, INITIALIZE_TIMEOUT_MS);
			this.pending.set(id, {
				session: undefined,
				id,
				progressToken: undefined,
				resolve: (answer) => {
					clearTimeout(timer);
					resolve(answer);
				},
			});
			this.write({
				jsonrpc: '2.0',
				id,
				method: 'initialize',
				params: {
					protocolVersion: LATEST_PROTOCOL_VERSION,
					// Sampling and elicitation are relayed to the client that caused them.
					capabilities: { sampling: {}, elicitation: {} },
					clientInfo: this.options.clientInfo,
				},
			});
		});
		if (response.error || !response.result) throw new Error(`initialize failed: ${response.error?.message ?? 'no result'}`);
		this.initializeResult = response.result;
		this.write({ jsonrpc: '2.0', method: 'notifications/initialized' });
	}

	private readLines(attachment: Attachment): void {
		const decoder = new StringDecoder('utf8');
		let buffered = '';
		attachment.onStdout((chunk) => {
			buffered += decoder.write(chunk);
			let newline = buffered.indexOf('\n');
			while (newline >= 0) {
				const line = buffered.slice(0, newline);
				buffered = buffered.slice(newline + 1);
				if (line.trim()) this.onLine(line);
				newline = buffered.indexOf('\n');
			}
		});
	}

	private write(message: JsonRpcMessage): void {
		this.attachment?.stdin.write(`${JSON.stringify(message)}\n`);
	}

	private onLine(line: string): void {
		const message = parseMessage(line);
		if (!message) {
			this.options.log.debug(`ignored a line that is not JSON-RPC: ${line.slice(0, 200)}`);
			return;
		}
		if (isResponse(message)) this.onResponse(message);
		else if (isRequest(message)) this.onServerRequest(message);
		else this.onServerNotification(message as JsonRpcNotification);
	}

	private onResponse(response: JsonRpcResponse): void {
		const entry = typeof response.id === 'number' ? this.pending.get(response.id) : undefined;
		if (!entry) return; // answered after being cancelled
		this.pending.delete(response.id as number);
		entry.session?.finished(entry.id);
		response.id = entry.id;
		entry.resolve(response);
	}

	private onServerRequest(request: JsonRpcRequest): void {
		if (request.method === 'ping') {
			this.write({ jsonrpc: '2.0', id: request.id, result: {} });
			return;
		}
		const session = this.pickSession();
		if (!session) {
			this.write(errorResponse(request.id, ErrorCode.InternalError, 'no client is connected to answer this request'));
			return;
		}
		this.serverRequests.set(request.id, session);
		session.sink.deliver(request, session.latestRequest());
	}

	private onServerNotification(notification: JsonRpcNotification): void {
		if (notification.method === 'notifications/progress') {
			const token = notification.params?.progressToken;
			const entry = typeof token === 'number' ? this.pending.get(token) : undefined;
			if (entry?.session) {
				entry.session.sink.deliver({ ...notification, params: { ...notification.params, progressToken: entry.progressToken } }, entry.id);
			}
			return;
		}
		if (notification.method === 'notifications/cancelled') {
			const requestId = notification.params?.requestId as RequestId | undefined;
			const session = requestId === undefined ? undefined : this.serverRequests.get(requestId);
			if (session) {
				this.serverRequests.delete(requestId!);
				session.sink.deliver(notification);
			}
			return;
		}
		for (const session of this.sessions) session.sink.deliver(notification);
	}

	/** The session with the most recent request in flight, else the most recently active one. */
	private pickSession(): BridgeSession | undefined {
		let busy: BridgeSession | undefined;
		let active: BridgeSession | undefined;
		for (const session of this.sessions) {
			if (session.inFlight > 0 && (!busy || session.lastRequestAt > busy.lastRequestAt)) busy = session;
			if (!active || session.lastRequestAt > active.lastRequestAt) active = session;
		}
		return busy ?? active;
	}

	private dropInFlight(reason: string): void {
		for (const [id, entry] of this.pending) {
			this.pending.delete(id);
			entry.session?.finished(entry.id);
			entry.resolve(errorResponse(entry.id, ErrorCode.ConnectionClosed, `connection to the server was lost: ${reason}`));
		}
		this.serverRequests.clear();
	}

	/** Sends a client request under a bridge-wide id; resolves with the response under the client's id. */
	async forward(session: BridgeSession, request: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		if (this.state !== 'connected') {
			const cancelled = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
			await Promise.race([this.connected, cancelled]);
			if (signal.aborted) return errorResponse(request.id, ErrorCode.ConnectionClosed, `the server is not connected: ${this.detail}`);
		}
		if (request.method === 'initialize') return { jsonrpc: '2.0', id: request.id, result: this.initializeResult! };
		const id = this.nextId++;
		const meta = request.params?._meta as Record<string, unknown> | undefined;
		const progressToken = meta?.progressToken;
		const params = progressToken === undefined ? request.params : { ...request.params, _meta: { ...meta, progressToken: id } };
		return new Promise<JsonRpcResponse>((resolve) => {
			const onAbort = () => {
				if (!this.pending.delete(id)) return;
				session.finished(request.id);
				this.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(signal.reason ?? 'cancelled') } });
				resolve(errorResponse(request.id, ErrorCode.RequestTimeout, 'request cancelled'));
			};
			signal.addEventListener('abort', onAbort, { once: true });
			this.pending.set(id, {
				session,
				id: request.id,
				progressToken,
				resolve: (response) => {
					signal.removeEventListener('abort', onAbort);
					resolve(response);
				},
			});
			session.started(request.id, id);
			this.write({ jsonrpc: '2.0', id, method: request.method, params });
		});
	}

	/** Relays a client's notification or its answer to a server request. */
	relay(session: BridgeSession, message: JsonRpcNotification | JsonRpcResponse): void {
		if (isResponse(message)) {
			if (message.id !== null && this.serverRequests.get(message.id) === session) {
				this.serverRequests.delete(message.id);
				this.write(message);
			}
			return;
		}
		if (message.method === 'notifications/initialized') return; // the bridge initialised the server
		if (message.method === 'notifications/cancelled') {
			const bridgeId = session.bridgeIdOf(message.params?.requestId as RequestId);
			const entry = bridgeId === undefined ? undefined : this.pending.get(bridgeId);
			if (bridgeId === undefined || !entry) return;
			this.pending.delete(bridgeId);
			session.finished(entry.id);
			this.write({ ...message, params: { ...message.params, requestId: bridgeId } });
			entry.resolve(errorResponse(entry.id, ErrorCode.RequestTimeout, 'request cancelled by the client'));
			return;
		}
		this.write(message);
	}

	open(sink: SessionSink): BackendSession {
		const session = new BridgeSession(this, sink);
		this.sessions.add(session);
		return session;
	}

	/** A session ended: cancel what it has in flight and refuse the server requests it holds. */
	detach(session: BridgeSession): void {
		this.sessions.delete(session);
		for (const [id, entry] of this.pending) {
			if (entry.session !== session) continue;
			this.pending.delete(id);
			this.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'client session closed' } });
			entry.resolve(errorResponse(entry.id, ErrorCode.ConnectionClosed, 'client session closed'));
		}
		for (const [id, holder] of this.serverRequests) {
			if (holder !== session) continue;
			this.serverRequests.delete(id);
			this.write(errorResponse(id, ErrorCode.InternalError, 'the client session closed'));
		}
	}

	async close(): Promise<void> {
		this.stopped = true;
		this.dropInFlight('the proxy is stopping');
		this.attachment?.close();
	}
}

/** One client's view of the bridge. */
export class BridgeSession implements BackendSession {
	lastRequestAt = 0;
	private latest: RequestId | undefined;
	/** Client request id → bridge id, for the client's cancellations. */
	private readonly bridgeIds = new Map<RequestId, number>();

	constructor(
		private readonly bridge: StdioBridge,
		readonly sink: SessionSink,
	) {}

	request(message: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		return this.bridge.forward(this, message, signal);
	}

	send(message: JsonRpcNotification | JsonRpcResponse): void {
		this.bridge.relay(this, message);
	}

	close(): void {
		this.bridge.detach(this);
	}

	/** Requests sent and not answered yet. */
	get inFlight(): number {
		return this.bridgeIds.size;
	}

	started(id: RequestId, bridgeId: number): void {
		this.lastRequestAt = performance.now();
		this.latest = id;
		this.bridgeIds.set(id, bridgeId);
	}

	finished(id: RequestId): void {
		this.bridgeIds.delete(id);
	}

	bridgeIdOf(id: RequestId): number | undefined {
		return this.bridgeIds.get(id);
	}

	/** The client request most recently sent, while it is in flight. */
	latestRequest(): RequestId | undefined {
		return this.latest !== undefined && this.bridgeIds.has(this.latest) ? this.latest : undefined;
	}
}
