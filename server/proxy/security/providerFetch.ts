/**
 * Reaching an identity provider (discovery document, JWKS, token introspection) under
 * Hangar's address rules:
 *
 * - an issuer or key URL on a loopback host (`localhost`, 127.0.0.0/8, ::1) may use plain
 *   http, for identity providers run on the developer's machine;
 * - any other host needs https, unless `insecureAllowHTTP`;
 * - private, link-local and other non-public addresses need `allowPrivateIP`, checked on the
 *   URL and again in the socket's own DNS lookup, so a public name cannot lead inside.
 *
 * Redirects are not followed: a provider's metadata and keys are served where it says.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPrivateAddress } from '../../registry/fetch.js';

export interface ProviderAccess {
	/** Plain http to hosts other than loopback. */
	readonly insecureAllowHTTP?: boolean;
	/** Hosts that are (or resolve to) private addresses. */
	readonly allowPrivateIP?: boolean;
}

const MAX_BYTES = 1024 * 1024;
const PRIVATE_HINT = 'allow it with allowPrivateIP (--oidc-allow-private-ip)';

export class ProviderError extends Error {
	override readonly name = 'ProviderError';
}

function bare(hostname: string): string {
	return hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

function isLoopbackAddress(address: string): boolean {
	const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
	const plain = mapped ? mapped[1]! : address;
	return isIP(plain) === 4 ? plain.startsWith('127.') : plain === '::1';
}

/** `localhost`, 127.0.0.0/8 and ::1. */
export function isLoopbackHost(hostname: string): boolean {
	const host = bare(hostname);
	return host === 'localhost' || host.endsWith('.localhost') || isLoopbackAddress(host);
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
	const host = bare(url.hostname);
	if (!loopback && isIP(host) && isPrivateAddress(host) && !access.allowPrivateIP) {
		throw new ProviderError(`${host} is a private address; ${PRIVATE_HINT}`);
	}
	return url;
}

/** A DNS lookup that refuses private addresses (loopback too, unless the name is a loopback name). */
function guardedLookup(access: ProviderAccess): LookupFunction {
	return (hostname, options, callback) => {
		dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
			if (error) return callback(error, '', 0);
			const loopbackName = isLoopbackHost(hostname);
			const blocked = addresses.find(({ address }) => {
				if (access.allowPrivateIP) return false;
				if (loopbackName) return !isLoopbackAddress(address);
				return isPrivateAddress(address);
			});
			if (blocked) {
				const refusal = new ProviderError(`${hostname} resolves to private address ${blocked.address}; ${PRIVATE_HINT}`);
				return callback(refusal as NodeJS.ErrnoException, '', 0);
			}
			if (options.all) return (callback as unknown as (error: null, all: LookupAddress[]) => void)(null, addresses);
			callback(null, addresses[0]!.address, addresses[0]!.family);
		});
	};
}

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
			const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: sent.method, headers, signal, lookup: guardedLookup(access) }, resolve);
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
