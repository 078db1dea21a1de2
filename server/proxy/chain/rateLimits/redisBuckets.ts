/**
 * Token buckets shared by several proxies through Redis (`scaling_config.session_redis`).
 * One Lua script checks and takes every bucket of a call atomically, on Redis's clock so the
 * proxies' clocks do not matter; a bucket's key expires after twice its refill period.
 *
 * Redis trouble never blocks calls: when it cannot answer at once (down, slow, not yet
 * connected), the call is let through (fail open) and the proxy says so in its log.
 */
import type { SessionRedisConfig } from '../../../../protocol/runConfig.js';
import type { Logger } from '../../../log.js';
import { connectRedis, throttledWarning, type Redis } from '../../net/redisClient.js';
import type { BucketClaim, BucketStore, TakeResult } from './tokenBuckets.js';

/**
 * KEYS: the buckets. ARGV: capacity and refill period (ms) of each, in the same order.
 * Returns {1, 0} when every bucket had a token (one is taken from each), else {0, wait ms}.
 */
const TAKE_SCRIPT = `
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local levels = {}
local wait = 0
for i = 1, #KEYS do
	local capacity = tonumber(ARGV[2 * i - 1])
	local period = tonumber(ARGV[2 * i])
	local state = redis.call('HMGET', KEYS[i], 'tokens', 'at')
	local level = capacity
	if state[1] then
		level = math.min(capacity, tonumber(state[1]) + (now - tonumber(state[2])) * capacity / period)
	end
	if level < 1 then
		wait = math.max(wait, (1 - level) * period / capacity)
	end
	levels[i] = level
end
if wait > 0 then
	return {0, math.ceil(wait)}
end
for i = 1, #KEYS do
	local period = tonumber(ARGV[2 * i])
	redis.call('HSET', KEYS[i], 'tokens', tostring(levels[i] - 1), 'at', now)
	redis.call('PEXPIRE', KEYS[i], math.ceil(2 * period))
end
return {1, 0}
`;

const ALLOWED: TakeResult = { allowed: true };

type RedisClient = Redis & {
	hangarTakeTokens(keyCount: number, ...keysAndArgs: Array<string | number>): Promise<[number, number]>;
};

export class RedisBuckets implements BucketStore {
	private readonly warn: (message: string) => void;

	private constructor(
		private readonly redis: RedisClient,
		log: Logger,
	) {
		this.warn = throttledWarning(log);
	}

	/** Buckets kept in the configured Redis; calls pass while it cannot answer. */
	static async connect(config: SessionRedisConfig & { address: string }, log: Logger): Promise<RedisBuckets> {
		const redis = (await connectRedis(config)) as RedisClient;
		redis.defineCommand('hangarTakeTokens', { lua: TAKE_SCRIPT });
		const buckets = new RedisBuckets(redis, log);
		redis.on('error', (error: Error) => buckets.warn(`Redis at ${config.address}: ${error.message}`));
		if (redis.status === 'ready') log.info(`rate limits shared through Redis at ${config.address}`);
		else redis.once('ready', () => log.info(`rate limits shared through Redis at ${config.address}`));
		return buckets;
	}

	async take(claims: readonly BucketClaim[]): Promise<TakeResult> {
		const args: Array<string | number> = claims.map((claim) => claim.key);
		for (const claim of claims) args.push(claim.capacity, Math.max(1, Math.round(claim.periodMs)));
		try {
			const [allowed, waitMs] = await this.redis.hangarTakeTokens(claims.length, ...args);
			return allowed === 1 ? ALLOWED : { allowed: false, retryAfterMs: waitMs };
		} catch (error) {
			this.warn(`rate limits not enforced, Redis did not answer: ${(error as Error).message}`);
			return ALLOWED;
		}
	}

	async close(): Promise<void> {
		this.redis.disconnect();
	}
}
