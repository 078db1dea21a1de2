/**
 * Runs `hangar daemon` for the extension: spawns it over stdio, performs the LSP handshake,
 * restarts it with back-off after a crash, and ends it with `shutdown` + `exit` on dispose.
 *
 * Knows nothing of VS Code (logs go to a callback), so it is tested against a real daemon.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { win32 } from 'node:path';
import {
	ConnectionError,
	createMessageConnection,
	ErrorCodes,
	ProgressType,
	ResponseError,
	StreamMessageReader,
	StreamMessageWriter,
	type MessageConnection,
} from 'vscode-jsonrpc/node';
import type { WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport } from 'vscode-languageserver-protocol';
import type { z } from 'zod';
import { HangarClient, type InitializeResult } from '../../protocol/client.js';
import { HangarError } from '../../protocol/errors.js';
import type { NotificationDefinition, OperationDefinition, ParamsOf, ResultOf } from '../../protocol/operation.js';

export type WorkDoneProgressValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

const WORK_DONE_PROGRESS = new ProgressType<WorkDoneProgressValue>();

/** How to start the daemon process. */
export interface DaemonCommand {
	readonly command: string;
	readonly args: readonly string[];
	readonly env: NodeJS.ProcessEnv;
}

/**
 * The daemon to run: the one bundled with the extension, or `daemonPath` (a `hangar`
 * executable, or a `.js`/`.mjs` entry run on the editor's own Node). Inside Electron,
 * `process.execPath` is the editor binary, which `ELECTRON_RUN_AS_NODE` turns into Node.
 * On Windows, `hangar.cmd` (what `npm install -g` puts on the PATH) cannot be spawned without a
 * shell: the script an npm shim runs is run instead, and any other batch file through `cmd.exe`.
 */
export function daemonCommand(daemonPath: string, bundledEntry: string, execPath: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): DaemonCommand {
	const path = daemonPath.trim().replace(/^~(?=$|[\\/])/, homedir());
	const asNode = { ...env, ELECTRON_RUN_AS_NODE: '1' };
	if (path === '') return { command: execPath, args: [bundledEntry, 'daemon'], env: asNode };
	if (/\.[cm]?js$/.test(path)) return { command: execPath, args: [path, 'daemon'], env: asNode };
	if (platform === 'win32' && /\.(cmd|bat)$/i.test(path)) {
		const script = npmShimScript(path);
		return script ? { command: execPath, args: [script, 'daemon'], env: asNode } : { command: env.ComSpec ?? 'cmd.exe', args: ['/d', '/c', path, 'daemon'], env };
	}
	return { command: path, args: ['daemon'], env };
}

/**
 * The script an npm command shim runs: npm's `.cmd` shims end with
 * `"%_prog%" "%dp0%\node_modules\hangar\…\hangar.cjs" %*`, `%dp0%` being the shim's own folder.
 */
function npmShimScript(shim: string): string | undefined {
	let text: string;
	try {
		text = readFileSync(shim, 'utf8');
	} catch {
		return undefined;
	}
	const script = /"%~?dp0%?\\([^"]+\.[cm]?js)"/i.exec(text)?.[1];
	return script && win32.join(win32.dirname(shim), script);
}

export interface BackOffOptions {
	/** Delay before the first restart; it doubles with every crash in a row. */
	readonly initialMs: number;
	readonly maxMs: number;
	/** Crashes in a row after which the supervisor gives up until `restart()`. */
	readonly maxRestarts: number;
	/** A daemon that ran this long before crashing resets the count. */
	readonly stableMs: number;
}

export const DEFAULT_BACK_OFF: BackOffOptions = { initialMs: 500, maxMs: 30_000, maxRestarts: 5, stableMs: 60_000 };

/** Delay before restart number `attempt` (0-based). */
export function restartDelay(attempt: number, backOff: BackOffOptions): number {
	return Math.min(backOff.initialMs * 2 ** attempt, backOff.maxMs);
}

export type DaemonState = 'stopped' | 'starting' | 'running' | 'restarting' | 'failed';

export interface SupervisorOptions {
	/** Read at every start, so a changed setting applies on the next restart. */
	readonly command: () => DaemonCommand;
	readonly clientName: string;
	/** Lines the daemon writes to stderr, and the supervisor's own account of events. */
	readonly log: (line: string) => void;
	readonly backOff?: BackOffOptions;
	/** How long `initialize` and `shutdown` may take. */
	readonly timeoutMs?: number;
}

export interface DaemonRequestOptions {
	/** Aborting cancels the request (`$/cancelRequest`). */
	readonly signal?: AbortSignal;
	/** Receives the request's `$/progress` reports. */
	readonly onProgress?: (value: WorkDoneProgressValue) => void;
}

interface Running {
	readonly child: ChildProcess;
	readonly connection: MessageConnection;
	readonly client: HangarClient;
	readonly info: InitializeResult;
	readonly startedAt: number;
	readonly exited: Promise<void>;
	stopping: boolean;
}

type NotificationHandler = (params: unknown) => void;

export class DaemonSupervisor {
	private current: Promise<Running> | undefined;
	private active: ChildProcess | undefined;
	private stateValue: DaemonState = 'stopped';
	private crashes = 0;
	private disposed = false;
	private nextToken = 1;
	private readonly handlers = new Map<string, Set<NotificationHandler>>();
	private readonly stateListeners = new Set<(state: DaemonState) => void>();
	private readonly backOff: BackOffOptions;
	private readonly timeoutMs: number;

	constructor(private readonly options: SupervisorOptions) {
		this.backOff = options.backOff ?? DEFAULT_BACK_OFF;
		this.timeoutMs = options.timeoutMs ?? 15_000;
	}

	get state(): DaemonState {
		return this.stateValue;
	}

	/** Process id of the daemon that is running or starting. */
	get pid(): number | undefined {
		return this.active?.exitCode === null ? this.active.pid : undefined;
	}

	/** What the running daemon answered to `initialize`. */
	async info(): Promise<InitializeResult> {
		return (await this.running()).info;
	}

	/** Calls one row of the operation table on the daemon, starting it first if needed. */
	async request<O extends OperationDefinition>(
		operation: O,
		params: ParamsOf<O>,
		options: DaemonRequestOptions = {},
	): Promise<ResultOf<O>> {
		const { client, connection } = await this.running();
		const workDoneToken = options.onProgress ? `hangar-${this.nextToken++}` : undefined;
		const progress = workDoneToken ? connection.onProgress(WORK_DONE_PROGRESS, workDoneToken, options.onProgress!) : undefined;
		try {
			return await client.request(operation, params, { signal: options.signal, workDoneToken });
		} catch (error) {
			throw asDaemonError(error, operation.method);
		} finally {
			progress?.dispose();
		}
	}

	/** Subscribes to a notification of every daemon this supervisor runs, restarts included. */
	onNotification<P extends z.ZodType>(definition: NotificationDefinition<P>, handler: (params: z.output<P>) => void): { dispose(): void } {
		let handlers = this.handlers.get(definition.method);
		if (!handlers) this.handlers.set(definition.method, (handlers = new Set()));
		const entry = handler as NotificationHandler;
		handlers.add(entry);
		return { dispose: () => handlers.delete(entry) };
	}

	onDidChangeState(listener: (state: DaemonState) => void): { dispose(): void } {
		this.stateListeners.add(listener);
		return { dispose: () => this.stateListeners.delete(listener) };
	}

	/** Stops the daemon if it runs and starts a fresh one, forgetting earlier crashes. */
	async restart(): Promise<void> {
		const previous = this.current;
		this.current = undefined;
		this.crashes = 0;
		const running = await previous?.catch(() => undefined);
		if (running) await this.stop(running);
		this.setState('stopped');
		await this.running();
	}

	/** Ends the daemon: `shutdown` + `exit`, then signals if it does not go. */
	async dispose(): Promise<void> {
		this.disposed = true;
		const running = await this.current?.catch(() => undefined);
		this.current = undefined;
		if (running) await this.stop(running);
		this.setState('stopped');
	}

	private running(): Promise<Running> {
		if (this.disposed) return Promise.reject(new HangarError(503, 'the Hangar extension is shutting down', 'unavailable'));
		if (this.stateValue === 'failed' && !this.current) {
			return Promise.reject(
				new HangarError(503, 'the Hangar daemon keeps crashing; see the Hangar output, then run "Hangar: Restart Daemon"', 'daemon_failed'),
			);
		}
		return (this.current ??= this.start());
	}

	private async start(delayMs = 0): Promise<Running> {
		this.setState(delayMs > 0 ? 'restarting' : 'starting');
		if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
		if (this.disposed) throw new HangarError(503, 'the Hangar extension is shutting down', 'unavailable');
		this.setState('starting');
		const { command, args, env } = this.options.command();
		this.options.log(`starting ${[command, ...args].join(' ')}`);
		const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
		this.active = child;
		forwardLines(child, this.options.log);
		const exited = new Promise<void>((resolve) => {
			child.once('error', (error) => {
				this.options.log(`could not run ${command}: ${error.message}`);
				resolve();
			});
			// 'close' comes after the last stderr line, so the log reads in order.
			child.once('close', (code, signal) => {
				this.options.log(`daemon exited with ${signal ?? `code ${code}`}`);
				resolve();
			});
		});
		const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
		connection.onNotification((method: string, params: unknown) => {
			for (const handler of this.handlers.get(method) ?? []) handler(params);
		});
		connection.onError(() => undefined); // a dead pipe shows up as the child's exit
		connection.listen();
		const client = new HangarClient(connection);
		const pending: Omit<Running, 'info'> = { child, connection, client, startedAt: Date.now(), exited, stopping: false };
		void exited.then(() => this.onExit(pending));
		try {
			const info = await timeout(
				Promise.race([client.initialize(this.options.clientName), exited.then(() => Promise.reject(new Error('it exited')))]),
				this.timeoutMs,
				'initialize',
			);
			this.options.log(`daemon ${info.serverInfo.name} ${info.serverInfo.version} ready (pid ${child.pid})`);
			this.setState('running');
			return Object.assign(pending, { info });
		} catch (error) {
			child.kill();
			throw new HangarError(503, `the Hangar daemon did not start: ${(error as Error).message}; see the Hangar output`, 'daemon_failed');
		}
	}

	/** A daemon that was not asked to stop crashed: start another after a back-off delay. */
	private onExit(running: Omit<Running, 'info'>): void {
		running.connection.dispose();
		if (running.stopping || this.disposed) return;
		if (Date.now() - running.startedAt >= this.backOff.stableMs) this.crashes = 0;
		if (this.crashes >= this.backOff.maxRestarts) {
			this.current = undefined;
			this.options.log(`giving up after ${this.crashes} restarts in a row; run "Hangar: Restart Daemon" to try again`);
			this.setState('failed');
			return;
		}
		const delay = restartDelay(this.crashes++, this.backOff);
		this.options.log(`restarting the daemon in ${delay} ms`);
		const restarted = this.start(delay);
		restarted.catch(() => undefined); // its own exit schedules the next attempt
		this.current = restarted;
	}

	private async stop(running: Running): Promise<void> {
		running.stopping = true;
		try {
			await timeout(running.client.shutdown(), this.timeoutMs, 'shutdown');
			await timeout(running.exited, this.timeoutMs, 'exit');
		} catch {
			running.child.kill('SIGKILL');
		}
		running.connection.dispose();
	}

	private setState(state: DaemonState): void {
		if (state === this.stateValue) return;
		this.stateValue = state;
		for (const listener of this.stateListeners) listener(state);
	}
}

/** A lost daemon becomes a 503 the UI can explain; everything else passes through. */
function asDaemonError(error: unknown, method: string): unknown {
	const lost =
		error instanceof ConnectionError ||
		(error instanceof ResponseError && error.code === ErrorCodes.PendingResponseRejected);
	return lost ? new HangarError(503, `the Hangar daemon stopped during ${method}; it is being restarted`, 'daemon_stopped') : error;
}

function forwardLines(child: ChildProcess, log: (line: string) => void): void {
	let buffered = '';
	child.stderr!.setEncoding('utf8');
	child.stderr!.on('data', (chunk: string) => {
		const lines = (buffered + chunk).split('\n');
		buffered = lines.pop()!;
		for (const line of lines) if (line) log(line);
	});
	child.stderr!.on('end', () => buffered && log(buffered));
}

function timeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	const expired = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
	});
	return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
