export const METADATA_PATH = '/.well-known/oauth-protected-resource';
function origin(exchange) {
    return `http://${exchange.request.headers.host ?? 'localhost'}`;
}
/** The metadata URL for a request to an MCP endpoint (what `WWW-Authenticate` names). */
export function metadataUrlOf(exchange, resourceUrl) {
    if (resourceUrl) {
        const url = new URL(resourceUrl);
        return `${url.origin}${METADATA_PATH}${url.pathname === '/' ? '' : url.pathname}`;
    }
    return `${origin(exchange)}${METADATA_PATH}${exchange.path}`;
}
/**
 * The metadata routes: the root form describes the workload's main endpoint (`mainPath`), each
 * suffixed form the endpoint it names. Without `config` (no authentication of its own, but an
 * HTTP server behind that may refuse the proxy), the document names the resource only.
 */
export function protectedResourceRoutes(config, mainPath, mcpPaths) {
    const serve = (resourcePath) => async (exchange) => {
        const { request, response } = exchange;
        if (request.method === 'OPTIONS') {
            response.writeHead(204, { Allow: 'GET, OPTIONS' }).end();
            return;
        }
        if (request.method !== 'GET' && request.method !== 'HEAD') {
            response.writeHead(405, { Allow: 'GET, OPTIONS', 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'method_not_allowed' }));
            return;
        }
        const resource = config?.resourceURL || `${origin(exchange)}${resourcePath}`;
        const body = JSON.stringify(config
            ? {
                resource,
                authorization_servers: [config.issuer],
                bearer_methods_supported: ['header'],
                scopes_supported: config.scopes?.length ? config.scopes : ['openid'],
                ...(config.jwksurl ? { jwks_uri: config.jwksurl } : {}),
            }
            : { resource, bearer_methods_supported: ['header'] });
        response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'max-age=300' });
        response.end(request.method === 'HEAD' ? undefined : body);
    };
    const routes = new Map([[METADATA_PATH, serve(mainPath)]]);
    for (const path of mcpPaths)
        routes.set(`${METADATA_PATH}${path}`, serve(path));
    return routes;
}
//# sourceMappingURL=protectedResource.js.map