/**
 * The proxy's HTTP server: `/health`, Streamable HTTP at `/mcp`, legacy SSE at `/sse` and
 * `/messages` (plus a remote server's own path, so its URL keeps working through the proxy),
 * behind the HTTP middleware chain. Bound to 127.0.0.1 unless configured otherwise.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '../../log.js';
import { sendJson } from '../../net/body.js';
import type { Backend } from '../core/backend.js';
import {
	composeHttp,
	composeMcp,
	composeNotices,
	forwardNotice,
	forwardToBackend,
	type HttpExchange,
	type HttpHandler,
	type Identity,
	type HttpMiddleware,
	type McpMiddleware,
	type NoticeMiddleware,
} from '../chain/chain.js';
import type { JsonRpcMessage } from '../core/jsonrpc.js';
import { LegacySseFront } from './legacySse.js';
import type { PublicAddress } from '../net/publicAddress.js';
import { ClientSessionRegistry, type ClientSessionRegistryOptions } from '../sessions/clientSession.js';
import { StreamableHttpFront } from './streamable.js';

export interface ProxyServerOptions {
	readonly host: string;
	readonly port: number;
	readonly backend: Backend;
	readonly httpMiddlewares: readonly HttpMiddleware[];
	readonly mcpMiddlewares: readonly McpMiddleware[];
	/** Middleware for notifications and the client's responses (audit, authorization, rate limit). */
	readonly noticeMiddlewares?: readonly NoticeMiddleware[];
	/** Paths served as Streamable HTTP besides `/mcp`. */
	readonly streamablePaths?: readonly string[];
	/** Paths served as legacy SSE streams besides `/sse`. */
	readonly ssePaths?: readonly string[];
	/** How a replica names and shares its sessions. */
	readonly sessions?: ClientSessionRegistryOptions;
	/** Other routes (protected-resource metadata…), served as given, outside the middleware chain. */
	readonly routes?: ReadonlyMap<string, HttpHandler>;
	/** The address clients reach the proxy by, behind a reverse proxy too. */
	readonly address: PublicAddress;
	readonly log: Logger;
}

/** One HTTP request to the proxy; a class, not a literal with a getter, as it is made per request. */
class Exchange implements HttpExchange {
	identity?: Identity;
	messages?: readonly JsonRpcMessage[];
	private parsed: URL | undefined;

	constructor(
		readonly request: IncomingMessage,
		readonly response: ServerResponse,
		readonly path: string,
		private readonly target: string,
	) {}

	get url(): URL {
		return (this.parsed ??= new URL(this.target, 'http://proxy'));
	}
}

export class ProxyServer {
	private readonly server: Server;
	private readonly sessions: ClientSessionRegistry;
	private readonly routes = new Map<string, HttpHandler>();

	constructor(private readonly options: ProxyServerOptions) {
		this.sessions = new ClientSessionRegistry(options.backend, options.sessions);
		const handle = composeMcp(options.mcpMiddlewares, forwardToBackend);
		const notify = composeNotices(options.noticeMiddlewares ?? [], forwardNotice);
		const streamable = new StreamableHttpFront(this.sessions, handle, notify);
		const sse = new LegacySseFront(this.sessions, handle, '/messages', options.address, notify);
		const serveStreamable = composeHttp(options.httpMiddlewares, (exchange) => streamable.serve(exchange));
		const serveSse = composeHttp(options.httpMiddlewares, async (exchange) => sse.connect(exchange));
		for (const path of ['/mcp', ...(options.streamablePaths ?? [])]) this.routes.set(path, serveStreamable);
		for (const path of ['/sse', ...(options.ssePaths ?? [])]) this.routes.set(path, serveSse);
		this.routes.set('/messages', composeHttp(options.httpMiddlewares, (exchange) => sse.post(exchange)));
		this.routes.set('/health', async ({ response }) => this.health(response));
		for (const [path, handler] of options.routes ?? []) this.routes.set(path, handler);
		this.server = createServer((request, response) => this.dispatch(request, response));
		this.server.keepAliveTimeout = 65_000;
		this.server.requestTimeout = 0; // long tool calls are bounded by the request timeout instead
	}

	/** Client sessions open now. */
	get sessionCount(): number {
		return this.sessions.size;
	}

	listen(): Promise<void> {
		return new Promise((resolve, reject) => {
			this.server.once('error', reject);
			this.server.listen({ host: this.options.host, port: this.options.port, exclusive: true }, () => {
				this.server.off('error', reject);
				resolve();
			});
		});
	}

	async close(): Promise<void> {
		this.sessions.closeAll();
		await new Promise<void>((resolve) => {
			this.server.close(() => resolve());
			this.server.closeAllConnections();
		});
	}

	/** Not an async function: the route's promise is the only one a request costs here. */
	private dispatch(request: IncomingMessage, response: ServerResponse): void {
		const target = request.url ?? '/';
		const query = target.indexOf('?');
		const path = query < 0 ? target : target.slice(0, query);
		const route = this.routes.get(path);
		if (!route) {
			sendJson(response, 404, { error: 'not_found', error_description: `no MCP endpoint at ${path}` });
			return;
		}
		const exchange = new Exchange(request, response, path, target);
		try {
			route(exchange).catch((error: unknown) => this.failed(exchange, error));
		} catch (error) {
			this.failed(exchange, error);
		}
	}

	private failed({ request, response, path }: HttpExchange, error: unknown): void {
		this.options.log.error(`${request.method} ${path} failed: ${(error as Error)?.stack ?? error}`);
		if (!response.headersSent) sendJson(response, 500, { error: 'internal_error' });
		else response.end();
	}

	private health(response: ServerResponse): void {
		const { state, detail } = this.options.backend;
		const shared = this.sessions.shared;
		const body = JSON.stringify({ status: state === 'connected' ? 'ok' : 'unavailable', backend: state, detail, sessions: this.sessions.size, ...(shared !== undefined && { sessions_shared: shared }) });
		response.writeHead(state === 'connected' ? 200 : 503, { 'Content-Type': 'application/json' }).end(body);
	}
}
