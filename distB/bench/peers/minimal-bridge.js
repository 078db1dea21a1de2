/**
 * The floor of a stdio-to-HTTP MCP proxy built the way Hangar's is: node:http in front, one
 * Docker Engine attach to the container's stdio behind, request ids re-mapped so that several
 * clients can share the server. No sessions, no middleware, no SSE: what is left is the cost
 * any such proxy pays. Usage: `minimal-bridge CONTAINER_ID`; prints `listening on URL`.
 */
import { createServer } from 'node:http';
import { PassThrough } from 'node:stream';
import Docker from 'dockerode';
const docker = new Docker();
const container = docker.getContainer(process.argv[2]);
const stream = await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true });
const stdout = new PassThrough();
docker.modem.demuxStream(stream, stdout, new PassThrough().resume());
const waiting = new Map();
let nextId = 1;
let buffered = '';
stdout.on('data', (chunk) => {
    buffered += chunk.toString('utf8');
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        const message = JSON.parse(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        const entry = message.id === undefined ? undefined : waiting.get(message.id);
        if (!entry)
            continue;
        waiting.delete(message.id);
        const body = JSON.stringify({ ...message, id: entry.id });
        entry.response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Mcp-Session-Id': 'bridge' }).end(body);
    }
});
createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
        const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (message.id === undefined) {
            stream.write(`${JSON.stringify(message)}\n`);
            return void response.writeHead(202, { 'Mcp-Session-Id': 'bridge' }).end();
        }
        const id = nextId++;
        waiting.set(id, { response, id: message.id });
        stream.write(`${JSON.stringify({ ...message, id })}\n`);
    });
}).listen(0, '127.0.0.1', function () {
    process.stderr.write(`listening on http://127.0.0.1:${this.address().port}/mcp\n`);
});
//# sourceMappingURL=minimal-bridge.js.map