/**
 * The egress proxy of a network-isolated workload. Its container sits on a network with no
 * route out; the only address it reaches is the network's gateway on the host, where this
 * proxy listens. Plain HTTP (absolute-form requests) and HTTPS (CONNECT tunnels) go through
 * when the destination host and port are in the permission profile's outbound allow-lists;
 * anything else gets 403. Link-local addresses (cloud metadata) are refused even when listed.
 */
import { createServer, request, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../log.js';
import { metadataGuardedLookup } from '../../net/addresses.js';

export interface EgressRules {
	/** Host names; `.example.com` or `*.example.com` also allow every subdomain. */
	readonly allowHosts: readonly string[];
	/** Ports; empty allows any port of an allowed host. */
	readonly allowPorts: readonly number[];
}

export function egressAllows(rules: EgressRules, host: string, port: number): boolean {
	const name = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
	const hostAllowed = rules.allowHosts.some((entry) => {
		const allowed = entry.toLowerCase();
		if (allowed.startsWith('*.') || allowed.startsWith('.')) {
			const domain = allowed.slice(allowed.indexOf('.') + 1);
			return name === domain || name.endsWith(`.${domain}`);
		}
		return name === allowed;
	});
	return hostAllowed && (rules.allowPorts.length === 0 || rules.allowPorts.includes(port));
}

const HOP_BY_HOP = ['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

export class EgressProxy {
	private readonly server: Server;
	private readonly sockets = new Set<Duplex>();

	constructor(
		private readonly rules: EgressRules,
		private readonly log: Logger,
	) {
		this.server = createServer((incoming, outgoing) => this.forward(incoming, outgoing));
		this.server.on('connect', (incoming: IncomingMessage, socket: Duplex, head: Buffer) => this.tunnel(incoming, socket, head));
		this.server.on('connection', (socket: Socket) => {
			this.sockets.add(socket);
			socket.once('close', () => this.sockets.delete(socket));
		});
	}

	listen(host: string, port: number): Promise<void> {
		return new Promise((resolve, reject) => {
			this.server.once('error', reject);
			this.server.listen({ host, port, exclusive: true }, () => {
				this.server.off('error', reject);
				resolve();
			});
		});
	}

	close(): Promise<void> {
		for (const socket of this.sockets) socket.destroy();
		return new Promise((resolve) => this.server.close(() => resolve()));
	}

	private decide(host: string, port: number): boolean {
		const allowed = egressAllows(this.rules, host, port);
		if (allowed) this.log.info(`egress to ${host}:${port} allowed`);
		else this.log.warn(`egress to ${host}:${port} denied by the permission profile`);
		return allowed;
	}

	/** `GET http://host/path` from the container. */
	private forward(incoming: IncomingMessage, outgoing: ServerResponse): void {
		let target: URL;
		try {
			target = new URL(incoming.url ?? '');
		} catch {
			outgoing.writeHead(400, { 'Content-Type': 'text/plain' }).end('expected an absolute http:// URL (this is an egress proxy)\n');
			return;
		}
		const port = Number(target.port) || 80;
		if (target.protocol !== 'http:' || !this.decide(target.hostname, port)) {
			outgoing.writeHead(403, { 'Content-Type': 'text/plain' }).end(`egress to ${target.host} is not allowed\n`);
			return;
		}
		const headers: OutgoingHttpHeaders = { ...incoming.headers };
		for (const header of HOP_BY_HOP) delete headers[header];
		const upstream = request(
			{ host: target.hostname, port, method: incoming.method, path: `${target.pathname}${target.search}`, headers, lookup: metadataGuardedLookup as never },
			(answer) => {
				outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
				answer.pipe(outgoing);
			},
		);
		upstream.once('error', (error) => {
			if (!outgoing.headersSent) outgoing.writeHead(502, { 'Content-Type': 'text/plain' }).end(`cannot reach ${target.host}: ${error.message}\n`);
			else outgoing.destroy();
		});
		incoming.pipe(upstream);
	}

	/** `CONNECT host:443` from the container (HTTPS and other TLS). */
	private tunnel(incoming: IncomingMessage, socket: Duplex, head: Buffer): void {
		const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(incoming.url ?? '');
		if (!match) {
			socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
			return;
		}
		const host = match[1]!.replace(/^\[|\]$/g, '');
		const port = Number(match[2]);
		if (!this.decide(host, port)) {
			socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
			return;
		}
		const upstream = connect({ host, port, lookup: metadataGuardedLookup as never }, () => {
			socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
			if (head.length) upstream.write(head);
			upstream.pipe(socket);
			socket.pipe(upstream);
		});
		upstream.once('error', (error) => {
			if (socket.writable) socket.end(`HTTP/1.1 502 Bad Gateway\r\n\r\ncannot reach ${host}:${port}: ${error.message}\n`);
		});
		socket.once('error', () => upstream.destroy());
		socket.once('close', () => upstream.destroy());
	}
}
