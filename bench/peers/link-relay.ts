/**
 * The floor of one more hop in front of a member's proxy, built the way an aggregate reaches its
 * members: node:http in front, one link (server/proxy/core/link.ts) on the member's Unix socket
 * behind, request ids re-mapped (relay.ts), the lines of one turn of the event loop leaving
 * together while several calls are in flight. No sessions, no middleware, no names to route:
 * what is left is the cost any such hop pays. Usage: `link-relay SOCKET HOST` (HOST: the
 * member's address, which its request guard wants); prints `listening on URL`.
 */
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { serveRelay } from './relay.js';

const [socketPath, host] = process.argv.slice(2) as [string, string];

const link = await new Promise<Socket>((resolve, reject) => {
	const upgrade = request({ socketPath, path: '/link', agent: false, headers: { Host: host, Connection: 'Upgrade', Upgrade: 'hangar-link' } });
	upgrade.on('upgrade', (_response, socket: Socket, head: Buffer) => {
		if (head.length > 0) socket.unshift(head);
		resolve(socket);
	});
	upgrade.on('response', (response) => reject(new Error(`the member's proxy refused the link with HTTP ${response.statusCode}`)));
	upgrade.on('error', reject);
	upgrade.end();
});
link.on('close', () => process.exit(1));

serveRelay('relay', link, (line, waiting) => {
	if (waiting > 1 && !link.writableCorked) {
		link.cork();
		setImmediate(() => link.uncork());
	}
	link.write(line);
});
