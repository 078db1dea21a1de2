/**
 * DNS-rebinding and cross-origin defence (the MCP transport rules): the Host header must name
 * the proxy's bound address, and a browser's Origin must be such an address too, or one of the
 * workload's `allowed_origins`; else 403.
 */
import { RequestGuard, type GuardOptions } from '../../net/guard.js';
import type { HttpMiddleware } from '../chain/chain.js';

export function guardMiddleware(host: string, port: number, options: GuardOptions = {}): HttpMiddleware {
	const guard = new RequestGuard(host, port, options);
	// Not an async function: one promise fewer on every request.
	return (exchange, next) => {
		const refusal = guard.check(exchange.request);
		if (!refusal) return next(exchange);
		exchange.response.writeHead(403, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'forbidden', error_description: refusal }));
		return Promise.resolve();
	};
}
