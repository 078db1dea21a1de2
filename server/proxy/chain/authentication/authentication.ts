/**
 * Authentication: every request to an MCP endpoint carries `Authorization: Bearer <token>`,
 * a token the validator accepts; the caller's identity goes on the exchange for the
 * middleware after it. Anything else is answered 401 here, before any MCP parsing or policy
 * evaluation, with a JSON `{error, error_description}` body and a `WWW-Authenticate` header
 * that points at the protected-resource metadata (RFC 6750, RFC 9728).
 *
 * The token itself goes no further: the backends never forward client headers.
 */
import type { HttpExchange, HttpMiddleware } from '../chain.js';
import type { PublicAddress } from '../../net/publicAddress.js';
import { metadataUrlOf } from './protectedResource.js';
import { TokenRejected, type TokenValidator } from './tokenValidator.js';

/** `Bearer`, one space, a token68 (RFC 7235): no extra whitespace, no quotes. */
const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

type BearerError = 'invalid_request' | 'invalid_token';

export function authenticationMiddleware(validator: TokenValidator, resourceUrl: string | undefined, address: PublicAddress): HttpMiddleware {
	return async (exchange, next) => {
		const header = exchange.request.headers.authorization;
		if (header === undefined) return unauthorized(exchange, resourceUrl, address, 'invalid_request', 'authorization header required');
		const match = BEARER.exec(header);
		if (!match) return unauthorized(exchange, resourceUrl, address, 'invalid_request', "invalid authorization header format, expected 'Bearer <token>'");
		try {
			exchange.identity = await validator.verify(match[1]!);
		} catch (error) {
			if (!(error instanceof TokenRejected)) throw error;
			return unauthorized(exchange, resourceUrl, address, 'invalid_token', `Invalid token: ${error.message}`);
		}
		return next(exchange);
	};
}

function quoted(value: string): string {
	return `"${value.replace(/["\\]/g, '\\$&')}"`;
}

function unauthorized(exchange: HttpExchange, resourceUrl: string | undefined, address: PublicAddress, error: BearerError, description: string): void {
	const { response } = exchange;
	exchange.request.resume(); // the body is not read: drain it so the connection can be reused
	const challenge = `Bearer resource_metadata=${quoted(metadataUrlOf(exchange, resourceUrl, address))}, error=${quoted(error)}, error_description=${quoted(description)}`;
	const body = JSON.stringify({ error, error_description: description });
	response
		.writeHead(401, {
			'Content-Type': 'application/json',
			'Content-Length': Buffer.byteLength(body),
			'WWW-Authenticate': challenge,
			'Access-Control-Expose-Headers': 'WWW-Authenticate',
		})
		.end(body);
}
