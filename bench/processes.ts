/** Spawning the processes a benchmark measures, and waiting for them to be ready. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';

export const HANGAR = fileURLToPath(new URL('../server/cli/hangar.cjs', import.meta.url));
export const peer = (name: string): string => fileURLToPath(new URL(`./peers/${name}.js`, import.meta.url));

/** The `hangar` entry point of another checkout's build: `hangar.cjs`, or `main.js` in builds before it. */
export function entryOf(checkout: string): string {
	const entry = join(checkout, 'dist', 'server', 'cli', 'hangar.cjs');
	return existsSync(entry) ? entry : join(checkout, 'dist', 'server', 'cli', 'main.js');
}

/** A loopback port nothing listens on right now. */
export function freePort(): Promise<number> {
	return new Promise((resolve) => {
		const server = createServer().listen(0, '127.0.0.1', () => {
			const { port } = server.address() as { port: number };
			server.close(() => resolve(port));
		});
	});
}

/** A process's resident set (MiB) and its threads, from /proc (cheap enough to sample every few milliseconds). */
export function residentAndThreads(pid: number): { resident: number; threads: number } {
	const status = readFileSync(`/proc/${pid}/status`, 'utf8');
	return { resident: Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024, threads: Number(/Threads:\s+(\d+)/.exec(status)![1]) };
}

/** The record a workload's proxy keeps under `home`: its process and its control socket. */
export async function proxyRecord(home: string, name: string): Promise<{ pid: number; socket: string }> {
	return JSON.parse(await readFile(join(home, 'data', 'proxies', `${name}.json`), 'utf8')) as { pid: number; socket: string };
}

/** A fresh HANGAR_HOME so benchmarks never touch the user's state. */
export function benchEnv(): NodeJS.ProcessEnv {
	return { ...process.env, HANGAR_HOME: mkdtempSync(join(tmpdir(), 'hangar-bench-')), HANGAR_LOG: 'warn' };
}

/** Runs `hangar ARGS…` to completion; resolves with its stdout, rejects with its stderr. */
export function runHangar(args: readonly string[], env: NodeJS.ProcessEnv, cli = HANGAR): Promise<string> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [cli, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
		let stdout = '';
		let stderr = '';
		child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
		child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		child.once('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`hangar ${args.join(' ')}: ${stderr}`))));
	});
}

export interface RpcProcess {
	readonly child: ChildProcess;
	readonly connection: MessageConnection;
	stop(): Promise<void>;
}

export function spawnRpc(args: readonly string[], env: NodeJS.ProcessEnv = process.env): RpcProcess {
	const child = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'inherit'] });
	const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
	connection.listen();
	return {
		child,
		connection,
		stop: async () => {
			connection.dispose();
			child.kill();
			await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
		},
	};
}

/** Spawns a server that prints `listening on URL` to stderr; resolves with the URL. */
export async function spawnHttp(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<{ url: string; pid: number | undefined; stop(): void }> {
	const child = spawn(process.execPath, args, { env: { ...env, HANGAR_LOG: 'info' }, stdio: ['ignore', 'ignore', 'pipe'] });
	const url = await new Promise<string>((resolve, reject) => {
		let output = '';
		const read = (chunk: Buffer) => {
			output += chunk.toString();
			const match = /listening on (\S+)/.exec(output);
			if (!match) return;
			// From here on the server's log is drained unread: the load generator must not pay for it.
			child.stderr!.off('data', read);
			child.stderr!.resume();
			resolve(match[1]!);
		};
		child.stderr!.on('data', read);
		child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
	});
	return { url, pid: child.pid, stop: () => child.kill() };
}

/** The folder `scripts/bench-peers.sh` installs the npm peers into. */
const PEERS = join(process.env.HANGAR_BENCH_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'hangar-bench'), 'peers');

/** The script an npm peer's `bin` names, from the peers' own install (`scripts/bench-peers.sh`). */
export function binOf(pkg: string): string {
	const fromPeers = createRequire(join(PEERS, 'package.json'));
	const manifest = fromPeers.resolve(`${pkg}/package.json`);
	const { bin } = fromPeers(manifest) as { bin: string | Record<string, string> };
	return join(dirname(manifest), typeof bin === 'string' ? bin : Object.values(bin)[0]!);
}

/** Stops a child process: SIGTERM, then SIGKILL after 8 s. */
export function stopChild(child: ChildProcess): Promise<void> {
	return new Promise((resolve) => {
		if (child.exitCode !== null) return resolve();
		child.once('exit', () => resolve());
		child.kill('SIGTERM');
		setTimeout(() => child.kill('SIGKILL'), 8_000).unref();
	});
}
