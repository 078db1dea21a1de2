import { parseAddress } from '../runspec/redisAddress.js';
const COMMAND_TIMEOUT_MS = 500;
/** How long a starting proxy waits for Redis before serving without it. */
const CONNECT_WAIT_MS = 2_000;
/** A client of the configured Redis, connected (or not, after a short wait). */
export async function connectRedis(config) {
    const { Redis } = await import('ioredis');
    const { host, port } = parseAddress(config.address);
    const redis = new Redis({
        host,
        port,
        db: config.db ?? 0,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: COMMAND_TIMEOUT_MS,
        connectTimeout: 2_000,
        retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
        lazyConnect: false,
    });
    redis.on('error', () => undefined); // each user reports what it could not do
    await new Promise((resolve) => {
        const timer = setTimeout(resolve, CONNECT_WAIT_MS);
        redis.once('ready', () => {
            clearTimeout(timer);
            resolve();
        });
    });
    return redis;
}
/** Logs at most one warning per period: Redis trouble would otherwise flood the log. */
export function throttledWarning(log, periodMs = 30_000) {
    let last = 0;
    return (message) => {
        const now = Date.now();
        if (now - last < periodMs)
            return;
        last = now;
        log.warn(message);
    };
}
//# sourceMappingURL=redisClient.js.map