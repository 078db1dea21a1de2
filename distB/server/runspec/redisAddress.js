/** The address of a Redis server as configured (`session_redis.address`). */
/** `host:port`, `[v6]:port` or `host` (port 6379). */
export function parseAddress(address) {
    const match = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d{1,5}))?$/.exec(address.trim());
    const port = Number(match?.[3] ?? 6379);
    if (!match || port < 1 || port > 65535)
        throw new Error(`${JSON.stringify(address)} is not host:port`);
    return { host: match[1] ?? match[2], port };
}
//# sourceMappingURL=redisAddress.js.map