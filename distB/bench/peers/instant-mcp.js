/**
 * The transport floor for the workload proxy bench: an MCP server that answers `initialize`
 * and the `echo` tool at once, with nothing behind it. Over stdio by default; with `--http`,
 * over Streamable HTTP on a free loopback port (it prints `listening on URL` to stderr).
 * The difference between the two, seen from the same SDK client, is what the HTTP transport
 * alone costs. `--delay-ms N` makes each HTTP answer wait N ms first (a server doing work that
 * takes no CPU, for the scale-out bench).
 */
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
/** The response to a client message; undefined for notifications. */
function answer(message) {
    if (message.id === undefined)
        return undefined;
    const result = message.method === 'initialize'
        ? { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'instant', version: '1.0.0' } }
        : { content: [{ type: 'text', text: `Echo: ${message.params?.arguments?.message}` }] };
    return JSON.stringify({ jsonrpc: '2.0', id: message.id, result });
}
const delayAt = process.argv.indexOf('--delay-ms');
const delayMs = delayAt > 0 ? Number(process.argv[delayAt + 1]) : 0;
if (process.argv.includes('--http')) {
    const server = createServer((request, response) => {
        if (request.method !== 'POST')
            return void response.writeHead(405).end();
        const chunks = [];
        request.on('data', (chunk) => chunks.push(chunk));
        request.on('end', () => {
            const body = answer(JSON.parse(Buffer.concat(chunks).toString('utf8')));
            const headers = { 'Mcp-Session-Id': 'instant' };
            if (body === undefined)
                return void response.writeHead(202, headers).end();
            const send = () => response.writeHead(200, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
            if (delayMs > 0)
                setTimeout(send, delayMs);
            else
                send();
        });
    });
    server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        process.stderr.write(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/mcp\n`);
    });
}
else {
    createInterface({ input: process.stdin }).on('line', (line) => {
        const body = answer(JSON.parse(line));
        if (body !== undefined)
            process.stdout.write(`${body}\n`);
    });
}
//# sourceMappingURL=instant-mcp.js.map