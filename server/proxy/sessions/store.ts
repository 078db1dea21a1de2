/**
 * Client sessions kept where every replica of a workload's proxy finds them (Redis, under
 * `scaling_config.session_redis`), so a 2025-revision client's session continues on whichever
 * replica the load balancer picks, with no sticky routing.
 *
 * What is kept is what a replica needs to serve the session as its own: the kind, the
 * identity that opened it, the client's `initialize` parameters and, where the server side
 * allows it, the upstream session to adopt. It is written once, when the session opens; a
 * replica reads it once, the first time it sees the session, and then serves it from memory.
 * A session ended by its client is removed and announced, so other replicas forget it too.
 *
 * Redis trouble does not stop the replicas: each keeps serving the sessions it knows, and a
 * session it does not know is answered 404 (the client opens a new one, as MCP says).
 */
import type { Logger } from '../../log.js';
import { connectRedis, throttledWarning, type Redis } from '../net/redisClient.js';
import type { SessionRedisConfig } from '../../../protocol/runConfig.js';

export interface SavedSession {
	readonly kind: 'streamable';
	/** The subject of the identity that opened it, when callers authenticate. */
	readonly owner?: string;
	/** The client's `initialize` parameters. */
	readonly handshake: Record<string, unknown>;
	/** What a replica needs to take over the upstream session, when the backend allows it. */
	readonly upstream?: unknown;
}

export interface ClientSessionStore {
	save(id: string, session: SavedSession): Promise<void>;
	/** The saved session, undefined when there is none, or when the store cannot answer now. */
	load(id: string): Promise<SavedSession | undefined>;
	/** Keeps a session in use from expiring (written now and then, not per message). */
	touch(id: string): void;
	/** The client ended the session: gone for every replica. */
	remove(id: string): Promise<void>;
	/** This replica no longer holds the session: its next use here reads the store again. */
	forget(id: string): void;
	/** Called with the id of a session another replica removed. */
	onRemoved: ((id: string) => void) | undefined;
	/** Whether the store answers now (shown by the proxy's health). */
	readonly available: boolean;
	/** Called when `available` changes. */
	onAvailability: ((available: boolean) => void) | undefined;
	close(): Promise<void>;
}

/** Sessions idle this long are closed by a proxy, and gone from the store. */
export const SESSION_TTL_MS = 2 * 60 * 60_000;
const SESSION_TTL_S = SESSION_TTL_MS / 1000;
/** A session's expiry is pushed back at most this often by one replica. */
const TOUCH_EVERY_MS = 5 * 60_000;

export class RedisClientSessionStore implements ClientSessionStore {
	onRemoved: ((id: string) => void) | undefined;
	onAvailability: ((available: boolean) => void) | undefined;
	private readonly touched = new Map<string, number>();
	private readonly warn: (message: string) => void;

	private constructor(
		private readonly redis: Redis,
		private readonly subscriber: Redis,
		private readonly prefix: string,
		log: Logger,
	) {
		this.warn = throttledWarning(log);
	}

	/** The sessions of workload `workload`, shared by its replicas through the configured Redis. */
	static async connect(config: SessionRedisConfig & { address: string }, workload: string, log: Logger): Promise<RedisClientSessionStore> {
		const [redis, subscriber] = await Promise.all([connectRedis(config), connectRedis(config)]);
		// The braces keep one workload's keys in one slot of a Redis cluster.
		const store = new RedisClientSessionStore(redis, subscriber, `${config.key_prefix ?? 'hangar:'}sessions:{${workload}}:`, log);
		for (const client of [redis, subscriber]) client.on('error', (error: Error) => store.warn(`sessions not shared, Redis at ${config.address}: ${error.message}`));
		redis.on('ready', () => store.onAvailability?.(true));
		redis.on('close', () => store.onAvailability?.(false));
		// Subscribing again after a reconnection is ioredis's own (autoResubscribe).
		subscriber.on('message', (_channel: string, id: string) => store.onRemoved?.(id));
		await subscriber.subscribe(store.channel).catch((error: Error) => store.warn(`cannot hear ended sessions: ${error.message}`));
		return store;
	}

	get available(): boolean {
		return this.redis.status === 'ready';
	}

	private get channel(): string {
		return `${this.prefix}ended`;
	}

	async save(id: string, session: SavedSession): Promise<void> {
		try {
			await this.redis.set(this.prefix + id, JSON.stringify(session), 'EX', SESSION_TTL_S);
			this.touched.set(id, Date.now());
		} catch (error) {
			this.warn(`session ${id} is known to this replica only: ${(error as Error).message}`);
		}
	}

	async load(id: string): Promise<SavedSession | undefined> {
		try {
			const text = await this.redis.get(this.prefix + id);
			if (!text) return undefined;
			this.touched.set(id, Date.now());
			return JSON.parse(text) as SavedSession;
		} catch (error) {
			this.warn(`cannot look sessions up: ${(error as Error).message}`);
			return undefined;
		}
	}

	touch(id: string): void {
		const now = Date.now();
		if (now - (this.touched.get(id) ?? 0) < TOUCH_EVERY_MS) return;
		this.touched.set(id, now);
		this.redis.expire(this.prefix + id, SESSION_TTL_S).catch((error: Error) => this.warn(`cannot keep session ${id}: ${error.message}`));
	}

	async remove(id: string): Promise<void> {
		this.touched.delete(id);
		try {
			await this.redis.del(this.prefix + id);
			await this.redis.publish(this.channel, id);
		} catch (error) {
			this.warn(`session ${id} may live on in other replicas: ${(error as Error).message}`);
		}
	}

	/** This replica no longer holds the session: its next use here reads the store again. */
	forget(id: string): void {
		this.touched.delete(id);
	}

	async close(): Promise<void> {
		this.subscriber.disconnect();
		this.redis.disconnect();
	}
}
