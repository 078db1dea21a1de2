/**
 * The outbound policy for identity providers (OIDC discovery, JWKS, token introspection):
 *
 * - an issuer or key URL on a loopback host (`localhost`, 127.0.0.0/8, ::1) may use plain
 *   http, for identity providers run on the developer's machine, and must resolve to loopback;
 * - any other host needs https, unless `insecureAllowHTTP`;
 * - private, link-local and other non-public addresses need `allowPrivateIP`, checked on the
 *   URL here and again in the socket's own DNS lookup (`providerLookup`).
 *
 * Read by the workloads service when a workload is created and by the proxy on every fetch.
 */
import { ANY_ADDRESS, checkedLookup, isLoopbackHost, PUBLIC_ONLY, refusedHost, type AddressAllowance } from './addresses.js';

export interface ProviderAccess {
	/** Plain http to hosts other than loopback. */
	readonly insecureAllowHTTP?: boolean;
	/** Hosts that are (or resolve to) private addresses. */
	readonly allowPrivateIP?: boolean;
}

const PRIVATE_HINT = 'allow it with allowPrivateIP (--oidc-allow-private-ip)';
const LOOPBACK_ONLY: AddressAllowance = { loopback: true, loopbackOnly: true };

export class ProviderError extends Error {
	override readonly name = 'ProviderError';
}

function allowanceFor(hostname: string, access: ProviderAccess): AddressAllowance {
	if (access.allowPrivateIP) return ANY_ADDRESS;
	return isLoopbackHost(hostname) ? LOOPBACK_ONLY : PUBLIC_ONLY;
}

/** Checks a provider URL before any connection; throws a ProviderError that says what to change. */
export function checkProviderUrl(raw: string, access: ProviderAccess): URL {
	let url: URL;
	try {
		url = new URL(raw);
	} catch {
		throw new ProviderError(`${JSON.stringify(raw)} is not a URL`);
	}
	if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ProviderError(`${url.protocol} URLs are not supported; use https`);
	if (url.username || url.password) throw new ProviderError('credentials in the URL are not allowed');
	const loopback = isLoopbackHost(url.hostname);
	if (url.protocol === 'http:' && !loopback && !access.insecureAllowHTTP) {
		throw new ProviderError(`plain http is only accepted for loopback hosts; use https for ${url.host}, or set insecureAllowHTTP (--oidc-insecure-allow-http)`);
	}
	if (!loopback && refusedHost(url.hostname, allowanceFor(url.hostname, access))) {
		throw new ProviderError(`${url.hostname.replace(/^\[|\]$/g, '').toLowerCase()} is a private address; ${PRIVATE_HINT}`);
	}
	return url;
}

/** A DNS lookup that refuses private addresses (loopback too, unless the name is a loopback name). */
export function providerLookup(access: ProviderAccess) {
	return checkedLookup(
		(hostname) => allowanceFor(hostname, access),
		(hostname, address) => new ProviderError(`${hostname} resolves to private address ${address}; ${PRIVATE_HINT}`),
	);
}
