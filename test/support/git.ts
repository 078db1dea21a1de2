/**
 * Real git servers for tests: bare repositories made with the git CLI, served over smart
 * HTTP by `git http-backend` (CGI behind a node http server), optionally behind Basic auth,
 * with every request recorded.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { dirname, join } from 'node:path';
import { serveWithGitHttpBackend } from '../../bench/peers/gitHttpBackend.js';
import { listen } from './registry.js';

const IDENTITY = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com' };

export function git(cwd: string, ...args: string[]): string {
	return execFileSync('git', args, { cwd, env: { ...process.env, ...IDENTITY }, encoding: 'utf8' }).trim();
}

export interface GitRepo {
	/** The bare repository served to clients. */
	readonly bare: string;
	/** A working clone to make more commits in. */
	readonly work: string;
	/** Writes files, commits them to the current branch and pushes; returns the commit. */
	commit(files: Record<string, string | null>, message?: string): Promise<string>;
	/** An annotated tag at HEAD, pushed. */
	tag(name: string): void;
}

/** `<root>/<owner>/<name>.git` (bare) with a `main` branch holding `files`. */
export async function createRepo(root: string, owner: string, name: string, files: Record<string, string>): Promise<GitRepo> {
	const bare = join(root, owner, `${name}.git`);
	const work = join(root, '.work', owner, name);
	await mkdir(dirname(bare), { recursive: true });
	await mkdir(work, { recursive: true });
	git(root, 'init', '-q', '--bare', '-b', 'main', bare);
	git(bare, 'config', 'uploadpack.allowFilter', 'true');
	git(bare, 'config', 'uploadpack.allowAnySHA1InWant', 'true');
	git(work, 'init', '-q', '-b', 'main');
	git(work, 'remote', 'add', 'origin', bare);
	const repo: GitRepo = {
		bare,
		work,
		commit: async (changes, message = 'change') => {
			for (const [path, content] of Object.entries(changes)) {
				if (content === null) git(work, 'rm', '-q', path);
				else {
					await mkdir(dirname(join(work, path)), { recursive: true });
					await writeFile(join(work, path), content);
					git(work, 'add', path);
				}
			}
			git(work, 'commit', '-q', '-m', message);
			git(work, 'push', '-q', 'origin', 'HEAD');
			return git(work, 'rev-parse', 'HEAD');
		},
		tag: (tag) => {
			git(work, 'tag', '-a', tag, '-m', tag);
			git(work, 'push', '-q', 'origin', tag);
		},
	};
	await repo.commit(files, 'initial');
	return repo;
}

export interface GitRequest {
	readonly path: string;
	readonly headers: IncomingHttpHeaders;
}

export interface GitServer {
	/** `127.0.0.1:PORT`. */
	readonly host: string;
	readonly requests: GitRequest[];
	stop(): Promise<void>;
}

/**
 * Serves the bare repositories under `root` over smart HTTP. With `password`, every request
 * needs Basic credentials whose password is it (any user name), else 401. With `redirectTo`
 * (`host:port`), every request is answered with a 302 to the same path there.
 */
export async function startGitServer(root: string, options: { password?: string; redirectTo?: string } = {}): Promise<GitServer> {
	const requests: GitRequest[] = [];
	const server = createServer((request, response) => {
		const url = new URL(request.url ?? '/', 'http://localhost');
		requests.push({ path: url.pathname + url.search, headers: request.headers });
		if (options.redirectTo) {
			request.resume();
			response.writeHead(302, { Location: `http://${options.redirectTo}${url.pathname}${url.search}` }).end();
			return;
		}
		if (options.password !== undefined) {
			const header = request.headers.authorization ?? '';
			const password = header.startsWith('Basic ') ? Buffer.from(header.slice(6), 'base64').toString().split(':').slice(1).join(':') : undefined;
			if (password !== options.password) {
				request.resume();
				response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end();
				return;
			}
		}
		serveWithGitHttpBackend(root, request, response);
	});
	const port = await listen(server);
	return {
		host: `127.0.0.1:${port}`,
		requests,
		stop: () => new Promise((resolve) => {
			server.close(() => resolve());
			server.closeAllConnections();
		}),
	};
}
