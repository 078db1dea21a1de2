import { isLoopbackHost, lookupWithin, refusalOf } from './addresses.js';
const PRIVATE_HINT = 'allow it with allowPrivateIP (--oidc-allow-private-ip)';
export class ProviderError extends Error {
    name = 'ProviderError';
}
/** Checks a provider URL before any connection; throws a ProviderError that says what to change. */
export function checkProviderUrl(raw, access) {
    let url;
    try {
        url = new URL(raw);
    }
    catch {
        throw new ProviderError(`${JSON.stringify(raw)} is not a URL`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
        throw new ProviderError(`${url.protocol} URLs are not supported; use https`);
    if (url.username || url.password)
        throw new ProviderError('credentials in the URL are not allowed');
    const loopback = isLoopbackHost(url.hostname);
    if (url.protocol === 'http:' && !loopback && !access.insecureAllowHTTP) {
        throw new ProviderError(`plain http is only accepted for loopback hosts; use https for ${url.host}, or set insecureAllowHTTP (--oidc-insecure-allow-http)`);
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const refused = refusalOf(host, reachOf(url.hostname, access));
    if (refused === 'link-local' || refused === 'unspecified')
        throw new ProviderError(`${host} is a ${refused} address, which no provider URL may reach`);
    if (refused)
        throw new ProviderError(`${host} is a private address; ${PRIVATE_HINT}`);
    return url;
}
function reachOf(hostname, access) {
    return { private: access.allowPrivateIP, loopback: isLoopbackHost(hostname) };
}
/** The socket lookup for a provider: loopback names only to loopback, private addresses only with `allowPrivateIP`. */
export function providerLookup(access) {
    return lookupWithin((hostname) => reachOf(hostname, access), (message) => new ProviderError(`${message}; ${PRIVATE_HINT}`));
}
//# sourceMappingURL=providerUrl.js.map