/**
 * MCP 2026-07-28 clients in front of servers of earlier revisions. The 2026-07-28 revision is
 * stateless: no `initialize`, no `Mcp-Session-Id`; every request carries its revision, the
 * client's capabilities and (optionally) its identity in `_meta`, `server/discover` describes
 * the server, and every result says `resultType`.
 *
 * The proxy keeps, per caller and capability set, one legacy session it opened itself with a
 * 2025-11-25 `initialize` (through the MCP middleware chain, like any client's) and answers
 * `server/discover` from that handshake. When the server turned out to speak 2026-07-28 itself,
 * each request reaches it as the client sent it (its claims, its input rounds, its result);
 * otherwise it goes without the 2026 `_meta` keys and its result is stamped. Either way the
 * server's messages about the request (progress, logs) stream into its reply. Server-initiated
 * requests (sampling, elicitation, roots) cannot reach a stateless client, so those
 * capabilities are not declared to a legacy server: it behaves as it does for a client without
 * them.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { HttpExchange, McpHandler, NoticeHandler } from './chain.js';
import { canonicalJson, decodeHeaderValue, ErrorCode, errorResponse, mcpNameOf, MODERN_META, MODERN_REVISION, SUPPORTED_PROTOCOL_VERSIONS, type JsonRpcRequest, type JsonRpcResponse } from './jsonrpc.js';
import type { ClientSession, SessionRegistry } from './session.js';
import type { ReplyStream } from './sse.js';

const { protocolVersion: PROTOCOL_VERSION_KEY, clientCapabilities: CLIENT_CAPABILITIES_KEY, clientInfo: CLIENT_INFO_KEY, serverInfo: SERVER_INFO_KEY } = MODERN_META;
/** Results a 2026-07-28 client may cache: they carry `ttlMs` and `cacheScope`. */
const CACHEABLE = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read', 'server/discover']);
/** Capabilities that let a server send requests to the client, which a stateless client cannot receive. */
const SERVER_REQUEST_CAPABILITIES = ['sampling', 'elicitation', 'roots'];

/** The 2026-07-28 revision a request claims in its `_meta`, if it claims one. */
export function isModernRequest(request: JsonRpcRequest): boolean {
	const meta = request.params?._meta as Record<string, unknown> | undefined;
	return meta?.[PROTOCOL_VERSION_KEY] === MODERN_REVISION;
}

/**
 * Why a 2026-07-28 request's standard headers disagree with its body, which the revision
 * requires a server to refuse (HTTP 400, `HeaderMismatch`); undefined when they agree.
 */
export function headerMismatch(headers: IncomingHttpHeaders, request: JsonRpcRequest): string | undefined {
	const version = headers['mcp-protocol-version'];
	if (version === undefined) return 'the MCP-Protocol-Version header is required';
	if (typeof version !== 'string' || version.trim() !== MODERN_REVISION) return `the MCP-Protocol-Version header does not match the request's revision ${MODERN_REVISION}`;
	const method = headers['mcp-method'];
	if (typeof method !== 'string') return 'the Mcp-Method header is required';
	if (method.trim() !== request.method) return `the Mcp-Method header does not match the method ${request.method}`;
	const name = mcpNameOf(request.method, request.params);
	if (name === undefined) return undefined;
	const header = headers['mcp-name'];
	if (typeof header !== 'string') return `the Mcp-Name header is required for ${request.method}`;
	if (decodeHeaderValue(header) !== name) return `the Mcp-Name header does not match the request's ${request.method === 'resources/read' ? 'uri' : 'name'}`;
	return undefined;
}

interface LegacySession {
	readonly session: ClientSession;
	readonly handshake: Record<string, unknown>;
}

export class StatelessBridge {
	/** Legacy sessions by caller and declared capabilities. */
	private readonly legacy = new Map<string, Promise<LegacySession | JsonRpcResponse>>();
	private nextId = 1;

	constructor(
		private readonly sessions: SessionRegistry,
		private readonly handle: McpHandler,
		private readonly notify: NoticeHandler,
	) {}

	/** Answers one 2026-07-28 request; the server's messages about it go to `reply` first. */
	async answer(exchange: HttpExchange, request: JsonRpcRequest, reply: ReplyStream): Promise<JsonRpcResponse> {
		const meta = (request.params?._meta ?? {}) as Record<string, unknown>;
		const capabilities = meta[CLIENT_CAPABILITIES_KEY];
		if (typeof capabilities !== 'object' || capabilities === null) {
			return errorResponse(request.id, ErrorCode.InvalidParams, `Invalid params: _meta["${CLIENT_CAPABILITIES_KEY}"] is required on protocol revision ${MODERN_REVISION}`);
		}
		const legacy = await this.sessionFor(exchange, capabilities as Record<string, unknown>, meta[CLIENT_INFO_KEY]);
		if (!('session' in legacy)) return { ...legacy, id: request.id };
		if (request.method === 'server/discover') return this.discovered(request, legacy.handshake);

		// Another stateless caller may use the same id on the same legacy session: forwarded under one of the proxy's.
		const id = `hangar-${this.nextId++}`;
		const { session } = legacy;
		const params = session.backend.speaksModern ? request.params : withoutClaims(request.params ?? {}, meta);
		session.track(id, reply);
		try {
			const response = await this.handle({ request: { jsonrpc: '2.0', id, method: request.method, params }, session, signal: session.signal, exchange });
			return this.stamped(request, { ...response, id: request.id }, legacy.handshake);
		} finally {
			session.untrack(id);
		}
	}

	private sessionFor(exchange: HttpExchange, declared: Record<string, unknown>, clientInfo: unknown): Promise<LegacySession | JsonRpcResponse> {
		const capabilities = Object.fromEntries(Object.entries(declared).filter(([name]) => !SERVER_REQUEST_CAPABILITIES.includes(name)));
		const key = `${exchange.identity?.subject ?? ''}\n${canonicalJson(capabilities)}`;
		let opened = this.legacy.get(key);
		if (!opened) {
			opened = this.open(exchange, capabilities, clientInfo);
			this.legacy.set(key, opened);
			// A failed handshake, or a session that ended, is opened again next time.
			void opened.then((result) => {
				if (!('session' in result)) this.legacy.delete(key);
				else result.session.signal.addEventListener('abort', () => this.legacy.delete(key), { once: true });
			});
		}
		return opened;
	}

	private async open(exchange: HttpExchange, capabilities: Record<string, unknown>, clientInfo: unknown): Promise<LegacySession | JsonRpcResponse> {
		const session = this.sessions.create('streamable', exchange.identity?.subject);
		const initialize: JsonRpcRequest = {
			jsonrpc: '2.0',
			id: `hangar-${this.nextId++}`,
			method: 'initialize',
			params: {
				protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.at(-1),
				capabilities,
				clientInfo: typeof clientInfo === 'object' && clientInfo !== null ? clientInfo : { name: 'mcp-client', version: '0' },
			},
		};
		const answer = await this.handle({ request: initialize, session, signal: session.signal, exchange });
		if (!answer.result) {
			session.close();
			return answer;
		}
		const refused = await this.notify({ message: { jsonrpc: '2.0', method: 'notifications/initialized' }, session, exchange });
		if (refused) {
			session.close();
			return refused;
		}
		return { session, handshake: answer.result };
	}

	private discovered(request: JsonRpcRequest, handshake: Record<string, unknown>): JsonRpcResponse {
		// Tasks are an extension in 2026-07-28, negotiated otherwise: the legacy declaration is not carried over.
		const { tasks: _tasks, ...capabilities } = (handshake.capabilities ?? {}) as Record<string, unknown>;
		const result: Record<string, unknown> = { supportedVersions: [MODERN_REVISION], capabilities };
		if (typeof handshake.instructions === 'string') result.instructions = handshake.instructions;
		return this.stamped(request, { jsonrpc: '2.0', id: request.id, result }, handshake);
	}

	/** A result as 2026-07-28 has it: `resultType`, cache fields where required, the server's identity in `_meta`. */
	private stamped(request: JsonRpcRequest, response: JsonRpcResponse, handshake: Record<string, unknown>): JsonRpcResponse {
		if (!response.result) return response;
		const result: Record<string, unknown> = { ...response.result };
		result.resultType ??= 'complete';
		if (CACHEABLE.has(request.method)) {
			result.ttlMs ??= 0;
			result.cacheScope ??= 'private';
		}
		if (handshake.serverInfo) result._meta = { ...(result._meta as Record<string, unknown> | undefined), [SERVER_INFO_KEY]: handshake.serverInfo };
		return { ...response, result };
	}
}

/** A 2026-07-28 request's params for a legacy server: without the revision's claims in `_meta`. */
function withoutClaims(all: Record<string, unknown>, meta: Record<string, unknown>): Record<string, unknown> {
	const { [PROTOCOL_VERSION_KEY]: _version, [CLIENT_CAPABILITIES_KEY]: _capabilities, [CLIENT_INFO_KEY]: _info, ...rest } = meta;
	const { _meta: _claims, ...params } = all;
	if (Object.keys(rest).length > 0) params._meta = rest;
	return params;
}
