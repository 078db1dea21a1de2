/**
 * Fetching registry documents over HTTP(S) with an SSRF guard.
 *
 * Registry URLs come from users and from files they point at, so by default only `https://`
 * is accepted and every address a host name resolves to must be public: the check runs in the
 * socket's own DNS lookup, so a name cannot resolve to a public address for the check and a
 * private one for the connection. Redirects are followed by hand and checked the same way.
 * `allowPrivate` lifts both rules (local mirrors, tests).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { lookupWithin, refusalOf } from '../net/addresses.js';
import { BodyTooLarge, readCapped } from '../net/body.js';
import { SourceError } from './errors.js';

export interface FetchOptions {
	/** Allow plain `http://` and hosts that resolve to private, loopback or link-local addresses. */
	readonly allowPrivate: boolean;
	readonly timeoutMs: number;
	readonly signal?: AbortSignal;
	/** Largest body accepted. */
	readonly maxBytes?: number;
}

export interface FetchedJson {
	readonly status: number;
	/** The parsed body, or `undefined` when it is not JSON. */
	readonly json: unknown;
	/** The body as text (an HTML page, say). */
	readonly text: string;
	readonly url: string;
}

const MAX_REDIRECTS = 5;
const ALLOW_HINT = 'allow private addresses (allow_private_ip, --allow-private-ip)';
const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;

/**
 * Checks a URL before any connection: the scheme, and the host when it is an IP literal (which
 * skips DNS). Throws a `refused` SourceError naming `allow_private_ip`.
 */
export function checkUrl(raw: string, allowPrivate: boolean): URL {
	let url: URL;
	try {
		url = new URL(raw);
	} catch {
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
	if (refused === 'link-local' || refused === 'unspecified') throw new SourceError('refused', `${host} is a ${refused} address, which no registry URL may reach`);
	if (allowPrivate) return url;
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
export async function fetchJson(raw: string, options: FetchOptions, headers: Record<string, string> = {}): Promise<FetchedJson> {
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
		let json: unknown;
		try {
			json = JSON.parse(text);
		} catch {
			json = undefined;
		}
		return { status: response.statusCode ?? 0, json, text, url: url.toString() };
	}
	throw new SourceError('invalid', `too many redirects from ${raw}`);
}

function get(url: URL, options: FetchOptions, headers: Record<string, string>, signal: AbortSignal): Promise<IncomingMessage> {
	const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
	return new Promise((resolve, reject) => {
		const outgoing = request(
			url,
			{
				method: 'GET',
				headers: { Accept: 'application/json', 'User-Agent': 'hangar', ...headers },
				signal,
				lookup: options.allowPrivate ? lookups.private : lookups.public,
			},
			resolve,
		);
		outgoing.once('error', (error) => reject(describeNetworkError(error, url, signal)));
		outgoing.end();
	});
}

async function readBody(response: IncomingMessage, maxBytes: number, url: URL, signal: AbortSignal): Promise<string> {
	try {
		return (await readCapped(response, maxBytes)).toString('utf8');
	} catch (error) {
		if (!(error instanceof BodyTooLarge)) throw describeNetworkError(error as Error, url, signal);
		response.destroy();
		throw new SourceError('invalid', `${url.host} answered with more than ${maxBytes} bytes`);
	}
}

function describeNetworkError(error: Error, url: URL, signal: AbortSignal): SourceError {
	if (error instanceof SourceError) return error;
	if (signal.aborted) {
		const reason = signal.reason as Error | undefined;
		if (reason?.name === 'TimeoutError') return new SourceError('timeout', `registry at ${url.origin} did not answer in time`);
		return new SourceError('cancelled', 'cancelled');
	}
	const code = (error as NodeJS.ErrnoException).code;
	return new SourceError('unreachable', `registry at ${url.origin} is unreachable: ${code ?? error.message}`);
}
