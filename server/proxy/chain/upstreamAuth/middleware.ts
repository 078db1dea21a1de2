/**
 * An HTTP server behind the proxy (remote, or in a container) that refuses the proxy's
 * credentials with 401 or 403: the client gets that status too, not a JSON-RPC error inside a
 * 200, with a `WWW-Authenticate` challenge that points at the proxy's own protected-resource
 * metadata (RFC 9728), never at the server's (the client talks to the proxy, whose URL is the
 * resource). The server's `error` and `scope` parameters are kept; its other text is not.
 * While the proxy's own OAuth client retries an unreachable authorization server
 * (`auth_retrying`), calls are answered 503 with `Retry-After`, as ToolHive does.
 */
import { type McpMiddleware } from '../chain.js';
import { ErrorCode, errorResponse } from '../../core/jsonrpc.js';
import type { PublicAddress } from '../../net/publicAddress.js';
import { metadataUrlOf } from '../authentication/protectedResource.js';
import { tag, tagsOf } from '../../core/tags.js';

/** RFC 6750 parameters passed on, with values limited to what those parameters may hold. */
const KEPT_PARAMETERS = /\b(error|scope)="([\x20\x21\x23-\x5B\x5D-\x7E]*)"/g;

export function upstreamAuthMiddleware(resourceUrl: string | undefined, address: PublicAddress): McpMiddleware {
	return async (call, next) => {
		const response = await next(call);
		const retryAfter = (response.error?.data as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
		if (response.error?.code === ErrorCode.Unauthenticated && typeof retryAfter === 'number') {
			// The proxy cannot get a token for now and tries again on its own: come back then.
			return tag(response, { refusal: { status: 503, headers: { 'Retry-After': String(retryAfter) } } });
		}
		const denial = tagsOf(response)?.denial;
		if (!denial) return response;
		const kept = [...(denial.challenge ?? '').matchAll(KEPT_PARAMETERS)].map(([, name, value]) => `, ${name}="${value}"`).join('');
		const message = denial.status === 401 ? 'Unauthorized: the MCP server refused the credentials the proxy sent' : 'Forbidden: the MCP server refused the request';
		return tag(errorResponse(call.request.id, denial.status, message), {
			refusal: {
				status: denial.status,
				headers: {
					'WWW-Authenticate': `Bearer resource_metadata="${metadataUrlOf(call.exchange, resourceUrl, address)}"${kept}`,
					'Access-Control-Expose-Headers': 'WWW-Authenticate',
				},
			},
		});
	};
}
