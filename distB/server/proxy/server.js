/**
 * The proxy's HTTP server: `/health`, Streamable HTTP at `/mcp`, legacy SSE at `/sse` and
 * `/messages` (plus a remote server's own path, so its URL keeps working through the proxy),
 * behind the HTTP middleware chain. Bound to 127.0.0.1 unless configured otherwise.
 */
import { createServer } from 'node:http';
import { composeHttp, composeMcp, composeNotices, forwardNotice, forwardToBackend, } from './chain.js';
import { LegacySseFront } from './legacySse.js';
import { SessionRegistry } from './session.js';
import { StreamableHttpFront } from './streamable.js';
export class ProxyServer {
    options;
    server;
    sessions;
    routes = new Map();
    constructor(options) {
        this.options = options;
        this.sessions = new SessionRegistry(options.backend, options.sessions);
        const handle = composeMcp(options.mcpMiddlewares, forwardToBackend);
        const notify = composeNotices(options.noticeMiddlewares ?? [], forwardNotice);
        const streamable = new StreamableHttpFront(this.sessions, handle, notify);
        const sse = new LegacySseFront(this.sessions, handle, '/messages', notify);
        const serveStreamable = composeHttp(options.httpMiddlewares, (exchange) => streamable.serve(exchange));
        const serveSse = composeHttp(options.httpMiddlewares, async (exchange) => sse.connect(exchange));
        for (const path of ['/mcp', ...(options.streamablePaths ?? [])])
            this.routes.set(path, serveStreamable);
        for (const path of ['/sse', ...(options.ssePaths ?? [])])
            this.routes.set(path, serveSse);
        this.routes.set('/messages', composeHttp(options.httpMiddlewares, (exchange) => sse.post(exchange)));
        this.routes.set('/health', async ({ response }) => this.health(response));
        for (const [path, handler] of options.routes ?? [])
            this.routes.set(path, handler);
        this.server = createServer((request, response) => void this.dispatch(request, response));
        this.server.keepAliveTimeout = 65_000;
        this.server.requestTimeout = 0; // long tool calls are bounded by the request timeout instead
    }
    /** Client sessions open now. */
    get sessionCount() {
        return this.sessions.size;
    }
    listen() {
        return new Promise((resolve, reject) => {
            this.server.once('error', reject);
            this.server.listen({ host: this.options.host, port: this.options.port, exclusive: true }, () => {
                this.server.off('error', reject);
                resolve();
            });
        });
    }
    async close() {
        this.sessions.closeAll();
        await new Promise((resolve) => {
            this.server.close(() => resolve());
            this.server.closeAllConnections();
        });
    }
    async dispatch(request, response) {
        const target = request.url ?? '/';
        const query = target.indexOf('?');
        const path = query < 0 ? target : target.slice(0, query);
        const route = this.routes.get(path);
        let url;
        const exchange = {
            request,
            response,
            path,
            get url() {
                return (url ??= new URL(target, 'http://proxy'));
            },
        };
        try {
            if (route)
                await route(exchange);
            else
                response.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'not_found', error_description: `no MCP endpoint at ${path}` }));
        }
        catch (error) {
            this.options.log.error(`${request.method} ${path} failed: ${error?.stack ?? error}`);
            if (!response.headersSent)
                response.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'internal_error' }));
            else
                response.end();
        }
    }
    health(response) {
        const { state, detail } = this.options.backend;
        const shared = this.sessions.shared;
        const body = JSON.stringify({ status: state === 'connected' ? 'ok' : 'unavailable', backend: state, detail, sessions: this.sessions.size, ...(shared !== undefined && { sessions_shared: shared }) });
        response.writeHead(state === 'connected' ? 200 : 503, { 'Content-Type': 'application/json' }).end(body);
    }
}
//# sourceMappingURL=server.js.map