/**
 * Rate limiting of tool calls: each `tools/call` (a request, or a notification that names
 * the method all the same) takes a token from every bucket that applies
 * (the server's, the caller's, the tool's, the caller's for that tool), or is refused with
 * HTTP 429, a `Retry-After` header and a JSON-RPC error (code 429) saying when to try again.
 * Per-user buckets count by the token's `sub`; anonymous callers have none.
 */
import { type McpMiddleware, type NoticeMiddleware } from '../chain.js';
import { errorResponse, type JsonRpcResponse, type RequestId } from '../../core/jsonrpc.js';
import type { RateLimits } from '../../../runspec/rateLimitConfig.js';
import type { BucketClaim, BucketStore } from './tokenBuckets.js';
import { tag } from '../../core/tags.js';

/** ToolHive's JSON-RPC code for a rate-limited request. */
export const RATE_LIMITED_CODE = 429;

export interface RateLimit {
	readonly mcp: McpMiddleware;
	/** A `tools/call` sent as a notification takes its tokens too: the server may run it all the same. */
	readonly notice: NoticeMiddleware;
}

/** `prefix` starts the buckets' keys: proxies with the same prefix (and Redis) share buckets. */
export function rateLimitMiddleware(limits: RateLimits, buckets: BucketStore, prefix: string): RateLimit {
	/** The refusal of a call of `tool` by `user`, or undefined when every bucket had a token. */
	const take = async (id: RequestId | null, tool: string, user: string | undefined): Promise<JsonRpcResponse | undefined> => {
		const toolLimits = limits.tools.get(tool);
		const claims: BucketClaim[] = [];
		if (limits.shared) claims.push({ key: `${prefix}:shared`, ...limits.shared });
		if (toolLimits?.shared) claims.push({ key: `${prefix}:shared:tool:${tool}`, ...toolLimits.shared });
		if (user !== undefined) {
			if (limits.perUser) claims.push({ key: `${prefix}:user:${user}`, ...limits.perUser });
			if (toolLimits?.perUser) claims.push({ key: `${prefix}:user-tool:${tool}:${user}`, ...toolLimits.perUser });
		}
		if (claims.length === 0) return undefined;
		const taken = await buckets.take(claims);
		if (taken.allowed) return undefined;
		const retryAfterSeconds = Math.max(1, Math.ceil(taken.retryAfterMs / 1000));
		return tag(errorResponse(id, RATE_LIMITED_CODE, 'Rate limit exceeded', { retryAfterSeconds }), {
			refusal: { status: 429, headers: { 'Retry-After': String(retryAfterSeconds) } },
		});
	};
	return {
		mcp: async (call, next) => {
			if (call.request.method !== 'tools/call') return next(call);
			return (await take(call.request.id, String(call.request.params?.name ?? ''), call.exchange.identity?.subject)) ?? next(call);
		},
		notice: async (notice, next) => {
			const { message } = notice;
			if (!('method' in message) || message.method !== 'tools/call') return next(notice);
			return (await take(null, String(message.params?.name ?? ''), notice.exchange.identity?.subject)) ?? next(notice);
		},
	};
}
