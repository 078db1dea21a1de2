/**
 * Fetching registry documents over HTTP(S) with an SSRF guard.
 *
 * Registry URLs come from users and from files they point at, so by default only `https://`
 * is accepted and every address a host name resolves to must be public: the check runs in the
 * socket's own DNS lookup, so a name cannot resolve to a public address for the check and a
 * private one for the connection. Redirects are followed by hand and checked the same way.
 * `allowPrivate` lifts both rules (local mirrors, tests).
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { lookupWithin, refusalOf } from '../net/addresses.js';
import { BodyTooLarge, readCapped } from '../net/body.js';
import { SourceError } from './errors.js';
const MAX_REDIRECTS = 5;
const ALLOW_HINT = 'allow private addresses (allow_private_ip, --allow-private-ip)';
const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
/**
 * Checks a URL before any connection: the scheme, and the host when it is an IP literal (which
 * skips DNS). Throws a `refused` SourceError naming `allow_private_ip`.
 */
export function checkUrl(raw, allowPrivate) {
    let url;
    try {
        url = new URL(raw);
    }
    catch {
        throw new SourceError('invalid_url', `invalid URL: ${raw}`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
        throw new SourceError('invalid_url', `unsupported URL scheme ${url.protocol} in ${raw}`);
    }
    if (url.username || url.password) {
        throw new SourceError('invalid_url', `credentials in registry URLs are not accepted: ${url.host}`);
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const refused = refusalOf(host, { private: allowPrivate });
    if (refused === 'link-local' || refused === 'unspecified')
        throw new SourceError('refused', `${host} is a ${refused} address, which no registry URL may reach`);
    if (allowPrivate)
        return url;
    if (url.protocol === 'http:') {
        throw new SourceError('refused', `plain http:// is refused for ${url.host}; use https:// or ${ALLOW_HINT}`);
    }
    if (refused) {
        throw new SourceError('refused', `${host} is a private or loopback address; to use it, ${ALLOW_HINT}`);
    }
    return url;
}
/** The socket's DNS lookup: private answers need `allowPrivate`; link-local ones are never reached. */
const lookups = {
    private: lookupWithin({ private: true }, (message) => new SourceError('refused', message)),
    public: lookupWithin({}, (message) => new SourceError('refused', `${message}; to use it, ${ALLOW_HINT}`)),
};
/** GETs `url` and parses the body as JSON, following redirects under the same guard. */
export async function fetchJson(raw, options, headers = {}) {
    const signals = [AbortSignal.timeout(options.timeoutMs), ...(options.signal ? [options.signal] : [])];
    const signal = AbortSignal.any(signals);
    let url = checkUrl(raw, options.allowPrivate);
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
        const response = await get(url, options, headers, signal);
        const location = response.headers.location;
        if (response.statusCode && response.statusCode >= 300 && response.statusCode < 400 && location) {
            response.resume();
            url = checkUrl(new URL(location, url).toString(), options.allowPrivate);
            continue;
        }
        const text = await readBody(response, options.maxBytes ?? DEFAULT_MAX_BYTES, url, signal);
        let json;
        try {
            json = JSON.parse(text);
        }
        catch {
            json = undefined;
        }
        return { status: response.statusCode ?? 0, json, url: url.toString() };
    }
    throw new SourceError('invalid', `too many redirects from ${raw}`);
}
function get(url, options, headers, signal) {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
        const outgoing = request(url, {
            method: 'GET',
            headers: { Accept: 'application/json', 'User-Agent': 'hangar', ...headers },
            signal,
            lookup: options.allowPrivate ? lookups.private : lookups.public,
        }, resolve);
        outgoing.once('error', (error) => reject(describeNetworkError(error, url, signal)));
        outgoing.end();
    });
}
async function readBody(response, maxBytes, url, signal) {
    try {
        return (await readCapped(response, maxBytes)).toString('utf8');
    }
    catch (error) {
        if (!(error instanceof BodyTooLarge))
            throw describeNetworkError(error, url, signal);
        response.destroy();
        throw new SourceError('invalid', `${url.host} answered with more than ${maxBytes} bytes`);
    }
}
function describeNetworkError(error, url, signal) {
    if (error instanceof SourceError)
        return error;
    if (signal.aborted) {
        const reason = signal.reason;
        if (reason?.name === 'TimeoutError')
            return new SourceError('timeout', `registry at ${url.origin} did not answer in time`);
        return new SourceError('cancelled', 'cancelled');
    }
    const code = error.code;
    return new SourceError('unreachable', `registry at ${url.origin} is unreachable: ${code ?? error.message}`);
}
//# sourceMappingURL=fetch.js.map