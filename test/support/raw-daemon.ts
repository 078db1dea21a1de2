/**
 * A daemon driven byte by byte, for tests of framing and the LSP lifecycle: raw frames go
 * in, every message that comes out is collected.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { StreamMessageReader, type Message } from 'vscode-jsonrpc/node';
import { HANGAR_BIN } from './processes.js';

export interface RawDaemon {
	readonly child: ChildProcess;
	readonly messages: Message[];
	write(bytes: string | Buffer): void;
	/** Sends one well-formed frame. */
	send(message: object): void;
	/** Resolves with the first message (collected earlier or later) that `match` accepts. */
	next(match: (message: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
	exited(): Promise<number | null>;
}

export function frame(message: object | string): Buffer {
	const body = Buffer.from(typeof message === 'string' ? message : JSON.stringify(message), 'utf8');
	return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
}

export function spawnRawDaemon(env: NodeJS.ProcessEnv): RawDaemon {
	const child = spawn(process.execPath, [HANGAR_BIN, 'daemon'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
	const messages: Message[] = [];
	const waiters: Array<() => void> = [];
	new StreamMessageReader(child.stdout!).listen((message) => {
		messages.push(message);
		for (const wake of waiters.splice(0)) wake();
	});
	child.stderr!.resume();
	const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
	return {
		child,
		messages,
		write: (bytes) => child.stdin!.write(bytes),
		send: (message) => child.stdin!.write(frame(message)),
		next: (match, timeoutMs = 5_000) =>
			new Promise((resolve, reject) => {
				const timer = setTimeout(() => reject(new Error(`no matching message; got ${JSON.stringify(messages)}`)), timeoutMs);
				const look = () => {
					const found = messages.find((message) => match(message as unknown as Record<string, unknown>));
					if (found) {
						clearTimeout(timer);
						messages.splice(messages.indexOf(found), 1);
						resolve(found as unknown as Record<string, unknown>);
					} else {
						waiters.push(look);
					}
				};
				look();
			}),
		exited: () => exit,
	};
}
