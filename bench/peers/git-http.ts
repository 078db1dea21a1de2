/**
 * Serves the bare repositories under a folder (argv[2]) over git's smart HTTP protocol:
 * `git http-backend` as CGI behind node:http, the way a git host answers clones.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';

const root = process.argv[2]!;
const server = createServer((request, response) => {
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
		},
	});
	request.pipe(cgi.stdin);
	let head = Buffer.alloc(0);
	let started = false;
	cgi.stdout.on('data', (chunk: Buffer) => {
		if (started) return void response.write(chunk);
		head = Buffer.concat([head, chunk]);
		const end = head.indexOf('\r\n\r\n');
		if (end < 0) return;
		started = true;
		let status = 200;
		const headers: Record<string, string> = {};
		for (const line of head.subarray(0, end).toString().split('\r\n')) {
			const colon = line.indexOf(':');
			const name = line.slice(0, colon).trim();
			if (name.toLowerCase() === 'status') status = Number.parseInt(line.slice(colon + 1), 10);
			else headers[name] = line.slice(colon + 1).trim();
		}
		response.writeHead(status, headers);
		response.write(head.subarray(end + 4));
	});
	cgi.on('close', () => response.end());
	cgi.stderr.resume();
});
server.listen(0, '127.0.0.1', () => {
	const address = server.address();
	process.stderr.write(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
});
