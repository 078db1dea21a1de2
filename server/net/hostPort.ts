/**
 * `host:port` as a person writes it, in a strict grammar: a DNS name (letters, digits, hyphens
 * in dot-separated labels), an IPv4 address, or a bracketed IPv6 address, then a decimal port
 * from 1 to 65535. Whatever passes can be written into a configuration file (HAProxy's) as one
 * token: no space, newline, quote or comment character gets through.
 */
import { isIP } from 'node:net';

const LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

export interface HostPort {
	/** The name or address, IPv6 without its brackets. */
	readonly host: string;
	readonly port: number;
}

/** True for a DNS name, an IPv4 address or a bare IPv6 address. */
export function isHostName(host: string): boolean {
	if (isIP(host) !== 0) return true;
	const name = host.endsWith('.') ? host.slice(0, -1) : host;
	return name.length > 0 && name.length <= 253 && name.split('.').every((label) => LABEL.test(label)) && !/^[\d.]+$/.test(name);
}

/** `host:port`, `[v6]:port`, or the host alone with `defaultPort`; throws saying what is wrong. */
export function parseHostPort(text: string, defaultPort?: number): HostPort {
	const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(text);
	const host = match?.[1] ?? match?.[2];
	const bracketedIsV6 = match?.[1] === undefined || isIP(match[1]) === 6;
	if (!match || host === undefined || !bracketedIsV6 || !isHostName(host)) {
		throw new Error(`${JSON.stringify(text)} is not host:port (a DNS name, an IPv4 address or [IPv6], then :1-65535)`);
	}
	const port = match[3] === undefined ? defaultPort : Number(match[3]);
	if (port === undefined) throw new Error(`${JSON.stringify(text)} has no port`);
	if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${JSON.stringify(text)}: the port must be from 1 to 65535`);
	return { host, port };
}
