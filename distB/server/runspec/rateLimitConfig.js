import { parseDuration } from './duration.js';
export class RateLimitConfigError extends Error {
    field;
    problem;
    name = 'RateLimitConfigError';
    constructor(field, problem) {
        super(`${field}: ${problem}`);
        this.field = field;
        this.problem = problem;
    }
}
function bucketOf(bucket, field) {
    if (!bucket)
        return undefined;
    const { maxTokens, refillPeriod } = bucket;
    if (maxTokens === undefined || maxTokens < 1)
        throw new RateLimitConfigError(`${field}.maxTokens`, 'must be 1 or more');
    const periodMs = typeof refillPeriod === 'string' ? parseDuration(refillPeriod) : undefined;
    if (periodMs === undefined || periodMs <= 0) {
        throw new RateLimitConfigError(`${field}.refillPeriod`, 'must be a duration such as "1m", "10s" or "1h30m"');
    }
    return { capacity: maxTokens, periodMs };
}
/** The checked buckets of a configuration; a RateLimitConfigError names the field at fault. */
export function rateLimitsOf(config) {
    const tools = new Map();
    for (const [index, tool] of (config.tools ?? []).entries()) {
        const field = `rate_limit_config.tools[${index}]`;
        if (!tool.name)
            throw new RateLimitConfigError(`${field}.name`, 'a tool name is required');
        if (tools.has(tool.name))
            throw new RateLimitConfigError(`${field}.name`, `${tool.name} is listed twice`);
        const limits = { shared: bucketOf(tool.shared, `${field}.shared`), perUser: bucketOf(tool.perUser, `${field}.perUser`) };
        if (!limits.shared && !limits.perUser)
            throw new RateLimitConfigError(field, 'give shared or perUser');
        tools.set(tool.name, limits);
    }
    const limits = { shared: bucketOf(config.shared, 'rate_limit_config.shared'), perUser: bucketOf(config.perUser, 'rate_limit_config.perUser'), tools };
    if (!limits.shared && !limits.perUser && tools.size === 0)
        throw new RateLimitConfigError('rate_limit_config', 'give shared, perUser or tools');
    return limits;
}
//# sourceMappingURL=rateLimitConfig.js.map