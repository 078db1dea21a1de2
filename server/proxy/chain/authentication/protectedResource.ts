/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) of a workload with authentication: where
 * clients find which authorization server issues tokens for it. Served at
 * `/.well-known/oauth-protected-resource` and, per RFC 9728 §3.1, with each MCP path
 * appended (`/.well-known/oauth-protected-resource/mcp`), which clients try first.
 */
import type { TokenValidatorConfig } from '../../../../protocol/runConfig.js';
import type { HttpExchange, HttpHandler } from '../chain.js';
import type { PublicAddress } from '../../net/publicAddress.js';

export const METADATA_PATH = '/.well-known/oauth-protected-resource';

/**
 * The metadata URL for a request to an MCP endpoint (what `WWW-Authenticate` names). Behind a
 * reverse proxy's path prefix it is served under that prefix, where the client can reach it.
 */
export function metadataUrlOf(exchange: HttpExchange, resourceUrl: string | undefined, address: PublicAddress): string {
	if (resourceUrl) {
		const url = new URL(resourceUrl);
		return `${url.origin}${METADATA_PATH}${url.pathname === '/' ? '' : url.pathname}`;
	}
	return address.urlOf(exchange.request, `${METADATA_PATH}${exchange.path}`);
}

/**
 * The metadata routes: the root form describes the workload's main endpoint (`mainPath`), each
 * suffixed form the endpoint it names. Without `config` (no authentication of its own, but an
 * HTTP server behind that may refuse the proxy), the document names the resource only.
 */
export function protectedResourceRoutes(config: TokenValidatorConfig | undefined, mainPath: string, mcpPaths: readonly string[], address: PublicAddress): Map<string, HttpHandler> {
	const serve = (resourcePath: string): HttpHandler => async (exchange) => {
		const { request, response } = exchange;
		if (request.method === 'OPTIONS') {
			response.writeHead(204, { Allow: 'GET, OPTIONS' }).end();
			return;
		}
		if (request.method !== 'GET' && request.method !== 'HEAD') {
			response.writeHead(405, { Allow: 'GET, OPTIONS', 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'method_not_allowed' }));
			return;
		}
		const resource = config?.resourceURL || address.urlOf(request, resourcePath);
		const body = JSON.stringify(
			config
				? {
						resource,
						authorization_servers: [config.issuer],
						bearer_methods_supported: ['header'],
						scopes_supported: config.scopes?.length ? config.scopes : ['openid'],
						...(config.jwksurl ? { jwks_uri: config.jwksurl } : {}),
					}
				: { resource, bearer_methods_supported: ['header'] },
		);
		response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'max-age=300' });
		response.end(request.method === 'HEAD' ? undefined : body);
	};
	const routes = new Map<string, HttpHandler>([[METADATA_PATH, serve(mainPath)]]);
	for (const path of mcpPaths) routes.set(`${METADATA_PATH}${path}`, serve(path));
	return routes;
}
