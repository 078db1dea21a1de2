/**
 * The floor of one more hop in front of a member's proxy, built the way an aggregate reaches its
 * members: node:http in front, one link (server/proxy/core/link.ts) on the member's Unix socket
 * behind, request ids re-mapped, the lines of one turn of the event loop leaving together while
 * several calls are in flight. No sessions, no middleware, no names to route: what is left is
 * the cost any such hop pays. Usage: `link-relay SOCKET HOST` (HOST: the member's address, which
 * its request guard wants); prints `listening on URL`.
 */
import { createServer, request, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

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

const waiting = new Map<number, { response: ServerResponse; id: unknown }>();
let nextId = 1;
let buffered = '';
link.on('data', (chunk: Buffer) => {
	buffered += chunk.toString('utf8');
	for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
		const message = JSON.parse(buffered.slice(0, newline)) as { id?: number };
		buffered = buffered.slice(newline + 1);
		const entry = message.id === undefined ? undefined : waiting.get(message.id);
		if (!entry) continue;
		waiting.delete(message.id!);
		const body = JSON.stringify({ ...message, id: entry.id });
		entry.response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Mcp-Session-Id': 'relay' }).end(body);
	}
});
link.on('close', () => process.exit(1));

function send(message: object): void {
	if (waiting.size > 1 && !link.writableCorked) {
		link.cork();
		setImmediate(() => link.uncork());
	}
	link.write(`${JSON.stringify(message)}\n`);
}

createServer((request, response) => {
	const chunks: Buffer[] = [];
	request.on('data', (chunk: Buffer) => chunks.push(chunk));
	request.on('end', () => {
		const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown };
		if (message.id === undefined) {
			send(message);
			return void response.writeHead(202, { 'Mcp-Session-Id': 'relay' }).end();
		}
		const id = nextId++;
		waiting.set(id, { response, id: message.id });
		send({ ...message, id });
	});
}).listen(0, '127.0.0.1', function (this: import('node:net').Server) {
	process.stderr.write(`listening on http://127.0.0.1:${(this.address() as { port: number }).port}/mcp\n`);
});
