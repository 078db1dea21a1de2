/**
 * The address a client reached the proxy by, for the URLs the proxy hands out: the protected-
 * resource metadata and the challenges that name it, and the legacy SSE `endpoint` event.
 * Behind a reverse proxy that address is not the proxy's own. With `trust_proxy_headers`, the
 * first value of `X-Forwarded-Proto`, `X-Forwarded-Host` and `X-Forwarded-Prefix` says what it
 * is (a value that is not a scheme, a host or a path is ignored). Off, the default, those
 * headers are ignored: any client can send them. The Host check against DNS rebinding
 * (net/guard.ts) always reads the real Host header.
 */
import type { IncomingMessage } from 'node:http';

const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::\d{1,5})?$/;
/** Path segments of unreserved characters, sub-delimiters, `:`, `@` and escapes; not `.` or `..`. */
const PREFIX = /^(?:\/(?!\.{1,2}(?:\/|$))[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+\/?$/;

/** The first of a header's comma-separated values, trimmed. */
function firstValue(header: string | string[] | undefined): string | undefined {
	const value = Array.isArray(header) ? header[0] : header;
	return value?.split(',', 1)[0]!.trim() || undefined;
}

export class PublicAddress {
	constructor(private readonly trustProxyHeaders: boolean) {}

	/** `scheme://host[:port]` as the client addressed it. */
	origin(request: IncomingMessage): string {
		const { headers } = request;
		let scheme = 'http';
		let host = headers.host ?? 'localhost';
		if (this.trustProxyHeaders) {
			const forwardedProto = firstValue(headers['x-forwarded-proto'])?.toLowerCase();
			if (forwardedProto === 'http' || forwardedProto === 'https') scheme = forwardedProto;
			const forwardedHost = firstValue(headers['x-forwarded-host']);
			if (forwardedHost && HOST.test(forwardedHost)) host = forwardedHost;
		}
		return `${scheme}://${host}`;
	}

	/** The path the reverse proxy serves the proxy under (`''` when none). */
	prefix(request: IncomingMessage): string {
		if (!this.trustProxyHeaders) return '';
		const prefix = firstValue(request.headers['x-forwarded-prefix']);
		return prefix && PREFIX.test(prefix) ? prefix.replace(/\/$/, '') : '';
	}

	/** The public URL of one of the proxy's own paths. */
	urlOf(request: IncomingMessage, path: string): string {
		return `${this.origin(request)}${this.prefix(request)}${path}`;
	}
}
