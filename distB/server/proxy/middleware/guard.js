/**
 * DNS-rebinding and cross-origin defence (the MCP transport rules): the Host header must name
 * the proxy's bound address, and a browser's Origin must be such an address too, or one of the
 * workload's `allowed_origins`; else 403.
 */
import { RequestGuard } from '../../net/guard.js';
export function guardMiddleware(host, port, options = {}) {
    const guard = new RequestGuard(host, port, options);
    return async (exchange, next) => {
        const refusal = guard.check(exchange.request);
        if (!refusal)
            return next(exchange);
        exchange.response.writeHead(403, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'forbidden', error_description: refusal }));
    };
}
//# sourceMappingURL=guard.js.map