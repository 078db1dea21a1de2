const SWEEP_MS = 60_000;
const ALLOWED = { allowed: true };
export class LocalBuckets {
    buckets = new Map();
    sweeper;
    constructor() {
        // A bucket that has refilled holds nothing worth keeping: forget it, or per-user buckets pile up.
        this.sweeper = setInterval(() => {
            const now = performance.now();
            for (const [key, bucket] of this.buckets)
                if (this.level(bucket, bucket.spec, now) >= bucket.spec.capacity)
                    this.buckets.delete(key);
        }, SWEEP_MS);
        this.sweeper.unref();
    }
    async take(claims) {
        const now = performance.now();
        const levels = [];
        let waitMs = 0;
        for (const claim of claims) {
            const bucket = this.buckets.get(claim.key);
            const level = bucket ? this.level(bucket, claim, now) : claim.capacity;
            if (level < 1)
                waitMs = Math.max(waitMs, ((1 - level) * claim.periodMs) / claim.capacity);
            levels.push(level);
        }
        if (waitMs > 0)
            return { allowed: false, retryAfterMs: waitMs };
        claims.forEach((claim, index) => this.buckets.set(claim.key, { tokens: levels[index] - 1, at: now, spec: claim }));
        return ALLOWED;
    }
    level(bucket, spec, now) {
        return Math.min(spec.capacity, bucket.tokens + ((now - bucket.at) * spec.capacity) / spec.periodMs);
    }
    async close() {
        clearInterval(this.sweeper);
    }
}
//# sourceMappingURL=tokenBuckets.js.map