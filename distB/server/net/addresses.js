/**
 * The one outbound-address policy. Every URL a user (or a file, or a server) can make Hangar
 * reach goes through it: registries, git hosts, OCI registries and their token realms, identity
 * providers (discovery, JWKS, introspection), remote MCP servers and the egress proxy.
 *
 * Addresses fall into classes from one table of special-purpose ranges (IANA's registries);
 * each caller says which classes it may reach beyond the public Internet, and the check runs
 * on IP literals in the URL and again inside the socket's own DNS lookup, so a name cannot
 * resolve to a public address for the check and a private one for the connection.
 * docs/architecture.md has the table of who may reach what.
 */
import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP } from 'node:net';
const RANGES = [
    ['0.0.0.0', 8, 'ipv4', 'unspecified'],
    ['10.0.0.0', 8, 'ipv4', 'private'],
    ['100.64.0.0', 10, 'ipv4', 'private'], // shared address space (carrier-grade NAT)
    ['127.0.0.0', 8, 'ipv4', 'loopback'],
    ['169.254.0.0', 16, 'ipv4', 'link-local'], // cloud metadata services live here
    ['172.16.0.0', 12, 'ipv4', 'private'],
    ['192.0.0.0', 24, 'ipv4', 'reserved'],
    ['192.0.2.0', 24, 'ipv4', 'reserved'],
    ['192.88.99.0', 24, 'ipv4', 'reserved'],
    ['192.168.0.0', 16, 'ipv4', 'private'],
    ['198.18.0.0', 15, 'ipv4', 'reserved'],
    ['198.51.100.0', 24, 'ipv4', 'reserved'],
    ['203.0.113.0', 24, 'ipv4', 'reserved'],
    ['224.0.0.0', 4, 'ipv4', 'multicast'],
    ['240.0.0.0', 4, 'ipv4', 'reserved'],
    ['::', 128, 'ipv6', 'unspecified'],
    ['::1', 128, 'ipv6', 'loopback'],
    ['64:ff9b::', 96, 'ipv6', 'reserved'], // NAT64: could carry any IPv4 address
    ['2001:db8::', 32, 'ipv6', 'reserved'],
    ['2002::', 16, 'ipv6', 'reserved'], // 6to4: could carry any IPv4 address
    ['fc00::', 7, 'ipv6', 'private'],
    ['fe80::', 10, 'ipv6', 'link-local'],
    ['ff00::', 8, 'ipv6', 'multicast'],
];
const LISTS = new Map();
for (const [network, prefix, family, kind] of RANGES) {
    let list = LISTS.get(kind);
    if (!list)
        LISTS.set(kind, (list = new BlockList()));
    list.addSubnet(network, prefix, family);
}
/** Names that are not IP literals but must be treated as the metadata service's address. */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog']);
/** The class of an IP address; a host name that is not an IP literal is `public` here (resolve it first). */
export function addressClass(address) {
    const host = address.replace(/^\[|\]$/g, '').toLowerCase();
    const family = isIP(host);
    if (family === 0)
        return METADATA_NAMES.has(host) ? 'link-local' : 'public';
    const mapped = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host) : null;
    const [plain, type] = mapped ? [mapped[1], 'ipv4'] : [host, family === 4 ? 'ipv4' : 'ipv6'];
    for (const [kind, list] of LISTS)
        if (list.check(plain, type))
            return kind;
    return 'public';
}
/** Loopback, private, link-local, unspecified, multicast or reserved: anything but the public Internet. */
export function isPrivateAddress(address) {
    return addressClass(address) !== 'public';
}
/** `localhost` (and its subdomains), 127.0.0.0/8 and ::1. */
export function isLoopbackHost(hostname) {
    const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
    return host === 'localhost' || host.endsWith('.localhost') || addressClass(host) === 'loopback';
}
/** The class of `address` when it is out of reach, or undefined when it may be reached. */
export function refusalOf(address, reach) {
    const kind = addressClass(address);
    if (kind === 'public')
        return undefined;
    if (kind === 'link-local' || kind === 'unspecified')
        return kind;
    if (reach.private)
        return undefined;
    if (kind === 'loopback' && reach.loopback)
        return undefined;
    return kind;
}
/** An error of a refused address, with `code` EFORBIDDEN so sockets report it as such. */
export class AddressRefused extends Error {
    code = 'EFORBIDDEN';
}
/**
 * A DNS lookup for sockets and agents that refuses out-of-reach answers. `explain` turns the
 * refusal into the caller's own error (with the setting that would allow it).
 */
export function lookupWithin(reach, explain = (message) => new AddressRefused(message)) {
    return (hostname, options, callback) => {
        dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
            if (error)
                return callback(error, '', 0);
            const allowed = typeof reach === 'function' ? reach(hostname) : reach;
            for (const { address } of addresses) {
                const refused = refusalOf(address, allowed);
                if (refused)
                    return callback(explain(`${hostname} resolves to ${refused} address ${address}`), '', 0);
            }
            if (options.all)
                return callback(null, addresses);
            callback(null, addresses[0].address, addresses[0].family);
        });
    };
}
/** Remote MCP servers and the egress proxy: the LAN and loopback are fine, the metadata service never. */
export const metadataGuardedLookup = lookupWithin({ private: true });
//# sourceMappingURL=addresses.js.map