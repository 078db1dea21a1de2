/** The address of a Redis server as configured (`session_redis.address`). */
import { parseHostPort, type HostPort } from '../net/hostPort.js';

/** `host:port`, `[v6]:port` or `host` (port 6379), in net/hostPort's strict grammar. */
export function parseAddress(address: string): HostPort {
	return parseHostPort(address, 6379);
}
