/**
 * The proxy's two middleware chains, each composed once at start-up.
 *
 * - HTTP middleware sees every HTTP request before MCP parsing (audit, authentication, …) and
 *   may answer it itself.
 * - MCP middleware sees every JSON-RPC request a client sends, after parsing, and its response
 *   (authorization, rate limiting, tool filtering, the request timeout, …); it may answer
 *   without calling `next`, or change the request or the response.
 *
 * - Notice middleware sees every other client message, notifications and the client's
 *   responses to server requests, before it goes on (audit, authorization, rate limiting);
 *   it may refuse it.
 *
 * Design order, outermost first: audit → authentication → MCP parsing → authorization →
 * rate limit → tool filter/override → tool pinning → guardrails → webhooks → timeout → backend.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, RequestId } from '../core/jsonrpc.js';
import type { CallOrigin, ShownTool, UpstreamSession } from '../core/backend.js';

/** Who is calling: the claims of a verified token (never the token itself). */
export interface Identity {
	/** The token's `sub`. */
	readonly subject: string;
	readonly claims: Readonly<Record<string, unknown>>;
}

export interface HttpExchange {
	readonly request: IncomingMessage;
	readonly response: ServerResponse;
	/** The request's path, without the query. */
	readonly path: string;
	/** The request's URL, parsed when asked for. */
	readonly url: URL;
	/** Who is calling, once an authentication middleware has said so. */
	identity?: Identity;
	/** The JSON-RPC messages of the body, once a front has parsed them. */
	messages?: readonly JsonRpcMessage[];
	/**
	 * The request's connection, when it asked to upgrade it (only the link may: fronts/link.ts),
	 * with what came after the request's head put back to be read first.
	 */
	readonly upgrade?: Socket;
}

export type HttpHandler = (exchange: HttpExchange) => Promise<void>;
export type HttpMiddleware = (exchange: HttpExchange, next: HttpHandler) => Promise<void>;

/** One client request on its way to the server. */
export interface McpCall {
	readonly request: JsonRpcRequest;
	/** The client's session id and its connection to the backend. */
	readonly session: {
		readonly id: string;
		readonly backend: UpstreamSession;
		/** The client's `initialize` parameters, once known (a session another replica opened brings them). */
		readonly handshake?: Record<string, unknown>;
		/** Tells `watcher` of the server's progress on call `id`, its requests to the client and their answers, until `unwatch`. */
		watch?(id: RequestId, watcher: CallWatcher): void;
		unwatch?(id: RequestId): void;
		/** Sends a notification or response to the server, noting answers to its requests (see `watch`). */
		relay?(message: JsonRpcNotification | JsonRpcResponse): void | Promise<void>;
	};
	/** Aborted when the client goes away or the call is given up. */
	readonly signal: AbortSignal;
	readonly exchange: HttpExchange;
	/**
	 * Called when the call is handed to the server. The legacy SSE front acknowledges a POST
	 * only then, so that a call refused before (a refusal, core/tags.ts) can get its own HTTP status.
	 */
	readonly accepted?: () => void;
	/** The call's span, when telemetry traces the workload: what the upstream span hangs under. */
	readonly span?: CallSpan;
	/**
	 * A call a backend made back through the chain for its client's (core/backend.ts `CallOrigin`):
	 * the tool it calls as the backend lists it, whose annotations authorization reads as it would
	 * have read them in a list the client saw.
	 */
	readonly tool?: InnerTool;
	/** Whether the caller may call a tool, as authorization decides: what a backend that calls back shows of its tools. */
	readonly mayCall?: (name: string, annotations: unknown) => boolean;
	/** How the caller is shown a tool (the tool filter's names and descriptions), undefined when hidden: what a backend that calls back shows of its tools. */
	readonly showTool?: (tool: ShownTool) => ShownTool | undefined;
}

/** What a backend knows of a tool it calls for its client's call. */
export interface InnerTool {
	readonly annotations?: unknown;
}

/**
 * `call` with another request, signal or span, for a middleware to hand on. Spelled out rather
 * than spread: V8 moves the objects a spread makes, when they outlive an await as a call does,
 * into the old generation (measured in process: about 140 MB promoted and 12–19 full
 * collections per million calls, 2.7 µs a call), where the same object written as a literal
 * dies young.
 */
export function callWith(
	call: McpCall,
	changes: { readonly request?: JsonRpcRequest; readonly signal?: AbortSignal; readonly span?: CallSpan; readonly mayCall?: McpCall['mayCall']; readonly showTool?: McpCall['showTool'] },
): McpCall {
	return {
		request: changes.request ?? call.request,
		session: call.session,
		signal: changes.signal ?? call.signal,
		exchange: call.exchange,
		accepted: call.accepted,
		span: changes.span ?? call.span,
		tool: call.tool,
		mayCall: changes.mayCall ?? call.mayCall,
		showTool: changes.showTool ?? call.showTool,
	};
}

/** A call's trace span, as telemetry marks the call (telemetry/spanRecorder.ts). */
export interface CallSpan {
	/** Whether the span is recorded and exported. */
	readonly sampled: boolean;
	/** `traceparent` (and `tracestate`) that put a request made for the call in its trace. */
	readonly headers: Readonly<Record<string, string>>;
}

/** What the server does about one call, as the request timeout needs to know. */
export type CallActivity = 'progress' | 'asked' | 'answered';

/** Hears what the server does about a call (an object, not a closure: one is made per call). */
export interface CallWatcher {
	activity(kind: CallActivity): void;
}

export type McpHandler = (call: McpCall) => Promise<JsonRpcResponse>;
export type McpMiddleware = (call: McpCall, next: McpHandler) => Promise<JsonRpcResponse>;

export function composeHttp(middlewares: readonly HttpMiddleware[], terminal: HttpHandler): HttpHandler {
	return middlewares.reduceRight<HttpHandler>((next, middleware) => (exchange) => middleware(exchange, next), terminal);
}

export function composeMcp(middlewares: readonly McpMiddleware[], terminal: McpHandler): McpHandler {
	return middlewares.reduceRight<McpHandler>((next, middleware) => (call) => middleware(call, next), terminal);
}

/**
 * The end of the MCP chain: the session's backend answers. `chain` is the whole chain, which
 * the calls the backend makes for this one go through again (core/backend.ts `CallOrigin`).
 */
export function forwardToBackend(chain: () => McpHandler): McpHandler {
	return (call) => {
		call.accepted?.();
		const { backend } = call.session;
		// Only a backend that calls back gets the way in: the others' calls make no object for it.
		return backend.request(call.request, call.signal, backend.reenters ? new Reentry(chain, call) : undefined);
	};
}

/** A call's way back into the chain: its caller's session, exchange and span, another request. */
class Reentry implements CallOrigin {
	constructor(
		private readonly chain: () => McpHandler,
		private readonly call: McpCall,
	) {}

	reenter(request: JsonRpcRequest, signal: AbortSignal, tool?: InnerTool): Promise<JsonRpcResponse> {
		const { session, exchange, span } = this.call;
		return this.chain()({ request, session, signal, exchange, span, tool });
	}

	mayCall(name: string, annotations: unknown): boolean {
		return this.call.mayCall?.(name, annotations) ?? true;
	}

	showTool(tool: ShownTool): ShownTool | undefined {
		return this.call.showTool ? this.call.showTool(tool) : tool;
	}
}

/**
 * Sees each message a server sends toward the client (its requests, notifications, and the
 * answers it sends on a stream), before the client session routes it: the message to route,
 * changed or not, or undefined to stop it (having told the server itself, when it asked).
 */
export type OutboundFilter = (message: JsonRpcMessage, session: McpCall['session']) => JsonRpcMessage | undefined;

/** A client notification, or the client's response to a server request, on its way to the server. */
export interface McpNotice {
	readonly message: JsonRpcNotification | JsonRpcResponse;
	readonly session: McpCall['session'];
	readonly exchange: HttpExchange;
}

/** Resolves undefined once the message is on its way, or with the error (a refusal, core/tags.ts) that stopped it. */
export type NoticeHandler = (notice: McpNotice) => Promise<JsonRpcResponse | undefined>;
export type NoticeMiddleware = (notice: McpNotice, next: NoticeHandler) => Promise<JsonRpcResponse | undefined>;

export function composeNotices(middlewares: readonly NoticeMiddleware[], terminal: NoticeHandler): NoticeHandler {
	return middlewares.reduceRight<NoticeHandler>((next, middleware) => (notice) => middleware(notice, next), terminal);
}

/**
 * The end of the notice chain: the message goes to the server. Awaited, so that the server
 * has it (`notifications/initialized` above all) before the client learns it may go on.
 */
export const forwardNotice: NoticeHandler = async (notice) => {
	await (notice.session.relay ? notice.session.relay(notice.message) : notice.session.backend.send(notice.message));
	return undefined;
};
