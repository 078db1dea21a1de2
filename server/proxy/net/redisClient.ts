/**
 * The proxy's Redis connection (`scaling_config.session_redis`), shared by the rate-limit
 * buckets and the session store. Commands fail at once rather than queue while Redis is
 * away, so a caller decides what to do without it; the client reconnects by itself.
 */
import type { Redis } from 'ioredis';
import type { SessionRedisConfig } from '../../../protocol/runConfig.js';
import type { Logger } from '../../log.js';
import { parseAddress } from '../../runspec/redisAddress.js';

const COMMAND_TIMEOUT_MS = 500;
/** How long a starting proxy waits for Redis before serving without it. */
const CONNECT_WAIT_MS = 2_000;

export type { Redis };

/** A client of the configured Redis, connected (or not, after a short wait). */
export async function connectRedis(config: SessionRedisConfig & { address: string }): Promise<Redis> {
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
	});
	redis.on('error', () => undefined); // each user reports what it could not do
	await new Promise<void>((resolve) => {
		const timer = setTimeout(resolve, CONNECT_WAIT_MS);
		redis.once('ready', () => {
			clearTimeout(timer);
			resolve();
		});
	});
	return redis;
}

/** Logs at most one warning per period: Redis trouble would otherwise flood the log. */
export function throttledWarning(log: Logger, periodMs = 30_000): (message: string) => void {
	let last = 0;
	return (message) => {
		const now = Date.now();
		if (now - last < periodMs) return;
		last = now;
		log.warn(message);
	};
}
