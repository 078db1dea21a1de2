/**
 * What the floors of a proxy (minimal-bridge.ts) and of one more hop (link-relay.ts) share:
 * node:http in front, each POSTed message written on as one line (a request under an id of the
 * relay's own), each answer read from `lines` and matched back to its request. No sessions, no
 * middleware, no SSE. Prints `listening on URL` once it listens.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';

/** `write` sends a line on; `waiting` is how many requests await their answers, that one included. */
export function serveRelay(sessionId: string, lines: Readable, write: (line: string, waiting: number) => void): void {
	const waiting = new Map<number, { response: ServerResponse; id: unknown }>();
	let nextId = 1;
	let buffered = '';
	lines.on('data', (chunk: Buffer) => {
		buffered += chunk.toString('utf8');
		for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
			const message = JSON.parse(buffered.slice(0, newline)) as { id?: number };
			buffered = buffered.slice(newline + 1);
			const entry = message.id === undefined ? undefined : waiting.get(message.id);
			if (!entry) continue;
			waiting.delete(message.id!);
			const body = JSON.stringify({ ...message, id: entry.id });
			entry.response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Mcp-Session-Id': sessionId }).end(body);
		}
	});

	createServer((request, response) => {
		const chunks: Buffer[] = [];
		request.on('data', (chunk: Buffer) => chunks.push(chunk));
		request.on('end', () => {
			const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown };
			if (message.id === undefined) {
				write(`${JSON.stringify(message)}\n`, waiting.size);
				return void response.writeHead(202, { 'Mcp-Session-Id': sessionId }).end();
			}
			const id = nextId++;
			waiting.set(id, { response, id: message.id });
			write(`${JSON.stringify({ ...message, id })}\n`, waiting.size);
		});
	}).listen(0, '127.0.0.1', function (this: import('node:net').Server) {
		process.stderr.write(`listening on http://127.0.0.1:${(this.address() as { port: number }).port}/mcp\n`);
	});
}
