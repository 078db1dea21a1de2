/**
 * `rate_limit_config` (ToolHive's shape): token buckets for the whole server (`shared`), for
 * each caller (`perUser`, by the token's `sub`) and for each tool (`tools[].shared`,
 * `tools[].perUser`). A bucket holds `maxTokens` and refills continuously, `maxTokens` per
 * `refillPeriod` (a Go duration: `1m`, `10s`, `1h30m`, `500ms`).
 */
import type { z } from 'zod';
import type { RateLimitBucket, RateLimitConfig } from '../../protocol/runConfig.js';
import { parseDuration } from './duration.js';

export interface BucketSpec {
	readonly capacity: number;
	readonly periodMs: number;
}

export interface RateLimits {
	readonly shared?: BucketSpec;
	readonly perUser?: BucketSpec;
	readonly tools: ReadonlyMap<string, { readonly shared?: BucketSpec; readonly perUser?: BucketSpec }>;
}

export class RateLimitConfigError extends Error {
	override readonly name = 'RateLimitConfigError';

	constructor(
		readonly field: string,
		readonly problem: string,
	) {
		super(`${field}: ${problem}`);
	}
}

function bucketOf(bucket: z.infer<typeof RateLimitBucket> | undefined, field: string): BucketSpec | undefined {
	if (!bucket) return undefined;
	const { maxTokens, refillPeriod } = bucket;
	if (maxTokens === undefined || maxTokens < 1) throw new RateLimitConfigError(`${field}.maxTokens`, 'must be 1 or more');
	const periodMs = typeof refillPeriod === 'string' ? parseDuration(refillPeriod) : undefined;
	if (periodMs === undefined || periodMs <= 0) {
		throw new RateLimitConfigError(`${field}.refillPeriod`, 'must be a duration such as "1m", "10s" or "1h30m"');
	}
	return { capacity: maxTokens, periodMs };
}

/** The checked buckets of a configuration; a RateLimitConfigError names the field at fault. */
export function rateLimitsOf(config: z.infer<typeof RateLimitConfig>): RateLimits {
	const tools = new Map<string, { shared?: BucketSpec; perUser?: BucketSpec }>();
	for (const [index, tool] of (config.tools ?? []).entries()) {
		const field = `rate_limit_config.tools[${index}]`;
		if (!tool.name) throw new RateLimitConfigError(`${field}.name`, 'a tool name is required');
		if (tools.has(tool.name)) throw new RateLimitConfigError(`${field}.name`, `${tool.name} is listed twice`);
		const limits = { shared: bucketOf(tool.shared, `${field}.shared`), perUser: bucketOf(tool.perUser, `${field}.perUser`) };
		if (!limits.shared && !limits.perUser) throw new RateLimitConfigError(field, 'give shared or perUser');
		tools.set(tool.name, limits);
	}
	const limits = { shared: bucketOf(config.shared, 'rate_limit_config.shared'), perUser: bucketOf(config.perUser, 'rate_limit_config.perUser'), tools };
	if (!limits.shared && !limits.perUser && tools.size === 0) throw new RateLimitConfigError('rate_limit_config', 'give shared, perUser or tools');
	return limits;
}
