/**
 * The proxy's HTTP server: `/health`, Streamable HTTP at `/mcp`, legacy SSE at `/sse` and
 * `/messages` (plus a remote server's own path, so its URL keeps working through the proxy),
 * behind the HTTP middleware chain. Bound to 127.0.0.1 unless configured otherwise; on a Unix
 * socket too, where the aggregates of its group find the same routes and the link (`/link`).
 */
import { chmod, mkdir, rm } from 'node:fs/promises';
import { createServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { ListenOptions, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { dirname } from 'node:path';
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
	type McpHandler,
	type McpMiddleware,
	type NoticeMiddleware,
} from '../chain/chain.js';
import type { JsonRpcMessage, JsonRpcNotification } from '../core/jsonrpc.js';
import { isPipe } from '../../runspec/localLink.js';
import { LINK_PATH } from '../core/link.js';
import { LegacySseFront } from './legacySse.js';
import { LinkFront } from './link.js';
import type { PublicAddress } from '../net/publicAddress.js';
import { ClientSessionRegistry, type ClientSessionRegistryOptions } from '../sessions/clientSession.js';
import { StreamableHttpFront } from './streamable.js';

const MAX_SOCKET_PATH_BYTES = 107;

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
	/**
	 * A Unix socket to serve the same routes and the link on, for the aggregates of the workload's
	 * group. Its folder is made private to the user; a path the system cannot bind (too long) is
	 * skipped.
	 */
	readonly socketPath?: string;
	/** Routes served on the local channel only (`STOP_PATH`), outside the middleware chain. */
	readonly localRoutes?: ReadonlyMap<string, HttpHandler>;
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
		readonly upgrade?: Socket,
	) {}

	get url(): URL {
		return (this.parsed ??= new URL(this.target, 'http://proxy'));
	}
}

export class ProxyServer {
	private readonly server: Server;
	/** The Unix socket's server, once it listens. */
	private local: Server | undefined;
	private readonly sessions: ClientSessionRegistry;
	private readonly routes = new Map<string, HttpHandler>();
	/** The Unix socket's routes: the same, and the link. */
	private readonly localRoutes: Map<string, HttpHandler>;

	constructor(private readonly options: ProxyServerOptions) {
		this.sessions = new ClientSessionRegistry(options.backend, options.sessions);
		const handle: McpHandler = composeMcp(options.mcpMiddlewares, forwardToBackend(() => handle));
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
		const link = new LinkFront(this.sessions, handle, notify, options.log);
		this.localRoutes = new Map([...this.routes, ...(options.localRoutes ?? [])]).set(LINK_PATH, composeHttp(options.httpMiddlewares, (exchange) => link.serve(exchange)));
		this.server = this.createServer(this.routes);
	}

	/** Tells every client session open here something of the proxy's own (sessions/clientSession.ts `notifyAll`). */
	notifyAll(message: JsonRpcNotification): void {
		this.sessions.notifyAll(message);
	}

	/** Client sessions open now. */
	get sessionCount(): number {
		return this.sessions.size;
	}

	/** Listens on the host and port; on the Unix socket too, when one is configured (its path then in `socketPath`). */
	async listen(): Promise<void> {
		await listening(this.server, { host: this.options.host, port: this.options.port, exclusive: true });
		const path = this.options.socketPath;
		if (!path) return;
		try {
			// Linux binds at most 107 bytes of a socket's path and cuts a longer one without a word.
			if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) throw new Error(`the path is over ${MAX_SOCKET_PATH_BYTES} bytes`);
			const socketFile = !isPipe(path); // a Windows pipe is no file: nothing to make, remove or chmod
			if (socketFile) {
				await mkdir(dirname(path), { recursive: true, mode: 0o700 });
				await rm(path, { force: true }); // left by a proxy that was killed
			}
			const local = this.createServer(this.localRoutes);
			local.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(request, socket as Socket, head));
			await listening(local, { path, exclusive: true });
			if (socketFile) await chmod(path, 0o600);
			this.local = local;
		} catch (error) {
			this.options.log.warn(`not serving on ${path} (aggregates reach this proxy over TCP): ${(error as Error).message}`);
		}
	}

	/** The Unix socket the proxy serves on, once it does. */
	get socketPath(): string | undefined {
		return this.local ? this.options.socketPath : undefined;
	}

	async close(): Promise<void> {
		this.sessions.closeAll();
		await Promise.all([this.server, this.local].map((server) => server && closing(server)));
		if (this.local && !isPipe(this.options.socketPath!)) await rm(this.options.socketPath!, { force: true });
	}

	private createServer(routes: ReadonlyMap<string, HttpHandler>): Server {
		const server = createServer((request, response) => this.dispatch(routes, request, response));
		server.keepAliveTimeout = 65_000;
		server.requestTimeout = 0; // long tool calls are bounded by the request timeout instead
		return server;
	}

	/**
	 * A request to upgrade its connection, on the Unix socket, which Node hands over without a
	 * response: one is made on the connection, so the link's middleware can refuse it as any
	 * request, and the connection ends with a refusal. The link, accepting, takes it over. Only
	 * the link upgrades: any other request that asks to is refused rather than served, as Node
	 * has stopped reading it as HTTP.
	 */
	private upgrade(request: IncomingMessage, socket: Socket, head: Buffer): void {
		const response = new ServerResponse(request);
		response.assignSocket(socket);
		response.shouldKeepAlive = false;
		response.once('finish', () => socket.end());
		// A reset is followed by the close, which the link acts on.
		socket.on('error', (error) => this.options.log.debug(`an upgraded connection failed: ${error.message}`));
		const path = pathOf(request.url ?? '/');
		if (head.length > 0) socket.unshift(head);
		if (path === LINK_PATH) return this.dispatch(this.localRoutes, request, response, socket);
		sendJson(response, 400, { error: 'invalid_request', error_description: `only ${LINK_PATH} upgrades its connection: send the request to ${path} without an Upgrade header` });
	}

	/** Not an async function: the route's promise is the only one a request costs here. */
	private dispatch(routes: ReadonlyMap<string, HttpHandler>, request: IncomingMessage, response: ServerResponse, upgrade?: Socket): void {
		const target = request.url ?? '/';
		const path = pathOf(target);
		const route = routes.get(path);
		if (!route) {
			sendJson(response, 404, { error: 'not_found', error_description: `no MCP endpoint at ${path}` });
			return;
		}
		const exchange = new Exchange(request, response, path, target, upgrade);
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

/** A request target's path, without the query. */
function pathOf(target: string): string {
	const query = target.indexOf('?');
	return query < 0 ? target : target.slice(0, query);
}

function listening(server: Server, options: ListenOptions): Promise<void> {
	return new Promise((resolve, reject) => {
		server.once('error', reject);
		server.listen(options, () => {
			server.off('error', reject);
			resolve();
		});
	});
}

function closing(server: Server): Promise<void> {
	return new Promise((resolve) => {
		server.close(() => resolve());
		server.closeAllConnections();
	});
}
