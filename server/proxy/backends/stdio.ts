/**
 * The stdio bridge: clients reach a stdio server in a container through one or more server
 * processes, each spoken to as newline-delimited JSON-RPC over its stdin and stdout.
 *
 * A stdio server is initialised once per process, with one protocol revision and one set of
 * client capabilities, so the bridge gives each client a process initialised with exactly
 * what that client asked for:
 *
 * - `shared` (the default): clients that ask for the same revision with the same
 *   capabilities share a process. The first of them initialises the container's own process;
 *   a client with another revision or capability set gets the container's command run again
 *   beside it (`docker exec`), shared in turn by the clients that match it, and ended when the
 *   last of them leaves.
 * - `isolated`: every client session gets a process of its own, ended with the session.
 *
 * Either way the container runs at most `max_server_processes` server processes, its own
 * included. A process beside the container's own that no client uses is idle: none of its
 * sessions has a call in flight or waiting its turn, a server request unanswered, a task alive,
 * or its event stream open (the GET stream of Streamable HTTP, a legacy SSE stream), which a
 * client that is still there listening holds. A live session alone does not make a process in
 * use: a client that went away without ending its session leaves one behind for hours. A
 * session that would need one process more takes the place of the least recently used idle
 * one, whose sessions end (a client still there gets 404 and opens a new one, as MCP has it);
 * only when every process is in use is it refused (`LimitReached`), except that clients of a
 * handshake that has a process already share it. An idle process is also ended once it has
 * been idle for `server_process_idle_timeout`, well before its sessions would expire. The
 * container's own process is neither: it stays, with the handshake it was first given.
 *
 * On a shared process, requests are multiplexed by id: each client request gets a
 * process-wide id (and its progress token the same number), so two clients may both send id
 * 1. Responses and progress go back to the session that asked, under its own id and token.
 * Server requests (sampling, elicitation, roots) carry no link to the client request that
 * caused them over stdio; so on a process whose clients declared any of those capabilities,
 * the sessions take turns (one session's requests in flight at a time) and a server request
 * goes to the session holding the turn, or to the owner of the task named in its
 * `io.modelcontextprotocol/related-task`. Requests that cannot cause a server request (the
 * lists, `ping`, log level, subscriptions, task status) take no turn. A session holding the
 * turn whose call waits for its client (a server request to it is unanswered, for as long
 * as its user takes) makes no other session wait: a session that would wait then sends its
 * call on a side process of the same handshake, its own, started for it and ended once its
 * calls there are answered (and no task created there lives on). Side processes count
 * against `max_server_processes`, and one caller (the identity's subject; callers who do not
 * authenticate are one caller) has at most MAX_SIDE_PROCESSES_PER_CALLER at a time: past
 * either, the call is refused (`LimitReached`). So a held call costs its own caller only.
 * (A session opened with `ownProcess`, as the 2026 bridge opens one per call that may wait
 * for its client, has a process to itself.) Each session keeps its own log level, resource
 * subscriptions are counted across sessions, tasks belong to the session that created them,
 * and `list_changed` notifications go to every session.
 */
import { lineSplitter } from '../../net/body.js';
import type { Logger } from '../../log.js';
import type { Attachment, Runtime } from '../../runtime/runtime.js';
import type { Backend, UpstreamSession, BackendState, ClientSessionSink, OpenOptions, ServerProcessCounts } from '../core/backend.js';
import {
	ErrorCode,
	errorResponse,
	isRequest,
	isResponse,
	parseMessage,
	canonicalJson,
	SUPPORTED_PROTOCOL_VERSIONS,
	type JsonRpcMessage,
	type JsonRpcNotification,
	type JsonRpcRequest,
	type JsonRpcResponse,
	type RequestId,
} from '../core/jsonrpc.js';
import { linkedController, onAbort, unlessAborted } from '../core/abort.js';
import { CallTable } from '../core/callTable.js';
import { MAX_LINE_LENGTH, writeLine } from '../core/lines.js';
import { SharedProcessState } from './sharedProcessState.js';

const INITIALIZE_TIMEOUT_MS = 60_000;
const MAX_BACKOFF_MS = 10_000;
/** The most server processes a container runs unless `max_server_processes` says otherwise. */
export const DEFAULT_MAX_SERVER_PROCESSES = 16;
/** Seconds a process beside the container's own stays idle before it is ended, unless `server_process_idle_timeout` says otherwise. */
export const DEFAULT_SERVER_PROCESS_IDLE_TIMEOUT = 600;

/**
 * The most processes one caller may have beside a shared one, each for a session whose call
 * would otherwise wait on another caller's held call (see the module comment).
 */
export const MAX_SIDE_PROCESSES_PER_CALLER = 4;
/** Requests that cannot make the server ask the client anything: they take no turn. */
const TURNLESS_METHODS = new Set(['ping', 'tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'tasks/get', 'tasks/list', 'tasks/cancel']);
/** What a side process's requests to its client are renamed with: they must not meet the shared process's ids. */
const SIDE_ID_PREFIX = 'hangar-side-';

/** A client would need a server process beyond the workload's maximum. */
class ProcessLimitError extends Error {}

/** How client sessions share the server: see the module comment. */
export type ProcessSharing = 'shared' | 'isolated';

interface Pending {
	/** Undefined for the bridge's own requests. */
	readonly session: StdioUpstreamSession | undefined;
	readonly id: RequestId;
	readonly method: string;
	readonly progressToken: unknown;
	/** The request holds a share of its session's turn. */
	readonly held: boolean;
	readonly resolve: (response: JsonRpcResponse) => void;
	/** Unhooks the request from its caller's signal. */
	readonly unhook?: () => void;
}

/** How a request that must take turns goes: in its session's turn, or on the session's side process. */
type Way = 'turn' | 'side';

/** Counts uses (requests sent, streams opened or closed), to tell which session or process was used last. */
let useOrdinal = 0;

/** Answers a request in flight, for good. */
function settle(entry: Pending, response: JsonRpcResponse): void {
	entry.unhook?.();
	entry.resolve(response);
}

export interface StdioBridgeOptions {
	readonly runtime: Runtime;
	/** Container id or name. */
	readonly container: string;
	readonly log: Logger;
	readonly clientInfo: { name: string; version: string };
	readonly mode?: ProcessSharing;
	/**
	 * The container's stdio is one stream that one proxy can hold: a replica other than the
	 * first runs the server's command with `docker exec` as its main process instead.
	 */
	readonly execMain?: boolean;
	/**
	 * In `shared` mode, how many server processes clients with the same handshake are spread
	 * across (`scaling_config.backend_replicas`); 1 unless set.
	 */
	readonly processes?: number;
	/** The most server processes the container runs, its own included (`max_server_processes`). */
	readonly maxProcesses?: number;
	/** Seconds an idle process beside the container's own lives on (`server_process_idle_timeout`). */
	readonly idleTimeout?: number;
}

/** What a client asked for in `initialize`, and the key of the processes that can serve it. */
interface Handshake {
	readonly params: Record<string, unknown>;
	readonly key: string;
	/** The client declared a capability that lets the server send it requests. */
	readonly answersRequests: boolean;
}

function handshakeOf(params: Record<string, unknown> | undefined): Handshake {
	const protocolVersion = typeof params?.protocolVersion === 'string' ? params.protocolVersion : '';
	const capabilities = (params?.capabilities ?? {}) as Record<string, unknown>;
	return {
		params: params ?? {},
		key: `${protocolVersion}\n${canonicalJson(capabilities)}`,
		answersRequests: capabilities.sampling !== undefined || capabilities.elicitation !== undefined || capabilities.roots !== undefined,
	};
}

export class StdioBridge implements Backend {
	state: BackendState = 'connecting';
	detail: string | undefined = 'attaching to the container';
	onStateChange?: (state: BackendState, detail: string | undefined) => void;

	readonly mode: ProcessSharing;
	/** The container's own process, reattached whenever the connection is lost. */
	readonly main: ServerProcess;
	/** Shared processes by handshake key (the main one included, once initialised): up to `processes` each. */
	private readonly shared = new Map<string, Array<Promise<ServerProcess>>>();
	/** The next of a key's processes to take a session, once it has them all. */
	private readonly turns = new Map<string, number>();
	/** Processes beside the container's own that are starting. */
	private starting = 0;
	/** Processes beside the container's own that run, each with its last use a sweep saw and since when it has been that (`expireIdle`). */
	private readonly beside = new Map<ServerProcess, { use: number; since: number }>();
	private readonly idleSweep: NodeJS.Timeout;
	/** Side processes (see `sideFor`) by caller, running or starting. */
	private readonly sides = new Map<string, number>();
	private containerId: string | undefined;
	private connected!: Promise<void>;
	private markConnected!: () => void;
	private stopped = false;
	private loop: Promise<void> | undefined;
	/** The restart of the container whose own process was ended (`discard`): the loop reattaches after it. */
	private restarted: Promise<void> = Promise.resolve();

	constructor(readonly options: StdioBridgeOptions) {
		this.mode = options.mode ?? 'shared';
		this.main = new ServerProcess(this, 'the container');
		this.resetConnected();
		const idleMs = (options.idleTimeout ?? DEFAULT_SERVER_PROCESS_IDLE_TIMEOUT) * 1000;
		this.idleSweep = setInterval(() => this.expireIdle(idleMs), Math.min(Math.max(idleMs / 4, 250), 60_000));
		this.idleSweep.unref();
	}

	private resetConnected(): void {
		this.connected = new Promise((resolve) => (this.markConnected = resolve));
	}

	private setState(state: BackendState, detail?: string): void {
		if (this.state === state && this.detail === detail) return;
		this.state = state;
		this.detail = detail;
		if (state === 'connected') this.markConnected();
		this.onStateChange?.(state, detail);
	}

	/** Resolves once attached (and, after a reconnection, reinitialised); keeps reconnecting after that. */
	start(): Promise<void> {
		this.loop ??= this.run();
		return this.connected;
	}

	/** Waits for the container, or gives up when `signal` aborts. */
	async ready(signal: AbortSignal): Promise<boolean> {
		if (this.state === 'connected') return true;
		if (signal.aborted) return false;
		const cancelled = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
		await Promise.race([this.connected, cancelled]);
		return !signal.aborted;
	}

	private async run(): Promise<void> {
		let backoff = 250;
		while (!this.stopped) {
			await this.restarted;
			try {
				const info = await this.options.runtime.inspect(this.options.container);
				if (!info) throw new Error('container not found');
				if (info.state !== 'running') throw new Error(`container is ${info.state}`);
				this.containerId = info.id;
				const attachment = this.options.execMain ? await this.options.runtime.execCommand(info.id) : await this.options.runtime.attach(info.id);
				this.main.attach(attachment);
				const lost = attachment.closed.then(() => {
					throw new Error('the container closed its stdio');
				});
				lost.catch(() => undefined); // observed below; never an unhandled rejection
				// A restarted container's server is new: initialise it as its clients had it initialised.
				await Promise.race([this.main.reinitialize(), lost]);
				backoff = 250;
				this.setState('connected');
				this.options.log.info(`${this.options.execMain ? 'running the server in' : 'attached to'} container ${info.name}`);
				await lost;
			} catch (error) {
				this.main.detach((error as Error).message);
				if (this.stopped) return;
				if (this.state === 'connected') this.resetConnected();
				this.setState('disconnected', (error as Error).message);
				this.options.log.warn(`server connection: ${(error as Error).message}; retrying in ${backoff} ms`);
				await new Promise((resolve) => setTimeout(resolve, backoff));
				backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
			}
		}
	}

	/** The process that serves a client with this handshake (see the module comment). */
	async processFor(handshake: Handshake, own = false): Promise<ServerProcess> {
		if (this.mode === 'isolated' || own) return this.spawn(handshake, 'a session of its own');
		const { key } = handshake;
		const pool = this.shared.get(key) ?? [];
		if (pool.length < Math.max(1, this.options.processes ?? 1) && (pool.length === 0 || this.canSpawn())) {
			// Each new session gets a process of its own until the key has as many as configured.
			const process = pool.length === 0 && this.main.claim(handshake)
				? Promise.resolve(this.main)
				: this.spawn(handshake, pool.length === 0 ? 'clients of another revision or capability set' : `clients of its revision and capability set, beside ${pool.length} other process(es)`);
			pool.push(process);
			this.shared.set(key, pool);
			process.catch(() => this.forget(key, process));
			return process;
		}
		// Then they take sessions in turn.
		const turn = (this.turns.get(key) ?? 0) % pool.length;
		this.turns.set(key, turn + 1);
		return pool[turn]!;
	}

	private forget(key: string, process: Promise<ServerProcess>): void {
		const pool = this.shared.get(key)?.filter((pooled) => pooled !== process);
		if (pool?.length) this.shared.set(key, pool);
		else {
			this.shared.delete(key);
			this.turns.delete(key);
		}
	}

	private canSpawn(): boolean {
		return 1 + this.starting + this.beside.size < (this.options.maxProcesses ?? DEFAULT_MAX_SERVER_PROCESSES);
	}

	/** Ends the least recently used idle process beside the container's own, making room for another; false if every one is in use. */
	private reclaimIdle(): boolean {
		let idlest: ServerProcess | undefined;
		for (const process of this.beside.keys()) if (!process.inUse() && (!idlest || process.lastUsed < idlest.lastUsed)) idlest = process;
		if (!idlest) return false;
		this.endIdle(idlest, 'it was idle, and another client needed its place (max_server_processes)');
		return true;
	}

	/** Ends the processes beside the container's own that have been idle for `idleMs` (unused since, and not in use now). */
	private expireIdle(idleMs: number): void {
		const now = Date.now();
		for (const [process, seen] of this.beside) {
			if (process.inUse() || process.lastUsed !== seen.use) this.beside.set(process, { use: process.lastUsed, since: now });
			else if (now - seen.since >= idleMs) this.endIdle(process, `it was idle for ${idleMs / 1000} s (server_process_idle_timeout)`);
		}
	}

	private endIdle(process: ServerProcess, why: string): void {
		this.options.log.info(`ending ${process.description}: ${why}`);
		this.beside.delete(process); // its place is free at once; the process ends a moment later
		process.detach(`the proxy ended the server process: ${why}`);
		this.retire(process);
	}

	/**
	 * A process of `handshake` for one session of `caller` alone, beside the shared one whose
	 * turn another session holds while its call waits for its client: up to
	 * MAX_SIDE_PROCESSES_PER_CALLER per caller, within `max_server_processes`.
	 */
	async sideFor(handshake: Handshake, caller: string): Promise<ServerProcess> {
		const count = this.sides.get(caller) ?? 0;
		if (count >= MAX_SIDE_PROCESSES_PER_CALLER) {
			throw new ProcessLimitError(`this caller has ${MAX_SIDE_PROCESSES_PER_CALLER} server processes of its own beside the shared one (for calls that would wait on another caller's held call), the most it may have`);
		}
		this.sides.set(caller, count + 1);
		const done = () => {
			const left = (this.sides.get(caller) ?? 1) - 1;
			if (left > 0) this.sides.set(caller, left);
			else this.sides.delete(caller);
		};
		try {
			return await this.spawn(handshake, 'a client whose call must not wait on another client\'s held call', done);
		} catch (error) {
			done();
			throw error;
		}
	}

	/** Starts a process beside the container's own; `sideEnded` makes it a side process, called when it ends. */
	private async spawn(handshake: Handshake, purpose: string, sideEnded?: () => void): Promise<ServerProcess> {
		if (!this.canSpawn() && !this.reclaimIdle()) {
			const most = this.options.maxProcesses ?? DEFAULT_MAX_SERVER_PROCESSES;
			throw new ProcessLimitError(
				`all ${most} server processes of the container, the most this workload allows (max_server_processes), are in use (a call in flight, a server request or task, or a client's open event stream)`,
			);
		}
		this.starting++;
		let attachment: Attachment;
		try {
			attachment = await this.options.runtime.execCommand(this.containerId ?? this.options.container);
		} finally {
			this.starting--;
		}
		const process = new ServerProcess(this, `another process of the container, for ${purpose}`, sideEnded !== undefined);
		process.attach(attachment);
		process.claim(handshake);
		this.beside.set(process, { use: process.lastUsed, since: Date.now() });
		void attachment.closed.then(() => {
			this.beside.delete(process);
			sideEnded?.();
			process.detach('the server process ended');
		});
		return process;
	}

	/**
	 * Ends a process that broke the protocol past repair (a line without end): what it has in
	 * flight is answered with `reason`, and the next client that needs it gets a fresh process.
	 * The container's own process ends with a restart of the container (the processes beside
	 * it with it), reattached to by `run`: its sessions go on there, as after any restart.
	 * Another process ends with its sessions.
	 */
	discard(process: ServerProcess, reason: string): void {
		this.options.log.warn(`ending ${process.description}: ${reason}`);
		if (process === this.main && !this.options.execMain && this.containerId) this.restarted = this.restart(this.containerId);
		process.detach(reason);
		this.retire(process);
	}

	private async restart(container: string): Promise<void> {
		try {
			await this.options.runtime.stop(container, 0);
			await this.options.runtime.start(container);
		} catch (error) {
			this.options.log.warn(`restarting the container: ${(error as Error).message}`);
		}
	}

	serverProcesses(): ServerProcessCounts {
		const running = [...(this.state === 'connected' ? [this.main] : []), ...this.beside.keys()];
		return { running: running.length, in_use: running.filter((process) => process.inUse()).length, max: this.options.maxProcesses ?? DEFAULT_MAX_SERVER_PROCESSES };
	}

	/** A spawned process lost its last session: end it. */
	retire(process: ServerProcess): void {
		if (process === this.main || !process.handshake) return;
		if (this.mode === 'shared') {
			const key = process.handshake.key;
			for (const pooled of this.shared.get(key) ?? []) void pooled.then((member) => member === process && this.forget(key, pooled), () => undefined);
		}
		process.end();
	}

	open(sink: ClientSessionSink, options: OpenOptions = {}): UpstreamSession {
		return new StdioUpstreamSession(this, sink, options.ownProcess === true, options.caller ?? '');
	}

	async close(): Promise<void> {
		this.stopped = true;
		clearInterval(this.idleSweep);
		this.main.detach('the proxy is stopping');
		for (const process of [...this.shared.values()].flat()) void process.then((spawned) => spawned !== this.main && spawned.end(), () => undefined);
	}
}

/** One server process and the sessions it serves. */
export class ServerProcess {
	handshake: Handshake | undefined;
	/** When a client last used the process, as a use ordinal: only the order matters. */
	lastUsed = ++useOrdinal;
	private attachment: Attachment | undefined;
	private initializeResult: Record<string, unknown> | undefined;
	private initializing: Promise<JsonRpcResponse> | undefined;
	private nextId = 1;
	private readonly pending = new CallTable<Pending>();
	/** The server's requests to clients, unanswered, by the id the client got (see `outward`). */
	private readonly serverRequests = new CallTable<{ session: StdioUpstreamSession; id: RequestId }>();
	readonly sessions = new Set<StdioUpstreamSession>();
	private readonly state = new SharedProcessState<StdioUpstreamSession>();
	/** Whose requests may be in flight, when sessions take turns (see the module comment). */
	private turn: StdioUpstreamSession | undefined;
	private turnHeld = 0;
	private readonly waiting: Array<{ session: StdioUpstreamSession; go: (way: Way) => void }> = [];

	constructor(
		private readonly bridge: StdioBridge,
		readonly description: string,
		/** A session's side process (`StdioBridge.sideFor`). */
		readonly side = false,
	) {}

	attach(attachment: Attachment): void {
		this.attachment = attachment;
		const tooLong = `the server process wrote a line of over ${MAX_LINE_LENGTH} characters, longer than a message may be; the process was ended`;
		attachment.onStdout(lineSplitter((line) => this.onLine(line), MAX_LINE_LENGTH, () => this.bridge.discard(this, tooLong)));
	}

	/** Lost the process: answer what is in flight with an error. */
	detach(reason: string): void {
		this.attachment?.close();
		this.attachment = undefined;
		for (const [id, entry] of this.pending.entries()) {
			this.pending.delete(id);
			entry.session?.finished(entry.id);
			settle(entry, errorResponse(entry.id, ErrorCode.ConnectionClosed, `connection to the server was lost: ${reason}`));
		}
		this.serverRequests.clear();
		// A side process only spares its session a wait: the session goes on without it.
		if (this.side) for (const session of [...this.sessions]) session.lostSide(this);
		else if (this !== this.bridge.main) {
			for (const session of [...this.sessions]) session.sink.ended(`the server process ended: ${reason}`);
		}
	}

	end(): void {
		this.attachment?.close();
		this.attachment = undefined;
	}

	/** Takes this process for clients with `handshake`, unless it is taken already. */
	claim(handshake: Handshake): boolean {
		if (this.handshake) return false;
		this.handshake = handshake;
		return true;
	}

	/** After the main process was reattached: initialise it again as it was before. */
	async reinitialize(): Promise<void> {
		if (!this.handshake) return;
		this.initializeResult = undefined;
		this.initializing = undefined;
		const response = await this.initialize();
		if (response.error) throw new Error(`initialize failed: ${response.error.message}`);
	}

	/** Initialises the process with its handshake, once; later callers get the same answer. */
	initialize(): Promise<JsonRpcResponse> {
		if (this.initializeResult) return Promise.resolve({ jsonrpc: '2.0', id: 0, result: this.initializeResult });
		return (this.initializing ??= this.sendInitialize().then((response) => {
			if (response.result) this.initializeResult = response.result;
			else this.initializing = undefined;
			return response;
		}));
	}

	private sendInitialize(): Promise<JsonRpcResponse> {
		const { params } = this.handshake!;
		// A shared process serves several clients: it is introduced as the proxy, not as the first of them.
		const clientInfo = this.bridge.mode === 'shared' ? this.bridge.options.clientInfo : (params.clientInfo ?? this.bridge.options.clientInfo);
		return new Promise<JsonRpcResponse>((resolve) => {
			const id = this.nextId++;
			const timer = setTimeout(() => {
				this.pending.delete(id);
				resolve(errorResponse(id, ErrorCode.InternalError, `the server did not answer initialize within ${INITIALIZE_TIMEOUT_MS / 1000} s`));
			}, INITIALIZE_TIMEOUT_MS);
			this.pending.set(id, {
				session: undefined,
				id,
				method: 'initialize',
				progressToken: undefined,
				held: false,
				resolve: (answer) => {
					clearTimeout(timer);
					// Sent before anyone learns the answer: no request can overtake it.
					if (answer.result) this.write({ jsonrpc: '2.0', method: 'notifications/initialized' });
					resolve(answer);
				},
			});
			this.write({ jsonrpc: '2.0', id, method: 'initialize', params: { ...params, clientInfo } });
		});
	}

	private write(message: JsonRpcMessage): void {
		const stdin = this.attachment?.stdin;
		if (stdin) writeLine(stdin, message, this.pending.size > 1);
	}

	private onLine(line: string): void {
		const message = parseMessage(line);
		if (!message) {
			this.bridge.options.log.debug(`ignored a line that is not JSON-RPC: ${line.slice(0, 200)}`);
			return;
		}
		if (isResponse(message)) this.onResponse(message);
		else if (isRequest(message)) this.onServerRequest(message);
		else this.onServerNotification(message as JsonRpcNotification);
	}

	private onResponse(response: JsonRpcResponse): void {
		const entry = typeof response.id === 'number' ? this.pending.get(response.id) : undefined;
		if (!entry) return; // answered after being cancelled
		this.pending.delete(response.id as number);
		response.id = entry.id;
		if (entry.session) {
			entry.session.finished(entry.id);
			this.state.completed(entry.session, entry.method, response);
			if (entry.held) this.release(entry.session);
		}
		settle(entry, response);
	}

	private onServerRequest(request: JsonRpcRequest): void {
		if (request.method === 'ping') {
			this.write({ jsonrpc: '2.0', id: request.id, result: {} });
			return;
		}
		const session = this.originOf(request);
		if (!session) {
			this.write(errorResponse(request.id, ErrorCode.InternalError, 'no client is connected to answer this request'));
			return;
		}
		const outward = this.outward(request.id);
		this.serverRequests.set(outward, { session, id: request.id });
		session.sink.deliver(outward === request.id ? request : { ...request, id: outward }, session.latestRequest());
		// Its call now waits for its client, for as long as the client takes: the sessions
		// waiting for the turn go to side processes instead.
		if (session === this.turn) for (const waiter of this.waiting.splice(0)) waiter.go('side');
	}

	/** The id a client gets for a server request: renamed on a side process, where the session may meet the shared process's. */
	private outward(id: RequestId): RequestId {
		return this.side ? `${SIDE_ID_PREFIX}${String(id)}` : id;
	}

	/** Whether `session` has a request of the server's to answer, its call waiting for it. */
	private asked(session: StdioUpstreamSession): boolean {
		for (const asked of this.serverRequests.values()) if (asked.session === session) return true;
		return false;
	}

	/** The session a server request belongs to: the task's owner, else the one holding the turn. */
	private originOf(request: JsonRpcRequest): StdioUpstreamSession | undefined {
		const owner = this.state.ownerOfRelatedTask(request.params);
		if (owner) return owner;
		if (this.sessions.size === 1) return this.sessions.values().next().value;
		if (this.turn) return this.turn;
		let latest: StdioUpstreamSession | undefined;
		for (const session of this.sessions) if (!latest || session.lastRequestAt > latest.lastRequestAt) latest = session;
		return latest;
	}

	private onServerNotification(notification: JsonRpcNotification): void {
		if (notification.method === 'notifications/progress') {
			const token = notification.params?.progressToken;
			const entry = typeof token === 'number' ? this.pending.get(token) : undefined;
			if (entry?.session) {
				entry.session.sink.deliver({ ...notification, params: { ...notification.params, progressToken: entry.progressToken } }, entry.id);
			}
			return;
		}
		if (notification.method === 'notifications/cancelled') {
			const requestId = notification.params?.requestId as RequestId | undefined;
			const outward = requestId === undefined ? undefined : this.outward(requestId);
			const asked = outward === undefined ? undefined : this.serverRequests.get(outward);
			if (asked) {
				this.serverRequests.delete(outward!);
				asked.session.sink.deliver(outward === requestId ? notification : { ...notification, params: { ...notification.params, requestId: outward } });
			}
			return;
		}
		if (notification.method === 'notifications/message') {
			const caller = this.soleCaller();
			for (const session of this.state.listenersOf(notification, this.sessions, caller)) session.sink.deliver(notification, session === caller ? session.latestRequest() : undefined);
			return;
		}
		for (const session of this.state.recipientsOf(notification, this.sessions)) session.sink.deliver(notification);
	}

	/** The one session with requests in flight, if exactly one has. */
	private soleCaller(): StdioUpstreamSession | undefined {
		let caller: StdioUpstreamSession | undefined;
		for (const entry of this.pending.values()) {
			if (!entry.session) continue;
			if (caller && caller !== entry.session) return undefined;
			caller = entry.session;
		}
		return caller;
	}

	/** Sends a client request under a process-wide id; resolves with the response under the client's id. */
	forward(session: StdioUpstreamSession, request: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		const local = this.state.answerLocally(session, request);
		if (local?.response) return Promise.resolve(local.response);
		return this.send(session, local?.forward ?? request, signal);
	}

	private send(session: StdioUpstreamSession, request: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		const held = this.handshake?.answersRequests === true && !TURNLESS_METHODS.has(request.method);
		// The usual case, connected with no turns to take, goes out without a wait.
		const connected = this === this.bridge.main ? this.bridge.state === 'connected' : this.attachment !== undefined;
		return connected && !held ? this.transmit(session, request, signal, false) : this.sendWhenReady(session, request, signal, held);
	}

	/** A request that waits for the server, or for its session's turn, first: cancelled meanwhile, it never goes out. */
	private async sendWhenReady(session: StdioUpstreamSession, request: JsonRpcRequest, signal: AbortSignal, held: boolean): Promise<JsonRpcResponse> {
		const { controller, unlink } = linkedController(signal);
		const forget = session.waiting(request.id, controller);
		try {
			const connected = this === this.bridge.main ? await this.bridge.ready(controller.signal) : this.attachment !== undefined;
			const cancelled = () => errorResponse(request.id, ErrorCode.RequestTimeout, `request cancelled: ${String(controller.signal.reason ?? 'cancelled')}`);
			if (!connected) return controller.signal.aborted ? cancelled() : errorResponse(request.id, ErrorCode.ConnectionClosed, `the server is not connected: ${this.bridge.detail ?? 'the server process ended'}`);
			const way = held ? await this.acquire(session, controller.signal) : 'turn';
			if (!way) return cancelled();
			if (way === 'side') return await session.aside(request, controller.signal);
		} finally {
			unlink();
			forget();
		}
		return this.transmit(session, request, signal, held);
	}

	private transmit(session: StdioUpstreamSession, request: JsonRpcRequest, signal: AbortSignal, held: boolean): Promise<JsonRpcResponse> {
		const id = this.nextId++;
		const meta = request.params?._meta as Record<string, unknown> | undefined;
		const progressToken = meta?.progressToken;
		const params = progressToken === undefined ? request.params : { ...request.params, _meta: { ...meta, progressToken: id } };
		return new Promise<JsonRpcResponse>((resolve) => {
			this.pending.set(id, {
				session,
				id: request.id,
				method: request.method,
				progressToken,
				held,
				resolve,
				unhook: onAbort(signal, (reason) => this.abandon(id, String(reason ?? 'cancelled'))),
			});
			session.started(request.id, this, id);
			this.lastUsed = session.lastRequestAt;
			this.write({ jsonrpc: '2.0', id, method: request.method, params });
		});
	}

	/** Gives up the request in flight under `processId`: the server is told why, and the caller. */
	abandon(processId: number, reason: string): void {
		const entry = this.pending.get(processId);
		if (!entry) return;
		this.pending.delete(processId);
		entry.session?.finished(entry.id);
		if (entry.held && entry.session) this.release(entry.session);
		this.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: processId, reason } });
		settle(entry, errorResponse(entry.id, ErrorCode.RequestTimeout, `request cancelled: ${reason}`));
	}

	/**
	 * Waits until `session` may have requests in flight (sessions take turns): 'turn' then; or
	 * 'side' when the session holding the turn waits for its client, whose call is then no
	 * reason to wait (see the module comment); false if `signal` aborts first.
	 */
	private acquire(session: StdioUpstreamSession, signal: AbortSignal): Promise<Way | false> {
		if (!this.turn || this.turn === session) {
			this.turn = session;
			this.turnHeld++;
			return Promise.resolve('turn');
		}
		if (signal.aborted) return Promise.resolve(false);
		if (this.asked(this.turn)) return Promise.resolve('side');
		return new Promise((resolve) => {
			const waiter = {
				session,
				go: (way: Way) => {
					signal.removeEventListener('abort', onAbort);
					if (way === 'turn') this.turnHeld++;
					resolve(way);
				},
			};
			const onAbort = () => {
				this.waiting.splice(this.waiting.indexOf(waiter), 1);
				resolve(false);
			};
			signal.addEventListener('abort', onAbort, { once: true });
			this.waiting.push(waiter);
		});
	}

	private release(session: StdioUpstreamSession): void {
		if (this.turn !== session) return;
		if (--this.turnHeld > 0) return;
		this.turn = this.waiting[0]?.session;
		if (!this.turn) return;
		for (const waiter of this.waiting.filter((candidate) => candidate.session === this.turn)) {
			this.waiting.splice(this.waiting.indexOf(waiter), 1);
			waiter.go('turn');
		}
	}

	/** Relays a client's notification or its answer to a server request. */
	relay(session: StdioUpstreamSession, message: JsonRpcNotification | JsonRpcResponse): void {
		if (isResponse(message)) {
			const asked = message.id === null ? undefined : this.serverRequests.get(message.id);
			if (asked?.session === session) {
				this.serverRequests.delete(message.id!);
				this.write(asked.id === message.id ? message : { ...message, id: asked.id });
			}
			return;
		}
		if (message.method === 'notifications/initialized') return; // the bridge initialised the process
		if (message.method === 'notifications/cancelled') {
			const sent = session.sentAs(message.params?.requestId as RequestId);
			const processId = sent?.process === this ? sent.id : undefined;
			const entry = processId === undefined ? undefined : this.pending.get(processId);
			if (processId === undefined || !entry) return;
			this.pending.delete(processId);
			session.finished(entry.id);
			if (entry.held) this.release(session);
			this.write({ ...message, params: { ...message.params, requestId: processId } });
			settle(entry, errorResponse(entry.id, ErrorCode.RequestTimeout, 'request cancelled by the client'));
			return;
		}
		this.write(message);
	}

	join(session: StdioUpstreamSession): void {
		this.sessions.add(session);
		this.used();
	}

	used(): void {
		this.lastUsed = ++useOrdinal;
	}

	/** A client uses the process (see the module comment): it is not idle. */
	inUse(): boolean {
		if (this.pending.size > 0 || this.waiting.length > 0 || this.serverRequests.size > 0 || this.state.hasTasks()) return true;
		for (const session of this.sessions) if (session.listening) return true;
		return false;
	}

	/** Nothing in flight and no task to be asked about: a side process may end. */
	idle(): boolean {
		return this.pending.size === 0 && !this.state.hasTasks();
	}

	/** `request` names a task `session` created on this process. */
	ownsTaskOf(session: StdioUpstreamSession, request: JsonRpcRequest): boolean {
		return this.state.ownsTask(session, request.params);
	}

	/** A session ended: cancel what it has in flight, refuse the server requests it holds, drop its state. */
	leave(session: StdioUpstreamSession): void {
		if (!this.sessions.delete(session)) return;
		for (const [id, entry] of this.pending.entries()) {
			if (entry.session !== session) continue;
			this.pending.delete(id);
			this.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'client session closed' } });
			settle(entry, errorResponse(entry.id, ErrorCode.ConnectionClosed, 'client session closed'));
		}
		for (const [outward, asked] of this.serverRequests.entries()) {
			if (asked.session !== session) continue;
			this.serverRequests.delete(outward);
			this.write(errorResponse(asked.id, ErrorCode.InternalError, 'the client session closed'));
		}
		for (const waiter of this.waiting.filter((candidate) => candidate.session === session)) this.waiting.splice(this.waiting.indexOf(waiter), 1);
		if (this.turn === session) {
			this.turnHeld = 1;
			this.release(session);
		}
		for (const message of this.state.forget(session, this.sessions)) this.write({ jsonrpc: '2.0', id: this.nextId++, ...message });
		if (this.sessions.size === 0) this.bridge.retire(this);
	}
}

/** One client's view of the bridge. */
export class StdioUpstreamSession implements UpstreamSession {
	/** When the session last sent a request, as a use ordinal: only the order matters. */
	lastRequestAt = 0;
	/** The client holds the session's event stream open. */
	listening = false;
	private process: ServerProcess | undefined;
	/** The session's side process (StdioBridge.sideFor), starting or started, while it has calls or tasks there. */
	private side: Promise<ServerProcess> | undefined;
	private sideProcess: ServerProcess | undefined;
	/** Calls sent to the side process that have not been answered. */
	private sideCalls = 0;
	private latest: RequestId | undefined;
	/** Client request id → the process it went to and its id there, for the client's cancellations. */
	private readonly processIds = new CallTable<{ process: ServerProcess; id: number }>();
	private readonly waitingRequests = new CallTable<AbortController>();
	private closed = false;

	constructor(
		private readonly bridge: StdioBridge,
		readonly sink: ClientSessionSink,
		/** A process of its own, whatever the mode (OpenOptions.ownProcess). */
		private readonly ownProcess = false,
		/** Who opened the session (OpenOptions.caller): side processes are counted by it. */
		private readonly caller = '',
	) {}

	request(message: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		if (message.method === 'initialize') return this.initialize(message, signal);
		if (!this.process) return Promise.resolve(errorResponse(message.id, ErrorCode.InvalidRequest, 'Bad Request: the session is not initialized (send initialize first)'));
		// A task created on the side process is asked about there.
		const process = this.sideProcess?.ownsTaskOf(this, message) ? this.sideProcess : this.process;
		return process.forward(this, message, signal);
	}

	/**
	 * Sends `request` on the session's side process, started for it if need be: the session
	 * holding the shared process's turn waits for its client (see the module comment). The side
	 * process ends once its last call is answered, unless tasks created there live on.
	 */
	async aside(request: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		this.sideCalls++;
		try {
			const starting = (this.side ??= this.startSide());
			let side: ServerProcess;
			try {
				side = await starting;
			} catch (error) {
				if (this.side === starting) this.side = undefined;
				const code = error instanceof ProcessLimitError ? ErrorCode.LimitReached : ErrorCode.InternalError;
				return errorResponse(request.id, code, `another client's call holds the shared server process, and no process can be started for this call: ${(error as Error).message}`);
			}
			if (signal.aborted) return errorResponse(request.id, ErrorCode.RequestTimeout, `request cancelled: ${String(signal.reason ?? 'cancelled')}`);
			return await side.forward(this, request, signal);
		} finally {
			if (--this.sideCalls === 0 && this.sideProcess?.idle()) this.leaveSide(this.sideProcess);
		}
	}

	private async startSide(): Promise<ServerProcess> {
		const side = await this.bridge.sideFor(this.process!.handshake!, this.caller);
		side.join(this);
		const answer = await side.initialize();
		if (answer.error || this.closed) {
			side.leave(this);
			throw new Error(answer.error ? `initialize failed: ${answer.error.message}` : 'client session closed');
		}
		this.sideProcess = side;
		return side;
	}

	private leaveSide(side: ServerProcess): void {
		this.lostSide(side);
		side.leave(this);
	}

	/** The side process ended or was left: the next call that needs one starts another. */
	lostSide(side: ServerProcess): void {
		if (this.sideProcess !== side) return;
		this.sideProcess = undefined;
		this.side = undefined;
	}

	/** The session's handshake; `cancel` gives it up too, as a timeout does (it may wait for a process to start). */
	private initialize(message: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		const { controller, unlink } = linkedController(signal);
		const forget = this.waiting(message.id, controller);
		const cancelled = (reason: unknown) => errorResponse(message.id, ErrorCode.RequestTimeout, `request cancelled: ${String(reason ?? 'cancelled')}`);
		return unlessAborted(this.handshake(message, controller.signal), controller.signal, cancelled).finally(() => {
			unlink();
			forget();
		});
	}

	private async handshake(message: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		if (this.process) return errorResponse(message.id, ErrorCode.InvalidRequest, 'Bad Request: the session is initialized already');
		const requested = message.params?.protocolVersion;
		if (typeof requested !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(requested)) {
			// As servers do: offer the latest revision both sides know; the client decides whether to go on.
			message = { ...message, params: { ...message.params, protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.at(-1) } };
		}
		if (!(await this.bridge.ready(signal))) return errorResponse(message.id, ErrorCode.ConnectionClosed, `the server is not connected: ${this.bridge.detail}`);
		let process: ServerProcess;
		try {
			process = await this.bridge.processFor(handshakeOf(message.params), this.ownProcess);
		} catch (error) {
			const code = error instanceof ProcessLimitError ? ErrorCode.LimitReached : ErrorCode.InternalError;
			return errorResponse(message.id, code, `cannot start a server process for this client: ${(error as Error).message}`);
		}
		if (this.closed) return errorResponse(message.id, ErrorCode.ConnectionClosed, 'client session closed');
		process.join(this);
		const answer = await process.initialize();
		if (answer.error || this.closed) {
			process.leave(this);
			return answer.error ? { ...answer, id: message.id } : errorResponse(message.id, ErrorCode.ConnectionClosed, 'client session closed');
		}
		this.process = process;
		return { jsonrpc: '2.0', id: message.id, result: answer.result };
	}

	send(message: JsonRpcNotification | JsonRpcResponse): void {
		// Each process takes what is its own: the answers to its requests, cancellations of calls sent to it.
		this.process?.relay(this, message);
		this.sideProcess?.relay(this, message);
	}

	streaming(open: boolean): void {
		this.listening = open;
		this.process?.used();
	}

	cancel(id: RequestId, reason: string): void {
		const sent = this.processIds.get(id);
		if (sent) sent.process.abandon(sent.id, reason);
		else this.waitingRequests.get(id)?.abort(reason);
	}

	/** Request `id` waits to go out; `cancel` stops it through `controller`. Returns what forgets it. */
	waiting(id: RequestId, controller: AbortController): () => void {
		this.waitingRequests.set(id, controller);
		return () => this.waitingRequests.delete(id);
	}

	close(): void {
		this.closed = true;
		this.process?.leave(this);
		if (this.sideProcess) this.leaveSide(this.sideProcess);
	}

	started(id: RequestId, process: ServerProcess, processId: number): void {
		this.lastRequestAt = ++useOrdinal;
		this.latest = id;
		this.processIds.set(id, { process, id: processId });
	}

	finished(id: RequestId): void {
		this.processIds.delete(id);
	}

	/** Where the client request `id` in flight went. */
	sentAs(id: RequestId): { process: ServerProcess; id: number } | undefined {
		return this.processIds.get(id);
	}

	/** The client request most recently sent, while it is in flight. */
	latestRequest(): RequestId | undefined {
		return this.latest !== undefined && this.processIds.has(this.latest) ? this.latest : undefined;
	}
}
