/**
 * Addresses no MCP server URL may point at, checked on the URL when a workload is created and
 * on resolved addresses when the proxy connects (so DNS cannot be used to get around it).
 */
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
