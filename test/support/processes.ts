/**
 * Real `hangar` processes for tests: the built CLI (dist/), spawned as users run it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { HangarClient } from '../../protocol/client.js';

export const HANGAR_BIN = fileURLToPath(new URL('../../dist/server/cli/hangar.cjs', import.meta.url));

export interface DaemonProcess {
	readonly child: ChildProcess;
	readonly client: HangarClient;
	/** Everything the daemon wrote to stderr so far. */
	stderr(): string;
	/** Resolves with the exit code once the daemon exited. */
	exited(): Promise<number | null>;
	stop(): Promise<void>;
}

export function spawnDaemon(env: NodeJS.ProcessEnv): DaemonProcess {
	const child = spawn(process.execPath, [HANGAR_BIN, 'daemon'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
	let stderr = '';
	child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
	const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
	const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
	connection.listen();
	return {
		child,
		client: new HangarClient(connection),
		stderr: () => stderr,
		exited: () => exit,
		stop: async () => {
			connection.dispose();
			if (child.exitCode === null) {
				child.kill();
				await exit;
			}
		},
	};
}

export interface ServeProcess {
	readonly child: ChildProcess;
	readonly url: string;
	/** Everything the server wrote to stderr so far. */
	stderr(): string;
	stop(): Promise<void>;
}

/** Starts `hangar serve` on a free port and resolves once it listens. */
export async function startServe(env: NodeJS.ProcessEnv, args: string[] = []): Promise<ServeProcess> {
	const child = spawn(process.execPath, [HANGAR_BIN, 'serve', '--port', '0', ...args], {
		env: { ...env, HANGAR_LOG: 'info' },
		stdio: ['ignore', 'ignore', 'pipe'],
	});
	let output = '';
	const url = await new Promise<string>((resolve, reject) => {
		child.stderr!.on('data', (chunk: Buffer) => {
			output += chunk.toString();
			const match = /listening on (\S+)/.exec(output);
			if (match) resolve(match[1]!);
		});
		child.once('exit', (code) => reject(new Error(`hangar serve exited with ${code}: ${output}`)));
	});
	return {
		child,
		url,
		stderr: () => output,
		stop: async () => {
			if (child.exitCode !== null) return;
			child.kill('SIGTERM');
			await new Promise((resolve) => child.once('exit', resolve));
		},
	};
}

export interface CommandResult {
	readonly code: number;
	readonly stdout: string;
	readonly stderr: string;
}

/** Runs `hangar ARGS…` to completion. */
export function runHangar(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<CommandResult> {
	return runEntry(HANGAR_BIN, args, env, { input });
}

/** Runs a build of `hangar` (this one, or the extension's bundle) to completion. */
export function runEntry(entry: string, args: string[], env: NodeJS.ProcessEnv, options: { input?: string; cwd?: string } = {}): Promise<CommandResult> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [entry, ...args], { env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
		let stdout = '';
		let stderr = '';
		child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
		child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		child.once('error', reject);
		child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
		child.stdin!.end(options.input ?? '');
	});
}
