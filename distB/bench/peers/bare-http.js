/** The physical limit for the REST door: node:http answering one small JSON document. */
import { createServer } from 'node:http';
const body = JSON.stringify({ version: 'v0.0.0' });
const server = createServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
});
server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stderr.write(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
});
//# sourceMappingURL=bare-http.js.map