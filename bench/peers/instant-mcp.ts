/**
 * The transport floor for the workload proxy bench: an MCP server that answers `initialize`
 * and the `echo` tool at once, with nothing behind it. Over stdio by default; with `--http`,
 * over Streamable HTTP on a free loopback port (it prints `listening on URL` to stderr).
 * The difference between the two, seen from the same SDK client, is what the HTTP transport
 * alone costs. `--delay-ms N` makes each HTTP answer wait N ms first (a server doing work that
 * takes no CPU, for the scale-out bench). `--result-bytes N` pads the echo's text with ordinary
 * prose and JSON to N bytes (the guardrails bench: results of a realistic size and shape).
 */
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';

interface Request {
	readonly id?: string | number;
	readonly method: string;
	readonly params?: { protocolVersion?: string; arguments?: { message?: string } };
}

const optionOf = (name: string): number => {
	const at = process.argv.indexOf(name);
	return at > 0 ? Number(process.argv[at + 1]) : 0;
};
const delayMs = optionOf('--delay-ms');

/** What a file-reading or search tool answers: prose, paths, a JSON record, a commit hash. */
const FILLER_LINE =
	'The build reads src/config/settings.json, resolves 42 modules and writes dist/index.js; see https://example.com/docs/build?section=output for details. {"id": 1842, "path": "/home/dev/project/README.md", "sha": "3f9a1c2e8b7d6f5a4c3b2a1908f7e6d5c4b3a291"}\n';
const resultBytes = optionOf('--result-bytes');
const padding = resultBytes > 0 ? FILLER_LINE.repeat(Math.ceil(resultBytes / FILLER_LINE.length)).slice(0, resultBytes) : '';

/** The response to a client message; undefined for notifications. */
function answer(message: Request): string | undefined {
	if (message.id === undefined) return undefined;
	const result =
		message.method === 'initialize'
			? { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'instant', version: '1.0.0' } }
			: { content: [{ type: 'text', text: `Echo: ${message.params?.arguments?.message}${padding}` }] };
	return JSON.stringify({ jsonrpc: '2.0', id: message.id, result });
}

if (process.argv.includes('--http')) {
	const server = createServer((request, response) => {
		if (request.method !== 'POST') return void response.writeHead(405).end();
		const chunks: Buffer[] = [];
		request.on('data', (chunk: Buffer) => chunks.push(chunk));
		request.on('end', () => {
			const body = answer(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Request);
			const headers = { 'Mcp-Session-Id': 'instant' };
			if (body === undefined) return void response.writeHead(202, headers).end();
			const send = () => response.writeHead(200, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
			if (delayMs > 0) setTimeout(send, delayMs);
			else send();
		});
	});
	server.listen(0, '127.0.0.1', () => {
		const address = server.address();
		process.stderr.write(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/mcp\n`);
	});
} else {
	createInterface({ input: process.stdin }).on('line', (line) => {
		const body = answer(JSON.parse(line) as Request);
		if (body !== undefined) process.stdout.write(`${body}\n`);
	});
}
