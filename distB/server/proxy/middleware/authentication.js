import { metadataUrlOf } from '../security/protectedResource.js';
import { TokenRejected } from '../security/tokenValidator.js';
/** `Bearer`, one space, a token68 (RFC 7235): no extra whitespace, no quotes. */
const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;
export function authenticationMiddleware(validator, resourceUrl) {
    return async (exchange, next) => {
        const header = exchange.request.headers.authorization;
        if (header === undefined)
            return unauthorized(exchange, resourceUrl, 'invalid_request', 'authorization header required');
        const match = BEARER.exec(header);
        if (!match)
            return unauthorized(exchange, resourceUrl, 'invalid_request', "invalid authorization header format, expected 'Bearer <token>'");
        try {
            exchange.identity = await validator.verify(match[1]);
        }
        catch (error) {
            if (!(error instanceof TokenRejected))
                throw error;
            return unauthorized(exchange, resourceUrl, 'invalid_token', `Invalid token: ${error.message}`);
        }
        return next(exchange);
    };
}
function quoted(value) {
    return `"${value.replace(/["\\]/g, '\\$&')}"`;
}
function unauthorized(exchange, resourceUrl, error, description) {
    const { response } = exchange;
    exchange.request.resume(); // the body is not read: drain it so the connection can be reused
    const challenge = `Bearer resource_metadata=${quoted(metadataUrlOf(exchange, resourceUrl))}, error=${quoted(error)}, error_description=${quoted(description)}`;
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
//# sourceMappingURL=authentication.js.map