/**
 * Answers one HTTP request with `git http-backend` run as CGI: git's smart HTTP protocol,
 * the way a git host answers clones. Shared by the benchmark's git host and the tests'.
 */
import { spawn } from 'node:child_process';
/** Serves `request` from the bare repositories under `root`. */
export function serveWithGitHttpBackend(root, request, response) {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const cgi = spawn('git', ['http-backend'], {
        env: {
            ...process.env,
            GIT_PROJECT_ROOT: root,
            GIT_HTTP_EXPORT_ALL: '1',
            PATH_INFO: decodeURIComponent(url.pathname),
            QUERY_STRING: url.search.slice(1),
            REQUEST_METHOD: request.method ?? 'GET',
            CONTENT_TYPE: request.headers['content-type'] ?? '',
            HTTP_CONTENT_ENCODING: request.headers['content-encoding'] ?? '',
            GIT_PROTOCOL: String(request.headers['git-protocol'] ?? ''),
            REMOTE_ADDR: '127.0.0.1',
        },
    });
    request.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk) => {
        if (headersDone)
            return void response.write(chunk);
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0)
            return;
        headersDone = true;
        // CGI headers, with the status in a `Status:` header.
        let status = 200;
        const headers = {};
        for (const line of head.subarray(0, end).toString().split('\r\n')) {
            const colon = line.indexOf(':');
            const name = line.slice(0, colon).trim();
            const value = line.slice(colon + 1).trim();
            if (name.toLowerCase() === 'status')
                status = Number.parseInt(value, 10);
            else
                headers[name] = value;
        }
        response.writeHead(status, headers);
        response.write(head.subarray(end + 4));
    });
    cgi.on('close', () => response.end());
    cgi.stderr.resume();
}
//# sourceMappingURL=gitHttpBackend.js.map