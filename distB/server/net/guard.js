const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);
/** `Sec-Fetch-Site` values a browser sends for the server's own pages and for a typed URL. */
const OWN_FETCH_SITES = new Set(['same-origin', 'none']);
export class RequestGuard {
    port;
    /** Accepted Host headers; undefined when bound to every interface (any Host). */
    allowedHosts;
    allowedOrigins;
    /** `port` undefined for a UNIX socket, where clients send `Host: localhost` and no browser can reach. */
    constructor(host, port, options = {}) {
        this.port = port;
        this.allowedOrigins = new Set((options.allowedOrigins ?? []).map(originOf).filter((origin) => origin !== undefined));
        if (WILDCARD_HOSTS.has(host)) {
            this.allowedHosts = undefined; // bound to every interface on purpose
            return;
        }
        const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
        const hosts = new Set();
        for (const name of new Set([...LOOPBACK_NAMES, bracketed.toLowerCase()])) {
            if (port === undefined || port === 80)
                hosts.add(name);
            if (port !== undefined)
                hosts.add(`${name}:${port}`);
        }
        this.allowedHosts = hosts;
    }
    /** Why the request is refused, or undefined when it may proceed. */
    check(request) {
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
    originAllowed(origin, host) {
        const normalised = originOf(origin);
        if (!normalised)
            return false; // includes the opaque origin "null"
        if (this.allowedOrigins.has(normalised))
            return true;
        // The server's own origins are those of a page it served: http, a name it answers to, its
        // port. Bound to every interface, that is the Host it was reached by. No browser reaches a
        // UNIX socket.
        if (this.port === undefined)
            return false;
        const names = this.allowedHosts ? [...this.allowedHosts].filter((name) => name.endsWith(`:${this.port}`)) : host ? [host] : [];
        return names.some((name) => originOf(`http://${name}`) === normalised);
    }
}
/** `scheme://host[:port]` with the default port dropped, or undefined for anything else. */
function originOf(raw) {
    try {
        const url = new URL(raw);
        if (url.protocol !== 'http:' && url.protocol !== 'https:')
            return undefined;
        return url.origin.toLowerCase();
    }
    catch {
        return undefined;
    }
}
//# sourceMappingURL=guard.js.map