/**
 * Addresses no MCP server URL may point at, checked on the URL when a workload is created and
 * on resolved addresses when the proxy connects (so DNS cannot be used to get around it).
 */
import { lookup, type LookupAddress, type LookupOneOptions } from 'node:dns';
import { isIP } from 'node:net';

/** Link-local (169.254/16, fe80::/10, incl. cloud metadata) and unspecified addresses. */
export function isForbiddenAddress(host: string): boolean {
	const lower = host.toLowerCase();
	if (lower === 'metadata.google.internal') return true;
	const version = isIP(lower);
	if (version === 4) return lower.startsWith('169.254.') || lower === '0.0.0.0';
	if (version === 6) {
		const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
		if (mapped) return isForbiddenAddress(mapped[1]!);
		return lower === '::' || /^fe[89ab][0-9a-f]:/.test(lower);
	}
	return false;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A DNS lookup (for sockets and agents) that refuses forbidden addresses among the answers. */
export function guardedLookup(hostname: string, options: LookupOneOptions & { all?: boolean }, callback: LookupCallback): void {
	lookup(hostname, { ...options, all: true }, (error, addresses) => {
		if (error) return callback(error, []);
		const allowed = addresses.filter((address) => !isForbiddenAddress(address.address));
		if (allowed.length === 0) return callback(Object.assign(new Error(`${hostname} resolves to a forbidden address`), { code: 'EFORBIDDEN' }), []);
		if (options.all) callback(null, allowed);
		else callback(null, allowed[0]!.address, allowed[0]!.family);
	});
}
