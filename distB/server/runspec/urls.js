/**
 * The URL clients use to reach a workload through its proxy (ToolHive's conventions):
 * `http://127.0.0.1:PORT/mcp` for Streamable HTTP, `http://127.0.0.1:PORT/sse#NAME` for SSE;
 * a remote server keeps its own path. The proxy serves both protocols whatever is advertised.
 */
import { STATS_PATH } from './stats.js';
/** The protocol advertised to clients: the proxy mode for stdio servers, else the server's own. */
export function clientTransportOf(workload) {
    if (workload.transport === 'stdio' || !workload.transport)
        return workload.proxy_mode === 'sse' ? 'sse' : 'streamable-http';
    return workload.transport === 'sse' ? 'sse' : 'streamable-http';
}
export function clientUrlOf(workload) {
    const host = !workload.host || workload.host === '0.0.0.0' || workload.host === '::' ? '127.0.0.1' : workload.host;
    const base = `http://${host.includes(':') ? `[${host}]` : host}:${workload.port}`;
    const transport = clientTransportOf(workload);
    const path = remotePathOf(workload);
    if (transport === 'sse')
        return `${base}${path ?? '/sse'}#${encodeURIComponent(workload.name)}`;
    return `${base}${path ?? '/mcp'}`;
}
/** Paths the proxy serves for itself. */
const PROXY_PATHS = new Set(['/', '/mcp', '/sse', '/messages', '/health', STATS_PATH]);
/** A remote server's own path, which its proxy serves too, unless it clashes with the proxy's. */
export function remotePathOf(workload) {
    if (!workload.remote_url)
        return undefined;
    const path = new URL(workload.remote_url).pathname;
    return PROXY_PATHS.has(path) ? undefined : path;
}
//# sourceMappingURL=urls.js.map