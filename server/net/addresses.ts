/**
 * Hangar's one outbound-address policy: every user-supplied URL (registries, skills from git
 * and OCI, identity providers, remote MCP servers, a workload's egress) is checked here.
 *
 * One table classifies an address; each use says which classes it may reach (docs/architecture.md
 * has the table of uses). The check runs on the URL (an IP literal skips DNS) and again in the
 * socket's own DNS lookup, so a name cannot resolve to an allowed address for the check and a
 * refused one for the connection.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** What an address is, for the policy; `public` is everything the table does not name. */
export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'unspecified' | 'reserved';

/** The ranges, strictest of the rules Hangar had before they were merged (192.0.0.0/24, not /16). */
const RANGES: ReadonlyArray<readonly [network: string, prefix: number, family: 'ipv4' | 'ipv6', kind: Exclude<AddressClass, 'public'>]> = [
	['0.0.0.0', 8, 'ipv4', 'unspecified'],
	['127.0.0.0', 8, 'ipv4', 'loopback'],
	['10.0.0.0', 8, 'ipv4', 'private'],
	['100.64.0.0', 10, 'ipv4', 'private'], // carrier-grade NAT, shared address space
	['172.16.0.0', 12, 'ipv4', 'private'],
	['192.168.0.0', 16, 'ipv4', 'private'],
	['192.0.0.0', 24, 'ipv4', 'private'], // IETF protocol assignments
	['198.18.0.0', 15, 'ipv4', 'private'], // benchmarking
	['169.254.0.0', 16, 'ipv4', 'link-local'], // includes cloud metadata (169.254.169.254)
	['224.0.0.0', 3, 'ipv4', 'reserved'], // multicast and 240/4
	['::', 128, 'ipv6', 'unspecified'],
	['::1', 128, 'ipv6', 'loopback'],
	['fc00::', 7, 'ipv6', 'private'], // unique local
	['fe80::', 10, 'ipv6', 'link-local'],
	['ff00::', 8, 'ipv6', 'reserved'], // multicast
];

const TABLE = new Map<Exclude<AddressClass, 'public'>, BlockList>();
for (const [network, prefix, family, kind] of RANGES) {
	const list = TABLE.get(kind) ?? new BlockList();
	list.addSubnet(network, prefix, family);
	TABLE.set(kind, list);
}

/** Host names that always mean a cloud metadata service. */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog']);

/** The class of an IP address (IPv4-mapped IPv6 as its IPv4); `public` for anything else, names included. */
export function classifyAddress(address: string): AddressClass {
	const bare = address.replace(/^\[|\]$/g, '').toLowerCase();
	const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
	const plain = mapped ? mapped[1]! : bare;
	const family = isIP(plain);
	if (family === 0) return 'public';
	for (const [kind, list] of TABLE) if (list.check(plain, family === 4 ? 'ipv4' : 'ipv6')) return kind;
	return 'public';
}

/** True for every address the table names: loopback, private, link-local, unspecified, reserved. */
export function isPrivateAddress(address: string): boolean {
	return classifyAddress(address) !== 'public';
}

/** `localhost` (and `*.localhost`), 127.0.0.0/8 and ::1. */
export function isLoopbackHost(hostname: string): boolean {
	const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
	return host === 'localhost' || host.endsWith('.localhost') || classifyAddress(host) === 'loopback';
}

/** The classes one use of the network may reach besides public addresses. */
export interface AddressAllowance {
	readonly loopback?: boolean;
	readonly private?: boolean;
	readonly linkLocal?: boolean;
	/** Refuse public addresses too: a loopback name must stay on this machine. */
	readonly loopbackOnly?: boolean;
}

/** Everything: for sources the user explicitly allowed to be private (allow_private_ip, development mode). */
export const ANY_ADDRESS: AddressAllowance = { loopback: true, private: true, linkLocal: true };
/** Public only: registries, git and OCI sources by default. */
export const PUBLIC_ONLY: AddressAllowance = {};
/** Remote MCP servers and egress: the LAN and this machine, never link-local (cloud metadata). */
export const NOT_LINK_LOCAL: AddressAllowance = { loopback: true, private: true };

/** The class that makes `address` refused under `allowance`, or undefined when it may be reached. */
export function refusedClass(address: string, allowance: AddressAllowance): AddressClass | undefined {
	const kind = classifyAddress(address);
	switch (kind) {
		case 'public':
			return allowance.loopbackOnly ? kind : undefined;
		case 'loopback':
			return allowance.loopback ? undefined : kind;
		case 'private':
			return allowance.private ? undefined : kind;
		case 'link-local':
			return allowance.linkLocal ? undefined : kind;
		default:
			return kind; // unspecified and multicast are never a destination
	}
}

/** Whether a URL's host (a name or an IP literal) is refused before any lookup. */
export function refusedHost(hostname: string, allowance: AddressAllowance): AddressClass | undefined {
	const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
	if (METADATA_NAMES.has(host) && !allowance.linkLocal) return 'link-local';
	return isIP(host) ? refusedClass(host, allowance) : undefined;
}

/** Builds the error a refused lookup fails with. */
export type Refusal = (hostname: string, address: string, kind: AddressClass) => Error;

const defaultRefusal: Refusal = (hostname, address, kind) =>
	Object.assign(new Error(`${hostname} resolves to the ${kind} address ${address}, which is not allowed here`), { code: 'EFORBIDDEN' });

/**
 * A DNS lookup for sockets and agents that fails when any answer is refused under the
 * allowance (chosen per host name, so a loopback name can be held to loopback answers).
 */
export function checkedLookup(allowanceFor: (hostname: string) => AddressAllowance, refuse: Refusal = defaultRefusal): LookupFunction {
	return (hostname, options, callback) => {
		dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
			if (error) return callback(error, '', 0);
			const allowance = allowanceFor(hostname);
			for (const { address } of addresses) {
				const kind = refusedClass(address, allowance);
				if (kind) return callback(refuse(hostname, address, kind) as NodeJS.ErrnoException, '', 0);
			}
			if (options.all) return (callback as unknown as (error: null, all: LookupAddress[]) => void)(null, addresses);
			callback(null, addresses[0]!.address, addresses[0]!.family);
		});
	};
}

/** The lookup for remote MCP servers and a workload's egress: never link-local, unspecified or multicast. */
export const remoteServerLookup = checkedLookup(() => NOT_LINK_LOCAL);

/** Every address a host name resolves to (an IP literal is its own answer), for tools that connect by themselves. */
export async function resolveAll(hostname: string): Promise<string[]> {
	const host = hostname.replace(/^\[|\]$/g, '');
	if (isIP(host)) return [host];
	return (await dnsLookupAll(host, { all: true, verbatim: true })).map((entry) => entry.address);
}
