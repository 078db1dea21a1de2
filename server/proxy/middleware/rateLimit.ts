/**
 * Rate limiting of tool calls: each `tools/call` takes a token from every bucket that applies
 * (the server's, the caller's, the tool's, the caller's for that tool), or is refused with
 * HTTP 429, a `Retry-After` header and a JSON-RPC error (code 429) saying when to try again.
 * Per-user buckets count by the token's `sub`; anonymous callers have none.
 */
import { refuse, type McpMiddleware } from '../chain.js';
import { errorResponse } from '../jsonrpc.js';
import type { RateLimits } from '../../runspec/rateLimitConfig.js';
import type { BucketClaim, BucketStore } from '../security/tokenBuckets.js';

/** ToolHive's JSON-RPC code for a rate-limited request. */
export const RATE_LIMITED_CODE = 429;

/** `prefix` starts the buckets' keys: proxies with the same prefix (and Redis) share buckets. */
export function rateLimitMiddleware(limits: RateLimits, buckets: BucketStore, prefix: string): McpMiddleware {
	return async (call, next) => {
		if (call.request.method !== 'tools/call') return next(call);
		const tool = String(call.request.params?.name ?? '');
		const user = call.exchange.identity?.subject;
		const toolLimits = limits.tools.get(tool);
		const claims: BucketClaim[] = [];
		if (limits.shared) claims.push({ key: `${prefix}:shared`, ...limits.shared });
		if (toolLimits?.shared) claims.push({ key: `${prefix}:shared:tool:${tool}`, ...toolLimits.shared });
		if (user !== undefined) {
			if (limits.perUser) claims.push({ key: `${prefix}:user:${user}`, ...limits.perUser });
			if (toolLimits?.perUser) claims.push({ key: `${prefix}:user-tool:${tool}:${user}`, ...toolLimits.perUser });
		}
		if (claims.length === 0) return next(call);
		const taken = await buckets.take(claims);
		if (taken.allowed) return next(call);
		const retryAfterSeconds = Math.max(1, Math.ceil(taken.retryAfterMs / 1000));
		return refuse(errorResponse(call.request.id, RATE_LIMITED_CODE, 'Rate limit exceeded', { retryAfterSeconds }), {
			status: 429,
			headers: { 'Retry-After': String(retryAfterSeconds) },
		});
	};
}
