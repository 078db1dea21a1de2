/**
 * Reaching an identity provider (discovery document, JWKS, token introspection) under the
 * outbound-address policy of `net/providerUrl.ts`. Redirects are not followed: a provider's
 * metadata and keys are served where it says.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkProviderUrl, ProviderError, providerLookup, type ProviderAccess } from '../../net/providerUrl.js';

const MAX_BYTES = 1024 * 1024;

/** A request to a provider beyond a plain GET. */
export interface ProviderRequest {
	readonly method: 'GET' | 'POST';
	readonly headers?: Readonly<Record<string, string>>;
	readonly body?: string;
}

/** GETs a provider document and parses it as JSON; any failure is a ProviderError naming the URL. */
export function fetchProviderJson(url: URL, access: ProviderAccess, timeoutMs: number): Promise<unknown> {
	return requestProviderJson(url, { method: 'GET' }, access, timeoutMs);
}

/** Sends a request to a provider and parses its 200 answer as JSON; any failure is a ProviderError naming the URL. */
export async function requestProviderJson(url: URL, sent: ProviderRequest, access: ProviderAccess, timeoutMs: number): Promise<unknown> {
	checkProviderUrl(url.toString(), access);
	const signal = AbortSignal.timeout(timeoutMs);
	const where = `${url.origin}${url.pathname}`;
	const headers = { Accept: 'application/json', 'User-Agent': 'hangar', ...sent.headers };
	let response: IncomingMessage;
	try {
		response = await new Promise<IncomingMessage>((resolve, reject) => {
			const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: sent.method, headers, signal, lookup: providerLookup(access) }, resolve);
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
		throw new ProviderError(`${where} answered ${response.statusCode}`);
	}
	const chunks: Buffer[] = [];
	let size = 0;
	try {
		for await (const chunk of response as AsyncIterable<Buffer>) {
			size += chunk.length;
			if (size > MAX_BYTES) {
				response.destroy();
				throw new ProviderError(`${where} answered with more than ${MAX_BYTES} bytes`);
			}
			chunks.push(chunk);
		}
	} catch (error) {
		if (error instanceof ProviderError) throw error;
		throw new ProviderError(`${where} is unreachable: ${(error as Error).message}`);
	}
	try {
		return JSON.parse(Buffer.concat(chunks).toString('utf8'));
	} catch {
		throw new ProviderError(`${where} did not answer with JSON`);
	}
}
