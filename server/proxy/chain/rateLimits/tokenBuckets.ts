/**
 * Token buckets, taken all together: a call takes one token from every bucket that applies
 * to it, or none at all when any of them is empty (so a per-tool rejection does not drain the
 * server's bucket). Buckets start full and refill continuously. `LocalBuckets` keeps them in
 * this process; `RedisBuckets` (redisBuckets.ts) shares them between proxies.
 */
import type { BucketSpec } from '../../../runspec/rateLimitConfig.js';

export interface BucketClaim extends BucketSpec {
	readonly key: string;
}

export type TakeResult = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterMs: number };

export interface BucketStore {
	take(claims: readonly BucketClaim[]): Promise<TakeResult>;
	close(): Promise<void>;
}

const SWEEP_MS = 60_000;
const ALLOWED: TakeResult = { allowed: true };

export class LocalBuckets implements BucketStore {
	private readonly buckets = new Map<string, { tokens: number; at: number; spec: BucketSpec }>();
	private readonly sweeper: NodeJS.Timeout;

	constructor() {
		// A bucket that has refilled holds nothing worth keeping: forget it, or per-user buckets pile up.
		this.sweeper = setInterval(() => {
			const now = performance.now();
			for (const [key, bucket] of this.buckets) if (this.level(bucket, bucket.spec, now) >= bucket.spec.capacity) this.buckets.delete(key);
		}, SWEEP_MS);
		this.sweeper.unref();
	}

	async take(claims: readonly BucketClaim[]): Promise<TakeResult> {
		const now = performance.now();
		const levels: number[] = [];
		let waitMs = 0;
		for (const claim of claims) {
			const bucket = this.buckets.get(claim.key);
			const level = bucket ? this.level(bucket, claim, now) : claim.capacity;
			if (level < 1) waitMs = Math.max(waitMs, ((1 - level) * claim.periodMs) / claim.capacity);
			levels.push(level);
		}
		if (waitMs > 0) return { allowed: false, retryAfterMs: waitMs };
		claims.forEach((claim, index) => this.buckets.set(claim.key, { tokens: levels[index]! - 1, at: now, spec: claim }));
		return ALLOWED;
	}

	private level(bucket: { tokens: number; at: number }, spec: BucketSpec, now: number): number {
		return Math.min(spec.capacity, bucket.tokens + ((now - bucket.at) * spec.capacity) / spec.periodMs);
	}

	async close(): Promise<void> {
		clearInterval(this.sweeper);
	}
}
