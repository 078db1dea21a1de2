/**
 * Serves the bare repositories under a folder (argv[2]) over git's smart HTTP protocol.
 */
import { createServer } from 'node:http';
import { serveWithGitHttpBackend } from './gitHttpBackend.js';
const root = process.argv[2];
const server = createServer((request, response) => serveWithGitHttpBackend(root, request, response));
server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stderr.write(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
});
//# sourceMappingURL=git-http.js.map