import { connectRedis, throttledWarning } from '../redisClient.js';
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
const ALLOWED = { allowed: true };
export class RedisBuckets {
    redis;
    warn;
    constructor(redis, log) {
        this.redis = redis;
        this.warn = throttledWarning(log);
    }
    /** Buckets kept in the configured Redis; calls pass while it cannot answer. */
    static async connect(config, log) {
        const redis = (await connectRedis(config));
        redis.defineCommand('hangarTakeTokens', { lua: TAKE_SCRIPT });
        const buckets = new RedisBuckets(redis, log);
        redis.on('error', (error) => buckets.warn(`Redis at ${config.address}: ${error.message}`));
        if (redis.status === 'ready')
            log.info(`rate limits shared through Redis at ${config.address}`);
        else
            redis.once('ready', () => log.info(`rate limits shared through Redis at ${config.address}`));
        return buckets;
    }
    async take(claims) {
        const args = claims.map((claim) => claim.key);
        for (const claim of claims)
            args.push(claim.capacity, Math.max(1, Math.round(claim.periodMs)));
        try {
            const [allowed, waitMs] = await this.redis.hangarTakeTokens(claims.length, ...args);
            return allowed === 1 ? ALLOWED : { allowed: false, retryAfterMs: waitMs };
        }
        catch (error) {
            this.warn(`rate limits not enforced, Redis did not answer: ${error.message}`);
            return ALLOWED;
        }
    }
    async close() {
        this.redis.disconnect();
    }
}
//# sourceMappingURL=redisBuckets.js.map