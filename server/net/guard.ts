/**
 * DNS-rebinding and cross-site defence for the REST server and every workload proxy:
 *
 * - the Host header must name the server by the address it is bound to, or a loopback name,
 *   with its port (a server bound to every interface accepts any Host);
 * - a browser request's Origin must be the server's own origin, exactly: scheme, host and
 *   port (`http://localhost` is a different site's origin when the server is on :8080), or
 *   one of a configured list;
 * - a browser request without Origin (a simple GET from `<img>` or `<script>`) is refused
 *   unless the browser says it is same-origin or typed by the user (`Sec-Fetch-Site`).
 *
 * A web page in the user's browser can then neither reach the API through a rebound DNS name
 * nor drive it from another origin, including another port on localhost.
 */
import type { IncomingMessage } from 'node:http';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);
/** `Sec-Fetch-Site` values a browser sends for the server's own pages and for a typed URL. */
const OWN_FETCH_SITES = new Set(['same-origin', 'none']);

export interface GuardOptions {
	/** Origins allowed besides the server's own (`scheme://host[:port]`), e.g. a web UI's. */
	readonly allowedOrigins?: readonly string[];
}

export class RequestGuard {
	/** Accepted Host headers; undefined when bound to every interface (any Host). */
	private readonly allowedHosts: ReadonlySet<string> | undefined;
	private readonly allowedOrigins: ReadonlySet<string>;

	/** `port` undefined for a UNIX socket, where clients send `Host: localhost` and no browser can reach. */
	constructor(
		host: string,
		private readonly port: number | undefined,
		options: GuardOptions = {},
	) {
		this.allowedOrigins = new Set((options.allowedOrigins ?? []).map(originOf).filter((origin): origin is string => origin !== undefined));
		if (WILDCARD_HOSTS.has(host)) {
			this.allowedHosts = undefined; // bound to every interface on purpose
			return;
		}
		const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
		const hosts = new Set<string>();
		for (const name of new Set([...LOOPBACK_NAMES, bracketed.toLowerCase()])) {
			if (port === undefined || port === 80) hosts.add(name);
			if (port !== undefined) hosts.add(`${name}:${port}`);
		}
		this.allowedHosts = hosts;
	}

	/** Why the request is refused, or undefined when it may proceed. */
	check(request: IncomingMessage): string | undefined {
		const host = request.headers.host?.toLowerCase();
		if (this.allowedHosts && (!host || !this.allowedHosts.has(host))) {
			return `Host header ${JSON.stringify(request.headers.host ?? '')} does not name this server; use localhost or its bound address`;
		}
		const origin = request.headers.origin;
		if (origin !== undefined) {
			return this.originAllowed(origin, host) ? undefined : `cross-origin request from ${origin} refused`;
		}
		const site = request.headers['sec-fetch-site'];
		if (typeof site === 'string' && !OWN_FETCH_SITES.has(site.toLowerCase())) {
			return `a ${site} browser request is refused; call this server from its own origin or a program`;
		}
		return undefined;
	}

	private originAllowed(origin: string, host: string | undefined): boolean {
		const normalised = originOf(origin);
		if (!normalised) return false; // includes the opaque origin "null"
		if (this.allowedOrigins.has(normalised)) return true;
		// The server's own origins are those of a page it served: http, a name it answers to, its
		// port. Bound to every interface, that is the Host it was reached by. No browser reaches a
		// UNIX socket.
		if (this.port === undefined) return false;
		const names = this.allowedHosts ? [...this.allowedHosts].filter((name) => name.endsWith(`:${this.port}`)) : host ? [host] : [];
		return names.some((name) => originOf(`http://${name}`) === normalised);
	}
}

/** `scheme://host[:port]` with the default port dropped, or undefined for anything else. */
function originOf(raw: string): string | undefined {
	try {
		const url = new URL(raw);
		if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
		return url.origin.toLowerCase();
	} catch {
		return undefined;
	}
}
