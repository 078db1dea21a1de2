/**
 * The `fetch` the OAuth client hands the MCP SDK's auth functions: every metadata,
 * registration, device and token URL goes through the outbound-address policy of
 * `net/providerUrl.ts` (http only to loopback, private addresses only when the remote server
 * itself is on one, link-local and metadata addresses never), checked on the URL and again
 * in the socket's DNS lookup. Redirects are not followed; bodies are capped.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { addressClass, isLoopbackHost } from '../../../net/addresses.js';
import { BodyTooLarge, readCapped } from '../../../net/body.js';
import { checkProviderUrl, providerLookup, type ProviderAccess } from '../../../net/providerUrl.js';

const MAX_BYTES = 1024 * 1024;
const TIMEOUT_MS = 30_000;

export type PolicyFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** What the authorization server's URLs may reach: private addresses only when the MCP server is on one. */
export function accessFor(serverUrl: URL): ProviderAccess {
	const host = serverUrl.hostname.replace(/^\[|\]$/g, '');
	const kind = isLoopbackHost(serverUrl.hostname) ? 'loopback' : addressClass(host);
	return { allowPrivateIP: kind === 'private' || kind === 'loopback' };
}

/** A fetch under the outbound-address policy `access`. */
export function policyFetch(access: ProviderAccess): PolicyFetch {
	const lookup = providerLookup(access);
	return async (input, init = {}) => {
		const url = checkProviderUrl(String(input), access);
		const headers: Record<string, string> = { 'User-Agent': 'hangar' };
		new Headers(init.headers).forEach((value, key) => (headers[key] = value));
		const body = typeof init.body === 'string' ? init.body : init.body instanceof URLSearchParams ? init.body.toString() : init.body == null ? undefined : String(init.body);
		if (init.body instanceof URLSearchParams && !Object.keys(headers).some((key) => key.toLowerCase() === 'content-type')) {
			headers['Content-Type'] = 'application/x-www-form-urlencoded';
		}
		const signal = init.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(TIMEOUT_MS)]) : AbortSignal.timeout(TIMEOUT_MS);
		const response = await new Promise<IncomingMessage>((resolve, reject) => {
			const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: init.method ?? 'GET', headers, signal, lookup }, resolve);
			request.once('error', reject);
			request.end(body);
		});
		let bytes: Buffer;
		try {
			bytes = await readCapped(response, MAX_BYTES);
		} catch (error) {
			response.destroy();
			throw error instanceof BodyTooLarge ? new Error(`${url.origin}${url.pathname} answered with more than ${MAX_BYTES} bytes`) : error;
		}
		const responseHeaders = new Headers();
		for (const [key, value] of Object.entries(response.headers)) {
			if (value !== undefined) responseHeaders.set(key, Array.isArray(value) ? value.join(', ') : value);
		}
		const status = response.statusCode ?? 500;
		const nullBody = status === 204 || status === 304;
		const result = new Response(nullBody ? null : new Uint8Array(bytes), { status, headers: responseHeaders });
		Object.defineProperty(result, 'url', { value: url.toString() });
		return result;
	};
}
