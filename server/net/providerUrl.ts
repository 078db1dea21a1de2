/**
 * Identity provider URLs (OIDC discovery, JWKS, token introspection) under the outbound-address
 * policy:
 *
 * - an issuer or key URL on a loopback host (`localhost`, 127.0.0.0/8, ::1) may use plain
 *   http, for identity providers run on the developer's machine;
 * - any other host needs https, unless `insecureAllowHTTP`;
 * - private and other non-public addresses need `allowPrivateIP`, checked on the URL and again
 *   in the socket's own DNS lookup (`providerLookup`), so a public name cannot lead inside.
 */
import type { LookupFunction } from 'node:net';
import { isLoopbackHost, lookupWithin, refusalOf } from './addresses.js';

export interface ProviderAccess {
	/** Plain http to hosts other than loopback. */
	readonly insecureAllowHTTP?: boolean;
	/** Hosts that are (or resolve to) private addresses. */
	readonly allowPrivateIP?: boolean;
	/** The settings that allow plain http (none: no setting does) and private addresses, named in refusals; default: the OIDC ones. */
	readonly settings?: { readonly insecureAllowHTTP?: string; readonly allowPrivateIP: string };
}

const OIDC_SETTINGS = { insecureAllowHTTP: 'insecureAllowHTTP (--oidc-insecure-allow-http)', allowPrivateIP: 'allowPrivateIP (--oidc-allow-private-ip)' };

export class ProviderError extends Error {
	override readonly name = 'ProviderError';

	constructor(
		message: string,
		/** The HTTP status the provider answered, when it answered one other than 200. */
		readonly status?: number,
	) {
		super(message);
	}
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
		const setting = (access.settings ?? OIDC_SETTINGS).insecureAllowHTTP;
		throw new ProviderError(`plain http is only accepted for loopback hosts; use https for ${url.host}${setting ? `, or set ${setting}` : ''}`);
	}
	const host = url.hostname.replace(/^\[|\]$/g, '');
	const refused = refusalOf(host, reachOf(url.hostname, access));
	if (refused === 'link-local' || refused === 'unspecified') throw new ProviderError(`${host} is a ${refused} address, which no provider URL may reach`);
	if (refused) throw new ProviderError(`${host} is a private address; allow it with ${(access.settings ?? OIDC_SETTINGS).allowPrivateIP}`);
	return url;
}

function reachOf(hostname: string, access: ProviderAccess) {
	return { private: access.allowPrivateIP, loopback: isLoopbackHost(hostname) };
}

/** The socket lookup for a provider: loopback names only to loopback, private addresses only with `allowPrivateIP`. */
export function providerLookup(access: ProviderAccess): LookupFunction {
	return lookupWithin(
		(hostname) => reachOf(hostname, access),
		(message) => new ProviderError(`${message}; allow it with ${(access.settings ?? OIDC_SETTINGS).allowPrivateIP}`),
	);
}
