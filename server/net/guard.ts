/**
 * DNS-rebinding and cross-origin defence for a server bound to loopback: a request must
 * name the server by the address it is bound to (or `localhost`) in its Host header, and a
 * browser request must come from such an origin. A web page in the user's browser can then
 * neither reach the API through a rebound DNS name nor drive it cross-origin.
 */
import type { IncomingMessage } from 'node:http';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);

export class RequestGuard {
	private readonly allowedHosts: ReadonlySet<string> | undefined;

	/** `port` undefined for a UNIX socket, where clients send `Host: localhost`. */
	constructor(host: string, port: number | undefined) {
		if (WILDCARD_HOSTS.has(host)) {
			this.allowedHosts = undefined; // bound to every interface on purpose: any Host header
			return;
		}
		const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
		const names = new Set([...LOOPBACK_NAMES, bracketed.toLowerCase()]);
		const hosts = new Set<string>();
		for (const name of names) {
			hosts.add(name);
			if (port !== undefined) hosts.add(`${name}:${port}`);
		}
		this.allowedHosts = hosts;
	}

	/** Why the request is refused, or undefined when it may proceed. */
	check(request: IncomingMessage): string | undefined {
		if (!this.allowedHosts) return undefined;
		const host = request.headers.host?.toLowerCase();
		if (!host || !this.allowedHosts.has(host)) {
			return `Host header ${JSON.stringify(request.headers.host ?? '')} does not name this server; use localhost or its bound address`;
		}
		const origin = request.headers.origin;
		if (origin !== undefined && !this.originAllowed(origin)) {
			return `cross-origin request from ${origin} refused`;
		}
		return undefined;
	}

	private originAllowed(origin: string): boolean {
		try {
			const url = new URL(origin);
			return (url.protocol === 'http:' || url.protocol === 'https:') && this.allowedHosts!.has(url.host.toLowerCase());
		} catch {
			return false; // includes the opaque origin "null"
		}
	}
}
