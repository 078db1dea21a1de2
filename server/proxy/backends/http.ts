/**
 * HTTP servers behind the proxy: an sse or streamable-http server in a container (through
 * its port published on loopback) or a remote URL. Each client session gets its own
 * upstream MCP session, so the server sees every client as it would without the proxy,
 * while the proxy's middleware sees every message whatever the transport on either side.
 * The client's own headers (its token above all) are never passed upstream; configured
 * `header_forward` headers are.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Logger } from '../../log.js';
import { metadataGuardedLookup } from '../../net/addresses.js';
import { readBody } from '../../net/body.js';
import { isSignInState, type Backend, type UpstreamSession, type BackendState, type OpenOptions, type ClientSessionSink, type UpstreamCredentials } from '../core/backend.js';
import {
	cancellationOf,
	ErrorCode,
	errorResponse,
	isResponse,
	parseMessage,
	REVISION_2026,
	type JsonRpcMessage,
	type JsonRpcNotification,
	type JsonRpcRequest,
	type JsonRpcResponse,
	type RequestId,
} from '../core/jsonrpc.js';
import { outboundContext } from '../net/outbound.js';
import { headers2026, Server2026Dialect, type Wire2026 } from '../revisions/server2026.js';
import { CallTable } from '../core/callTable.js';
import { UpstreamAuthError } from '../core/upstreamAuthError.js';
import { tag, tagsOf } from '../core/tags.js';

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const PROBE_INTERVAL_MS = 250;
const RECONNECT_DELAY_MS = 1_000;
/** The longest `retry:` the proxy honours before resuming an upstream stream. */
const MAX_RETRY_MS = 30_000;

export interface HttpBackendOptions {
	readonly transport: 'sse' | 'streamable-http';
	/** Where the server answers now (a container's published port moves when it restarts). */
	readonly locate: () => Promise<URL>;
	/** Headers added to every upstream request (`header_forward`). */
	readonly headers: Readonly<Record<string, string>>;
	/** Refuse link-local and unspecified addresses after DNS resolution (remote URLs). */
	readonly guardAddresses: boolean;
	/** Wait until the server accepts connections before calling the backend ready. */
	readonly probe: boolean;
	readonly log: Logger;
	/** The OAuth client of a remote server (chain/upstreamAuth/): its token on every request, its answer to a 401 or 403. */
	readonly auth?: UpstreamCredentials;
}

export class HttpBackend implements Backend {
	state: BackendState = 'connecting';
	detail: string | undefined = 'locating the server';
	onStateChange?: (state: BackendState, detail: string | undefined) => void;

	private current: URL | undefined;
	private locating: Promise<URL> | undefined;
	private readonly httpAgent: HttpAgent;
	private readonly httpsAgent: HttpsAgent;
	private closed = false;

	constructor(readonly options: HttpBackendOptions) {
		const agentOptions = { keepAlive: true, maxSockets: 256, ...(options.guardAddresses ? { lookup: metadataGuardedLookup as never } : {}) };
		this.httpAgent = new HttpAgent(agentOptions);
		this.httpsAgent = new HttpsAgent(agentOptions);
		if (options.auth) options.auth.onStateChange = () => this.setState(this.connection, this.connectionDetail);
	}

	/** The state of the connection alone; `state` is the authenticator's while it cannot authenticate. */
	private connection: BackendState = 'connecting';
	private connectionDetail: string | undefined = 'locating the server';

	private setState(connection: BackendState, connectionDetail?: string): void {
		this.connection = connection;
		this.connectionDetail = connectionDetail;
		const auth = this.options.auth;
		const [state, detail] = auth && isSignInState(auth.state) ? [auth.state, auth.detail] : [connection, connectionDetail];
		if (this.state === state && this.detail === detail) return;
		this.state = state;
		this.detail = detail;
		this.onStateChange?.(state, detail);
	}

	async start(): Promise<void> {
		for (;;) {
			try {
				const url = await this.url();
				if (this.options.probe) await probe(url);
				this.setState('connected');
				return;
			} catch (error) {
				if (this.closed) return;
				this.locating = undefined;
				this.setState('connecting', (error as Error).message);
				await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
			}
		}
	}

	url(): Promise<URL> {
		if (this.current) return Promise.resolve(this.current);
		return (this.locating ??= this.options.locate().then((url) => (this.current = url)));
	}

	/** Whether the server still answers; when it does not, as a request failing to connect. */
	async check(): Promise<void> {
		if (this.closed || this.connection !== 'connected') return;
		try {
			await probe(await this.url());
		} catch (error) {
			if (!this.closed) this.failed(error as Error);
		}
	}

	/** A request failed to connect: find the server again next time. */
	failed(error: Error): void {
		this.current = undefined;
		this.locating = undefined;
		this.setState('disconnected', error.message);
	}

	succeeded(): void {
		if (this.connection !== 'connected') this.setState('connected');
	}

	/**
	 * Sends one HTTP request upstream with the configured headers and, for a server behind OAuth,
	 * the proxy's access token. A 401 or 403 the authenticator can cure (a refreshed token) is
	 * retried once; one it cannot is an UpstreamAuthError (the workload needs a sign-in).
	 */
	async send(method: string, url: URL, headers: OutgoingHttpHeaders, body: string | undefined, signal: AbortSignal): Promise<IncomingMessage> {
		const auth = this.options.auth;
		if (!auth) return this.transmit(method, url, headers, body, signal);
		for (let attempt = 0; ; attempt++) {
			const authorization = await auth.authorization();
			const response = await this.transmit(method, url, authorization ? { ...headers, Authorization: authorization } : headers, body, signal);
			const status = response.statusCode;
			if (status !== 401 && status !== 403) return response;
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
	async challenge(): Promise<{ status: number; challenge: string | undefined } | undefined> {
		try {
			const response = await this.transmit('GET', await this.url(), { Accept: 'text/event-stream' }, undefined, AbortSignal.timeout(5_000));
			response.destroy();
			const header = response.headers['www-authenticate'];
			return { status: response.statusCode ?? 0, challenge: Array.isArray(header) ? header.join(', ') : header };
		} catch {
			return undefined;
		}
	}

	/** One HTTP request. A kept-alive connection the server closed just as it was reused fails before anything reached the server: retried once. */
	private async transmit(method: string, url: URL, headers: OutgoingHttpHeaders, body: string | undefined, signal: AbortSignal, retried = false): Promise<IncomingMessage> {
		const https = url.protocol === 'https:';
		return new Promise((resolve, reject) => {
			const request = (https ? httpsRequest : httpRequest)(url, {
				method,
				agent: https ? this.httpsAgent : this.httpAgent,
				headers: { ...this.options.headers, ...outboundContext.headers?.(signal), ...headers, ...(body === undefined ? {} : { 'Content-Length': Buffer.byteLength(body) }) },
				signal,
			});
			request.once('response', resolve);
			request.once('error', (error: NodeJS.ErrnoException) => {
				if (!retried && request.reusedSocket && error.code === 'ECONNRESET' && !signal.aborted) {
					resolve(this.transmit(method, url, headers, body, signal, true));
				} else {
					reject(error);
				}
			});
			request.end(body);
		});
	}

	open(sink: ClientSessionSink, options: OpenOptions = {}): UpstreamSession {
		return this.options.transport === 'sse' ? new SseUpstreamSession(this, sink) : new StreamableUpstreamSession(this, sink, options);
	}

	/** Asked once, on the first 2026-07-28 request; asked again after an answer that settles nothing (no connection). */
	speaks2026(claims: Record<string, unknown>): Promise<boolean> {
		if (this.options.transport === 'sse') return Promise.resolve(false);
		return (this.discovered ??= this.discover2026(claims).catch(() => {
			this.discovered = undefined;
			return false;
		}));
	}

	private discovered: Promise<boolean> | undefined;

	private async discover2026(claims: Record<string, unknown>): Promise<boolean> {
		const session = new StreamableUpstreamSession(this, { deliver: () => undefined, ended: () => undefined }, { stateless2026: true });
		const answer = await session.request({ jsonrpc: '2.0', id: 'hangar-discover', method: 'server/discover', params: { _meta: claims } }, AbortSignal.timeout(30_000));
		if (tagsOf(answer)?.connectionFailure || answer.error?.code === ErrorCode.RequestTimeout) throw new Error(answer.error!.message);
		const versions = answer.result?.supportedVersions;
		return Array.isArray(versions) && versions.includes(REVISION_2026);
	}

	async close(): Promise<void> {
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
function probe(url: URL): Promise<void> {
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

/** An upstream answer's body as text; past the cap the connection is dropped. */
export function readText(response: IncomingMessage): Promise<string> {
	return readBody(response, MAX_BODY_BYTES, String, () => {
		response.destroy();
		return new Error('the server sent a body over 16 MiB');
	});
}

export interface SseEvent {
	event: string;
	data: string;
	/** The event's `id:`, to resume the stream after it. */
	id?: string;
	/** The `retry:` the server asked for, in ms. */
	retry?: number;
}

/** Parses an event stream (`event:`/`data:`/`id:`/`retry:` lines, blank-line separated; comments skipped). */
export async function* sseEvents(response: IncomingMessage): AsyncGenerator<SseEvent> {
	response.setEncoding('utf8');
	let buffered = '';
	let event = '';
	let data: string[] = [];
	let id: string | undefined;
	let retry: number | undefined;
	for await (const chunk of response as AsyncIterable<string>) {
		buffered += chunk;
		let newline = buffered.indexOf('\n');
		while (newline >= 0) {
			const line = buffered.slice(0, newline).replace(/\r$/, '');
			buffered = buffered.slice(newline + 1);
			newline = buffered.indexOf('\n');
			if (line === '') {
				if (data.length || id !== undefined || retry !== undefined) yield { event: event || 'message', data: data.join('\n'), id, retry };
				event = '';
				data = [];
				id = undefined;
				retry = undefined;
			} else if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
			else if (line.startsWith('event:')) event = line.slice(6).trim();
			else if (line.startsWith('id:')) id = line.slice(line[3] === ' ' ? 4 : 3);
			else if (line.startsWith('retry:') && /^\d+$/.test(line.slice(6).trim())) retry = Number(line.slice(6).trim());
		}
	}
}

/** The messages of an event stream. */
async function* messagesOf(response: IncomingMessage): AsyncGenerator<JsonRpcMessage> {
	for await (const event of sseEvents(response)) {
		const received = parseMessage(event.data);
		if (received) yield received;
	}
}

function connectionError(backend: HttpBackend, id: RequestId, error: Error): JsonRpcResponse {
	if (error instanceof UpstreamAuthError) {
		return errorResponse(id, ErrorCode.Unauthenticated, error.message, error.retryAfterSeconds === undefined ? undefined : { retryAfterSeconds: error.retryAfterSeconds });
	}
	backend.failed(error);
	const answer = errorResponse(id, ErrorCode.ConnectionClosed, `cannot reach the MCP server: ${error.message}`);
	// Refused, or the server not located at all (its container not running): nothing reached it.
	const code = (error as NodeJS.ErrnoException).code;
	tag(answer, { connectionFailure: { reached: code !== undefined && code !== 'ECONNREFUSED' } });
	return answer;
}

/** An upstream Streamable HTTP session: POST per message, plus a GET stream for server messages. */
/** What a replica needs to take a Streamable HTTP session over (`UpstreamSession.snapshot`). */
interface UpstreamSnapshot {
	readonly sessionId: string;
	readonly protocolVersion?: string;
}

function isUpstreamSnapshot(value: unknown): value is UpstreamSnapshot {
	return typeof (value as UpstreamSnapshot | undefined)?.sessionId === 'string';
}

class StreamableUpstreamSession implements UpstreamSession, Wire2026 {
	private sessionId: string | undefined;
	private protocolVersion: string | undefined;
	private readonly controller = new AbortController();
	/** Set when the server speaks only MCP 2026-07-28. */
	private dialect: Server2026Dialect | undefined;
	private clientStreaming = false;
	/** Follows the server's stream while this replica's client streams, when the session is replicated. */
	private listening: AbortController | undefined;

	constructor(
		private readonly backend: HttpBackend,
		private readonly sink: ClientSessionSink,
		private readonly options: OpenOptions = {},
	) {
		if (isUpstreamSnapshot(options.adopt)) {
			this.sessionId = options.adopt.sessionId;
			this.protocolVersion = options.adopt.protocolVersion;
		}
	}

	snapshot(): UpstreamSnapshot | undefined {
		// A 2026-07-28 server has no session to hand over: a replica's own discovery is as good.
		return this.sessionId && !this.dialect ? { sessionId: this.sessionId, protocolVersion: this.protocolVersion } : undefined;
	}

	get speaks2026(): boolean {
		return this.dialect !== undefined || this.options.stateless2026 === true;
	}

	private headers(kind: 'post' | 'get' | 'delete'): OutgoingHttpHeaders {
		const headers: Record<string, string> = {};
		if (kind === 'post') {
			headers['Content-Type'] = 'application/json';
			headers.Accept = 'application/json, text/event-stream';
		} else if (kind === 'get') {
			headers.Accept = 'text/event-stream';
		}
		if (this.sessionId) headers['Mcp-Session-Id'] = this.sessionId;
		if (this.protocolVersion) headers['Mcp-Protocol-Version'] = this.protocolVersion;
		return headers;
	}

	async request(message: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		if (this.dialect) return this.dialect.request(message, signal);
		if (this.options.stateless2026) return this.exchange(message, signal, headers2026(message.method, message.params));
		const cancel = () => void this.post(cancellationOf(message.id, signal.reason));
		signal.addEventListener('abort', cancel, { once: true });
		try {
			const answer = await this.exchange(message, signal);
			if (message.method === 'initialize' && answer.error && !signal.aborted) return (await this.discover(message, signal)) ?? answer;
			return answer;
		} finally {
			signal.removeEventListener('abort', cancel);
		}
	}

	/** The server may speak only MCP 2026-07-28: then this client's session is carried in that revision. */
	private async discover(initialize: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse | undefined> {
		const discovered = await Server2026Dialect.discover(this, this.sink, initialize, signal);
		this.dialect = discovered?.dialect;
		this.dialect?.streaming(this.clientStreaming);
		return discovered?.answer;
	}

	/** A request answered by a stream of messages (`subscriptions/listen`), or the server's refusal of it. */
	async open(message: JsonRpcRequest, signal: AbortSignal, headers: Record<string, string>): Promise<AsyncIterable<JsonRpcMessage> | JsonRpcResponse> {
		let response: IncomingMessage;
		try {
			response = await this.backend.send('POST', await this.backend.url(), { ...this.headers('post'), ...headers }, JSON.stringify(message), signal);
		} catch (error) {
			return signal.aborted ? errorResponse(message.id, ErrorCode.RequestTimeout, 'request cancelled') : connectionError(this.backend, message.id, error as Error);
		}
		if (!String(response.headers['content-type'] ?? '').includes('text/event-stream')) {
			const text = await readText(response).catch(() => '');
			const received = parseMessage(text);
			return received && isResponse(received) && received.error ? received : httpError(message.id, response, text);
		}
		return messagesOf(response);
	}

	async exchange(message: JsonRpcRequest, signal: AbortSignal, extraHeaders?: Record<string, string>): Promise<JsonRpcResponse> {
		let response: IncomingMessage;
		try {
			const headers = extraHeaders ? { ...this.headers('post'), ...extraHeaders } : this.headers('post');
			response = await this.backend.send('POST', await this.backend.url(), headers, JSON.stringify(message), signal);
		} catch (error) {
			if (signal.aborted) return errorResponse(message.id, ErrorCode.RequestTimeout, 'request cancelled');
			return connectionError(this.backend, message.id, error as Error);
		}
		this.backend.succeeded();
		try {
			const answer = await this.answerOf(message, response, signal);
			if (message.method === 'initialize' && answer.result) {
				this.sessionId = (response.headers['mcp-session-id'] as string | undefined) ?? this.sessionId;
				this.protocolVersion = answer.result.protocolVersion as string | undefined;
			}
			return answer;
		} catch (error) {
			if (signal.aborted) return errorResponse(message.id, ErrorCode.RequestTimeout, 'request cancelled');
			return errorResponse(message.id, ErrorCode.InternalError, `the MCP server's answer could not be read: ${(error as Error).message}`);
		}
	}

	private async answerOf(message: JsonRpcRequest, response: IncomingMessage, signal: AbortSignal): Promise<JsonRpcResponse> {
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
			let lastEventId: string | undefined;
			let retryMs = 0;
			let stream: IncomingMessage | undefined = response;
			while (stream) {
				for await (const event of sseEvents(stream)) {
					if (event.id !== undefined) lastEventId = event.id;
					if (event.retry !== undefined) retryMs = Math.min(event.retry, MAX_RETRY_MS);
					const received = parseMessage(event.data);
					if (!received) continue;
					if (isResponse(received) && received.id === message.id) {
						stream.destroy();
						return received;
					}
					this.sink.deliver(received, message.id);
				}
				if (lastEventId === undefined || signal.aborted) break;
				await new Promise((resolve) => setTimeout(resolve, retryMs));
				stream = await this.resumeStream(lastEventId, signal);
			}
			return errorResponse(message.id, ErrorCode.InternalError, 'the MCP server closed the stream without answering');
		}
		const text = await readText(response);
		const received = parseMessage(text);
		if (received && isResponse(received) && status !== 401 && status !== 403) {
			const answer: JsonRpcResponse = { ...received, id: message.id };
			// A 2026-07-28 server's refusal (400, 404) reaches its 2026-07-28 client with its status.
			return this.options.stateless2026 && status >= 400 && status < 500 ? tag(answer, { refusal: { status } }) : answer;
		}
		return httpError(message.id, response, text);
	}

	/** A GET resuming a stream after `lastEventId`; undefined when the server will not. */
	private async resumeStream(lastEventId: string, signal: AbortSignal): Promise<IncomingMessage | undefined> {
		const response = await this.backend.send('GET', await this.backend.url(), { ...this.headers('get'), 'Last-Event-ID': lastEventId }, undefined, signal);
		if (response.statusCode === 200 && String(response.headers['content-type'] ?? '').includes('text/event-stream')) return response;
		response.resume();
		return undefined;
	}

	send(message: JsonRpcNotification | JsonRpcResponse): Promise<void> {
		if (this.dialect) {
			this.dialect.send(message);
			return Promise.resolve();
		}
		return this.post(message);
	}

	private async post(message: JsonRpcNotification | JsonRpcResponse): Promise<void> {
		try {
			const response = await this.backend.send('POST', await this.backend.url(), this.headers('post'), JSON.stringify(message), this.controller.signal);
			response.resume();
			if ('method' in message && message.method === 'notifications/initialized' && !this.options.replicated) void this.listen(this.controller.signal);
		} catch (error) {
			if (!this.controller.signal.aborted) this.backend.options.log.warn(`could not relay ${'method' in message ? message.method : 'a response'}: ${(error as Error).message}`);
		}
	}

	/** The GET stream of server-initiated messages, reopened until `signal` aborts. */
	private async listen(signal: AbortSignal): Promise<void> {
		while (!signal.aborted) {
			try {
				const response = await this.backend.send('GET', await this.backend.url(), this.headers('get'), undefined, signal);
				if (response.statusCode !== 200) {
					response.resume();
					return; // 405: the server offers no such stream
				}
				for await (const event of sseEvents(response)) {
					const received = parseMessage(event.data);
					if (received) this.sink.deliver(received);
				}
			} catch {
				if (signal.aborted) return;
			}
			await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
		}
	}

	streaming(open: boolean): void {
		this.clientStreaming = open;
		this.dialect?.streaming(open);
		if (!this.options.replicated || this.dialect || !this.sessionId) return;
		// One replica at a time holds the client's stream, and so the server's.
		this.listening?.abort();
		this.listening = undefined;
		if (open) {
			this.listening = new AbortController();
			void this.listen(AbortSignal.any([this.controller.signal, this.listening.signal]));
		}
	}

	release(): void {
		this.controller.abort();
		this.dialect?.close();
	}

	close(): void {
		this.controller.abort();
		this.dialect?.close();
		if (!this.sessionId) return;
		const headers = this.headers('delete');
		void this.backend
			.url()
			.then((url) => this.backend.send('DELETE', url, headers, undefined, AbortSignal.timeout(5_000)))
			.then((response) => response.resume())
			.catch(() => undefined);
	}
}

/** An upstream legacy SSE session: one GET /sse stream, messages POSTed to its endpoint. */
class SseUpstreamSession implements UpstreamSession {
	private readonly controller = new AbortController();
	private readonly endpoint: Promise<URL>;
	private readonly pending = new CallTable<(response: JsonRpcResponse) => void>();

	constructor(
		private readonly backend: HttpBackend,
		private readonly sink: ClientSessionSink,
	) {
		this.endpoint = this.connect();
		this.endpoint.catch(() => undefined);
	}

	private connect(): Promise<URL> {
		return new Promise<URL>((resolve, reject) => {
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
							if (endpoint.origin !== url.origin) throw new Error(`the MCP server sent an endpoint on another origin (${endpoint.origin})`);
							announced = true;
							resolve(endpoint);
							continue;
						}
						const received = parseMessage(event.data);
						if (!received) continue;
						const id = isResponse(received) ? received.id : null;
						const waiting = id === null ? undefined : this.pending.get(id);
						if (waiting) {
							this.pending.delete(id!);
							waiting(received as JsonRpcResponse);
						} else {
							this.sink.deliver(received);
						}
					}
					throw new Error('the MCP server closed its event stream');
				} catch (error) {
					if (!announced) reject(error);
					if (this.controller.signal.aborted) return;
					if (!announced && !(error instanceof UpstreamAuthError)) this.backend.failed(error as Error);
					for (const [id, waiting] of this.pending.entries()) waiting(errorResponse(id, ErrorCode.ConnectionClosed, (error as Error).message));
					this.pending.clear();
					this.sink.ended((error as Error).message);
				}
			})();
		});
	}

	async request(message: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		let endpoint: URL;
		try {
			endpoint = await this.endpoint;
		} catch (error) {
			return connectionError(this.backend, message.id, error as Error);
		}
		const answer = new Promise<JsonRpcResponse>((resolve) => this.pending.set(message.id, resolve));
		const onAbort = () => {
			const waiting = this.pending.get(message.id);
			this.pending.delete(message.id);
			waiting?.(errorResponse(message.id, ErrorCode.RequestTimeout, 'request cancelled'));
			void this.send(cancellationOf(message.id, signal.reason));
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
		} catch (error) {
			this.pending.delete(message.id);
			if (signal.aborted) return errorResponse(message.id, ErrorCode.RequestTimeout, 'request cancelled');
			return connectionError(this.backend, message.id, error as Error);
		} finally {
			signal.removeEventListener('abort', onAbort);
		}
	}

	send(message: JsonRpcNotification | JsonRpcResponse): Promise<void> {
		return this.endpoint
			.then((endpoint) => this.backend.send('POST', endpoint, { 'Content-Type': 'application/json' }, JSON.stringify(message), this.controller.signal))
			.then((response) => void response.resume())
			.catch((error: Error) => {
				if (!this.controller.signal.aborted) this.backend.options.log.warn(`could not relay a message: ${error.message}`);
			});
	}

	close(): void {
		this.controller.abort();
	}
}

/** The answer to a request the server refused with an HTTP error; a 401 or 403 is marked as such. */
function httpError(id: RequestId, response: IncomingMessage, text: string): JsonRpcResponse {
	const status = response.statusCode ?? 0;
	const answer = errorResponse(id, ErrorCode.InternalError, `the MCP server answered HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`);
	if (status !== 401 && status !== 403) return answer;
	const challenge = response.headers['www-authenticate'];
	return tag(answer, { denial: { status, challenge: Array.isArray(challenge) ? challenge.join(', ') : challenge } });
}
