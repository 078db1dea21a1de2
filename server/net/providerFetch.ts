/**
 * Reaching a provider (an identity provider's discovery document, JWKS and token introspection;
 * an aggregate's embeddings endpoint; a workload's webhooks) under the outbound-address policy of `providerUrl.ts`.
 * Redirects are not followed: a provider serves where it says.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BodyTooLarge, readCapped } from './body.js';
import { checkProviderUrl, ProviderError, providerLookup, type ProviderAccess } from './providerUrl.js';

const MAX_BYTES = 1024 * 1024;

/** A request to a provider beyond a plain GET. */
export interface ProviderRequest {
	readonly method: 'GET' | 'POST';
	readonly headers?: Readonly<Record<string, string>>;
	readonly body?: string;
	/** TLS settings of an https request: a CA bundle, a client certificate, or no verification at all. */
	readonly tls?: { readonly ca?: Buffer; readonly cert?: Buffer; readonly key?: Buffer; readonly rejectUnauthorized?: boolean };
}

/** GETs a provider document and parses it as JSON; any failure is a ProviderError naming the URL. */
export function fetchProviderJson(url: URL, access: ProviderAccess, timeoutMs: number): Promise<unknown> {
	return requestProviderJson(url, { method: 'GET' }, access, timeoutMs);
}

/** Sends a request to a provider and parses its 200 answer as JSON; any failure is a ProviderError naming the URL. */
export async function requestProviderJson(url: URL, sent: ProviderRequest, access: ProviderAccess, timeoutMs: number, maxBytes = MAX_BYTES): Promise<unknown> {
	checkProviderUrl(url.toString(), access);
	const signal = AbortSignal.timeout(timeoutMs);
	const where = `${url.origin}${url.pathname}`;
	const headers = { Accept: 'application/json', 'User-Agent': 'hangar', ...sent.headers };
	let response: IncomingMessage;
	try {
		response = await new Promise<IncomingMessage>((resolve, reject) => {
			const options = { method: sent.method, headers, signal, lookup: providerLookup(access) };
			const request = url.protocol === 'https:' ? httpsRequest(url, { ...options, ...sent.tls }, resolve) : httpRequest(url, options, resolve);
			request.once('error', reject);
			request.end(sent.body);
		});
	} catch (error) {
		if (error instanceof ProviderError) throw error;
		const reason = signal.aborted ? `no answer within ${timeoutMs / 1000} s` : ((error as NodeJS.ErrnoException).code ?? (error as Error).message);
		throw new ProviderError(`${where} is unreachable: ${reason}`);
	}
	if (response.statusCode !== 200) {
		response.resume();
		throw new ProviderError(`${where} answered ${response.statusCode}`, response.statusCode);
	}
	let body: Buffer;
	try {
		body = await readCapped(response, maxBytes);
	} catch (error) {
		if (!(error instanceof BodyTooLarge)) throw new ProviderError(`${where} is unreachable: ${(error as Error).message}`);
		response.destroy();
		throw new ProviderError(`${where} answered with more than ${maxBytes} bytes`);
	}
	try {
		return JSON.parse(body.toString('utf8'));
	} catch {
		throw new ProviderError(`${where} did not answer with JSON`);
	}
}
