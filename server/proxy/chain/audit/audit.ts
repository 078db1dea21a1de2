/**
 * Audit: one event per MCP call, and one per HTTP request that carried none (a refused token,
 * a notification, an event stream opened…). The HTTP side is the outermost middleware, so
 * requests that authentication turns away (401) are logged too; the MCP side is the first of
 * its chain, so it sees what authorization and rate limiting answered (403, 429).
 */
import type { AuditConfig } from '../../../../protocol/runConfig.js';
import { type HttpExchange, type HttpMiddleware, type McpCall, type McpMiddleware, type NoticeMiddleware } from '../chain.js';
import type { JsonRpcResponse } from '../../core/jsonrpc.js';
import { auditEvent, capture, eventTypeOf, outcomeOf, targetOf, type AuditOutcome, type ClientInfo, type EventFields } from './auditEvent.js';
import { DEFAULT_MAX_DATA_SIZE, type AuditLog } from './auditLog.js';
import { tagsOf } from '../../core/tags.js';

export class Auditor {
	/** Exchanges whose calls the MCP side logged. */
	private readonly audited = new WeakSet<HttpExchange>();
	/** Client name and version of each session, from its `initialize`. */
	private readonly clients = new WeakMap<object, ClientInfo>();
	/** Guardrails' redacted copies of what messages carried (see `screen`). */
	private readonly screened = new WeakMap<object, unknown>();
	private readonly maxDataSize: number;

	constructor(
		private readonly log: AuditLog,
		private readonly config: AuditConfig,
		private readonly component: string,
		/** Paths of the legacy SSE transport, to tell transports apart. */
		private readonly ssePaths: ReadonlySet<string>,
	) {
		this.maxDataSize = config.maxDataSize ?? DEFAULT_MAX_DATA_SIZE;
	}

	readonly http: HttpMiddleware = async (exchange, next) => {
		const started = performance.now();
		let failed = false;
		try {
			await next(exchange);
		} catch (error) {
			failed = true;
			throw error;
		} finally {
			if (!this.audited.has(exchange)) this.httpEvent(exchange, performance.now() - started, failed);
		}
	};

	readonly mcp: McpMiddleware = async (call, next) => {
		this.audited.add(call.exchange);
		const { method, params } = call.request;
		if (method === 'initialize') this.clients.set(call.session, clientInfoOf(params));
		const type = eventTypeOf(method);
		if (!this.log.wants(type)) return next(call);
		const started = performance.now();
		let response: JsonRpcResponse;
		try {
			response = await next(call);
		} catch (error) {
			this.mcpEvent(call, type, undefined, performance.now() - started);
			throw error;
		}
		this.mcpEvent(call, type, response, performance.now() - started);
		return response;
	};

	/** Notifications and responses: one event each, `mcp_notification` (or the method's own type) or `mcp_response`. */
	readonly notice: NoticeMiddleware = async (notice, next) => {
		this.audited.add(notice.exchange);
		const { message, exchange, session } = notice;
		const method = 'method' in message ? message.method : undefined;
		const type = method ? eventTypeOf(method) : 'mcp_response';
		if (!this.log.wants(type)) return next(notice);
		const started = performance.now();
		let refused: JsonRpcResponse | undefined;
		let failed = false;
		try {
			refused = await next(notice);
		} catch (error) {
			failed = true;
			throw error;
		} finally {
			const data: Record<string, unknown> = {};
			if (this.config.includeRequestData) this.put(data, 'request', this.screened.get(message) ?? (method ? ('params' in message ? message.params ?? {} : {}) : (message as JsonRpcResponse).result ?? (message as JsonRpcResponse).error ?? {}));
			this.sessionEvent(exchange, session, {
				type,
				target: method ? targetOf(method, 'params' in message ? message.params : undefined, exchange.path) : { type: 'server', endpoint: exchange.path },
				outcome: failed ? 'error' : refused ? outcomeOf(tagsOf(refused)?.refusal?.status ?? 400) : 'success',
				durationMs: performance.now() - started,
				data: Object.keys(data).length ? data : undefined,
			});
		}
		return refused;
	};

	/** An event of the proxy's own about a call (tool pinning's drift), when its type is kept. */
	callEvent(call: McpCall, type: string, outcome: AuditOutcome, extra: Readonly<Record<string, unknown>>): void {
		this.messageEvent(call.exchange, call.session, call.request, type, outcome, extra);
	}

	/** The same about any client message with a method (a call, or a notification). */
	messageEvent(exchange: HttpExchange, session: McpCall['session'], message: { readonly method: string; readonly params?: Record<string, unknown> }, type: string, outcome: AuditOutcome, extra: Readonly<Record<string, unknown>>): void {
		if (!this.log.wants(type)) return;
		this.sessionEvent(exchange, session, { type, target: targetOf(message.method, message.params, exchange.path), outcome, durationMs: 0, extra });
	}

	/** The same about a message the server sent toward the client (a guardrail's finding in its request or notification): no HTTP request of the client's. */
	serverEvent(session: McpCall['session'], message: { readonly method: string; readonly params?: Record<string, unknown> }, type: string, outcome: AuditOutcome, extra: Readonly<Record<string, unknown>>): void {
		if (!this.log.wants(type)) return;
		this.log.write(
			auditEvent({
				type,
				component: this.component,
				request: undefined,
				identity: undefined,
				client: this.clients.get(session) ?? (session.handshake ? clientInfoOf(session.handshake) : undefined),
				sessionId: session.id,
				transport: 'streamable-http',
				target: targetOf(message.method, message.params, ''),
				outcome,
				durationMs: 0,
				extra,
			}),
		);
	}

	/**
	 * What to write instead of `message`'s params or `response`'s body when the audit keeps
	 * request or response data: a guardrail's redacted copy of one that holds a secret, even
	 * when the guardrail let it through as it was (`audit`) or blocked it.
	 */
	screen(message: object, written: unknown): void {
		this.screened.set(message, written);
	}

	private transportOf(exchange: HttpExchange): 'streamable-http' | 'sse' {
		return this.ssePaths.has(exchange.path) ? 'sse' : 'streamable-http';
	}

	private mcpEvent(call: McpCall, type: string, response: JsonRpcResponse | undefined, durationMs: number): void {
		const { request, exchange, session } = call;
		let outcome: AuditOutcome = response ? outcomeOf(tagsOf(response)?.refusal?.status ?? 200) : 'error';
		if (outcome === 'success' && response?.error && this.config.detectApplicationErrors !== false) outcome = 'application_error';
		const data: Record<string, unknown> = {};
		const extra: Record<string, unknown> = {};
		if (this.config.includeRequestData) this.put(data, 'request', this.screened.get(request) ?? request.params ?? {});
		if (this.config.includeResponseData && response) extra.response_size_bytes = this.put(data, 'response', this.screened.get(response) ?? response.error ?? response.result ?? {});
		this.sessionEvent(exchange, session, {
			type,
			target: targetOf(request.method, request.params, exchange.path),
			outcome,
			durationMs,
			extra,
			data: Object.keys(data).length ? data : undefined,
		});
	}

	/** Writes an event of a message in a client session: who, which session and transport come from the exchange. */
	private sessionEvent(exchange: HttpExchange, session: McpCall['session'], fields: Pick<EventFields, 'type' | 'target' | 'outcome' | 'durationMs' | 'extra' | 'data'>): void {
		this.log.write(
			auditEvent({
				...fields,
				component: this.component,
				request: exchange.request,
				identity: exchange.identity,
				// A session another replica opened brings its handshake along.
				client: this.clients.get(session) ?? (session.handshake ? clientInfoOf(session.handshake) : undefined),
				sessionId: session.id,
				transport: this.transportOf(exchange),
			}),
		);
	}

	private httpEvent(exchange: HttpExchange, durationMs: number, failed: boolean): void {
		const { request, response } = exchange;
		const status = failed ? 500 : response.statusCode;
		const first = exchange.messages?.[0];
		const mcpMethod = first && 'method' in first ? first.method : undefined;
		// A GET that an MCP endpoint answers 200 has opened an event stream.
		const stream = request.method === 'GET' && status === 200;
		const type = mcpMethod ? eventTypeOf(mcpMethod) : stream ? 'sse_connection' : 'http_request';
		if (!this.log.wants(type)) return;
		this.log.write(
			auditEvent({
				type,
				component: this.component,
				request,
				identity: exchange.identity,
				client: undefined,
				sessionId: headerOf(request.headers['mcp-session-id']) ?? exchange.url.searchParams.get('session_id') ?? undefined,
				transport: this.transportOf(exchange),
				target: mcpMethod ? targetOf(mcpMethod, first && 'params' in first ? first.params : undefined, exchange.path) : { type: 'server', endpoint: exchange.path },
				outcome: outcomeOf(status),
				durationMs,
				extra: { http_method: request.method, http_status: status },
			}),
		);
	}

	/** Puts `value` in `data[key]`, cut to the size limit; returns its full size in bytes. */
	private put(data: Record<string, unknown>, key: string, value: unknown): number {
		const captured = capture(value, this.maxDataSize);
		data[key] = captured.value;
		if (captured.truncated) data[`${key}_truncated`] = true;
		return captured.bytes;
	}
}

function headerOf(value: string | string[] | undefined): string | undefined {
	return typeof value === 'string' && value ? value : undefined;
}

function clientInfoOf(params: Record<string, unknown> | undefined): ClientInfo {
	const info = params?.clientInfo as { name?: unknown; version?: unknown } | undefined;
	return {
		name: typeof info?.name === 'string' ? info.name : undefined,
		version: typeof info?.version === 'string' ? info.version : undefined,
	};
}
