import { connectRedis, throttledWarning } from './redisClient.js';
/** Sessions idle this long are gone from the store, as from a proxy's memory. */
export const SESSION_TTL_S = 2 * 60 * 60;
/** A session's expiry is pushed back at most this often by one replica. */
const TOUCH_EVERY_MS = 5 * 60_000;
export class RedisSessionStore {
    redis;
    subscriber;
    prefix;
    onRemoved;
    onAvailability;
    touched = new Map();
    warn;
    constructor(redis, subscriber, prefix, log) {
        this.redis = redis;
        this.subscriber = subscriber;
        this.prefix = prefix;
        this.warn = throttledWarning(log);
    }
    /** The sessions of workload `workload`, shared by its replicas through the configured Redis. */
    static async connect(config, workload, log) {
        const [redis, subscriber] = await Promise.all([connectRedis(config), connectRedis(config)]);
        // The braces keep one workload's keys in one slot of a Redis cluster.
        const store = new RedisSessionStore(redis, subscriber, `${config.key_prefix ?? 'hangar:'}sessions:{${workload}}:`, log);
        for (const client of [redis, subscriber])
            client.on('error', (error) => store.warn(`sessions not shared, Redis at ${config.address}: ${error.message}`));
        redis.on('ready', () => store.onAvailability?.(true));
        redis.on('close', () => store.onAvailability?.(false));
        // Subscribing again after a reconnection is ioredis's own (autoResubscribe).
        subscriber.on('message', (_channel, id) => store.onRemoved?.(id));
        await subscriber.subscribe(store.channel).catch((error) => store.warn(`cannot hear ended sessions: ${error.message}`));
        return store;
    }
    get available() {
        return this.redis.status === 'ready';
    }
    get channel() {
        return `${this.prefix}ended`;
    }
    async save(id, session) {
        try {
            await this.redis.set(this.prefix + id, JSON.stringify(session), 'EX', SESSION_TTL_S);
            this.touched.set(id, Date.now());
        }
        catch (error) {
            this.warn(`session ${id} is known to this replica only: ${error.message}`);
        }
    }
    async load(id) {
        try {
            const text = await this.redis.get(this.prefix + id);
            if (!text)
                return undefined;
            this.touched.set(id, Date.now());
            return JSON.parse(text);
        }
        catch (error) {
            this.warn(`cannot look sessions up: ${error.message}`);
            return undefined;
        }
    }
    touch(id) {
        const now = Date.now();
        if (now - (this.touched.get(id) ?? 0) < TOUCH_EVERY_MS)
            return;
        this.touched.set(id, now);
        this.redis.expire(this.prefix + id, SESSION_TTL_S).catch((error) => this.warn(`cannot keep session ${id}: ${error.message}`));
    }
    async remove(id) {
        this.touched.delete(id);
        try {
            await this.redis.del(this.prefix + id);
            await this.redis.publish(this.channel, id);
        }
        catch (error) {
            this.warn(`session ${id} may live on in other replicas: ${error.message}`);
        }
    }
    /** This replica no longer holds the session: its next use here reads the store again. */
    forget(id) {
        this.touched.delete(id);
    }
    async close() {
        this.subscriber.disconnect();
        this.redis.disconnect();
    }
}
//# sourceMappingURL=sessionStore.js.map