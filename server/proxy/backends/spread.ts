/**
 * Several instances of an HTTP server, each in its own container (`scaling_config.backend_replicas`),
 * behind one backend. Each new session goes to the next instance that answers, in turn; an
 * upstream session lives on one instance, so every request of the session goes there.
 *
 * An instance that dies is replaced: the engine restarts a server that exits (the workload's
 * restart policy is the container's), and a container stopped from outside (`docker kill`) is
 * started again here when that policy says it comes back, as the reconciler does for a
 * workload's only container. Until it answers again, new sessions go to the others. A session
 * that was on it fails over cleanly: the request that finds it gone is answered with an error
 * and the session ends, so the client's next request gets a 404 and it opens a new session
 * (as MCP's Streamable HTTP transport says a client does), which lands on a live instance.
 * A request that reached no server (refused, or the container not running) before the session
 * had anything upstream — its `initialize`, or any request of a session carried in the
 * 2026-07-28 revision — is sent to another instance instead.
 *
 * With a server that speaks 2026-07-28 nothing of a session lives upstream, so its requests
 * that stand alone (a tool call, a list, a read) are spread across the instances one by one too.
 */
import type { Logger } from '../../log.js';
import type { RestartPolicy, Runtime } from '../../runtime/runtime.js';
import type { Backend, UpstreamSession, BackendState, OpenOptions, ClientSessionSink } from '../core/backend.js';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../core/jsonrpc.js';
import { comesBack } from '../../runspec/instances.js';
import type { HttpBackend } from './http.js';
import { tagsOf } from '../core/tags.js';

/** How often an instance is asked whether it still answers (an HTTP GET, as at start). */
const CHECK_INTERVAL_MS = 3_000;

/** Requests that stand alone in MCP 2026-07-28, which any instance of a server speaking it may answer. */
const STANDALONE = new Set(['tools/call', 'tools/list', 'prompts/list', 'prompts/get', 'resources/list', 'resources/read', 'resources/templates/list', 'completion/complete', 'ping']);

/** Client capabilities under which the server may ask the client something in the middle of a request. */
const ASKING_CAPABILITIES = ['sampling', 'elicitation', 'roots'];

/** What a replica hands another to take a session over (`UpstreamSession.snapshot`): the instance and its own snapshot. */
interface SpreadSnapshot {
	readonly instance: number;
	readonly upstream: unknown;
}

function isSpreadSnapshot(value: unknown): value is SpreadSnapshot {
	return typeof (value as SpreadSnapshot | undefined)?.instance === 'number';
}

export class SpreadBackend implements Backend {
	state: BackendState = 'connecting';
	detail: string | undefined = 'locating the server';
	onStateChange?: (state: BackendState, detail: string | undefined) => void;

	private next = 0;
	private readonly recovering = new Set<number>();
	private closed = false;
	private readonly checking: NodeJS.Timeout;

	constructor(
		readonly instances: readonly HttpBackend[],
		private readonly log: Logger,
	) {
		instances.forEach((instance, index) => {
			instance.onStateChange = (state) => {
				this.update();
				if (state === 'disconnected') this.recover(index);
			};
		});
		// An instance nobody calls is found dead too, so that it is replaced before a session needs it.
		this.checking = setInterval(() => void Promise.all(this.instances.map((instance) => instance.check())), CHECK_INTERVAL_MS);
		this.checking.unref();
	}

	/** Connected while any instance is. */
	private update(): void {
		const live = this.instances.filter((instance) => instance.state === 'connected').length;
		const [state, detail] = live > 0 ? (['connected', undefined] as const) : [this.instances[0]!.state, this.instances[0]!.detail];
		if (state === this.state && detail === this.detail) return;
		this.state = state;
		this.detail = detail;
		this.onStateChange?.(state, detail);
	}

	/** Probes a lost instance until it answers again (its locator starts its container when it should). */
	private recover(index: number): void {
		if (this.closed || this.recovering.has(index)) return;
		this.recovering.add(index);
		this.log.warn(`server instance ${index + 1} of ${this.instances.length} is unreachable (${this.instances[index]!.detail ?? 'no answer'}); new sessions go to the others until it answers`);
		void this.instances[index]!.start().finally(() => {
			this.recovering.delete(index);
			if (!this.closed && this.instances[index]!.state === 'connected') this.log.info(`server instance ${index + 1} answers again`);
		});
	}

	/** Resolves once every instance answers: sessions are spread from the first. */
	async start(): Promise<void> {
		await Promise.all(this.instances.map((instance) => instance.start()));
	}

	/** The next instance in turn that answers (any, when none does: its request says why). */
	pick(except?: ReadonlySet<number>): number | undefined {
		const count = this.instances.length;
		let fallback: number | undefined;
		for (let step = 0; step < count; step++) {
			const index = (this.next + step) % count;
			if (except?.has(index)) continue;
			fallback ??= index;
			if (this.instances[index]!.state === 'connected') {
				this.next = index + 1;
				return index;
			}
		}
		if (fallback !== undefined) this.next = fallback + 1;
		return fallback;
	}

	open(sink: ClientSessionSink, options: OpenOptions = {}): UpstreamSession {
		if (isSpreadSnapshot(options.adopt) && options.adopt.instance < this.instances.length) {
			return new SpreadUpstreamSession(this, sink, options, options.adopt.instance, options.adopt.upstream);
		}
		return new SpreadUpstreamSession(this, sink, options, this.pick()!, undefined);
	}

	async close(): Promise<void> {
		this.closed = true;
		clearInterval(this.checking);
		await Promise.all(this.instances.map((instance) => instance.close()));
	}
}

/** A client session on one instance, moved to another only while nothing of it lives upstream. */
class SpreadUpstreamSession implements UpstreamSession {
	private inner: UpstreamSession;
	/** The client's `initialize`, replayed on another instance when the session moves before it is answered. */
	private initialize: JsonRpcRequest | undefined;
	private initialized = false;
	private ended = false;
	private clientStreaming = false;
	private readonly relay: ClientSessionSink;
	/** With a server that speaks 2026-07-28: the session opened on other instances too, for requests spread across them. */
	private readonly sides = new Map<number, Promise<UpstreamSession | undefined>>();

	constructor(
		private readonly spread: SpreadBackend,
		private readonly sink: ClientSessionSink,
		private readonly options: OpenOptions,
		private instance: number,
		adopt: unknown,
	) {
		this.relay = { deliver: (message, relatedTo) => sink.deliver(message, relatedTo), ended: (reason) => this.end(reason) };
		this.inner = spread.instances[instance]!.open(this.relay, adopt === undefined ? options : { ...options, adopt });
		if (adopt !== undefined) this.initialized = true;
	}

	get speaks2026(): boolean | undefined {
		return this.inner.speaks2026;
	}

	async request(message: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		if (message.method === 'initialize') this.initialize = message;
		if (this.spreads(message)) {
			const answer = await this.elsewhere(message, signal);
			if (answer) return answer;
		}
		const tried = new Set<number>();
		for (;;) {
			const answer = await this.inner.request(message, signal);
			const failure = tagsOf(answer)?.connectionFailure;
			if (!failure) {
				if (message.method === 'initialize' && answer.result) this.initialized = true;
				return answer;
			}
			// Nothing of the session upstream yet, or a 2026-07-28 one: another instance will do.
			const movable = !failure.reached && (!this.initialized || this.inner.speaks2026 === true);
			tried.add(this.instance);
			const other = movable && !signal.aborted ? this.spread.pick(tried) : undefined;
			if (other === undefined) {
				if (this.initialized) this.end(`the server instance the session was on is gone (${answer.error?.message ?? 'no answer'}); start a new session`);
				return answer;
			}
			if (!(await this.move(other, message, signal))) return answer;
		}
	}

	/**
	 * Whether `message` may go to any instance: the server speaks 2026-07-28 (nothing of the
	 * session lives upstream), the request is one that stands alone (no task, no subscription),
	 * and the client takes no requests from the server (which the instance that asked must hear
	 * answered).
	 */
	private spreads(message: JsonRpcRequest): boolean {
		if (this.inner.speaks2026 !== true || !this.initialize || !STANDALONE.has(message.method)) return false;
		if (message.method === 'tools/call' && message.params?.task !== undefined) return false;
		const declared = (this.initialize.params?.capabilities ?? {}) as Record<string, unknown>;
		return !ASKING_CAPABILITIES.some((capability) => declared[capability] !== undefined);
	}

	/** `message` on the next instance in turn, when that is not the session's own; undefined to send it there. */
	private async elsewhere(message: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse | undefined> {
		const target = this.spread.pick();
		if (target === undefined || target === this.instance) return undefined;
		let side = this.sides.get(target);
		if (!side) {
			side = this.openSide(target, signal);
			this.sides.set(target, side);
		}
		const session = await side;
		if (!session) {
			this.sides.delete(target);
			return undefined;
		}
		const answer = await session.request(message, signal);
		const failure = tagsOf(answer)?.connectionFailure;
		if (!failure) return answer;
		this.dropSide(target);
		// Refused: the session's own instance takes it. Possibly reached: as on the session's own.
		return failure.reached ? answer : undefined;
	}

	/** The session on instance `target`, its handshake replayed there (a `server/discover`). */
	private async openSide(target: number, signal: AbortSignal): Promise<UpstreamSession | undefined> {
		const session = this.spread.instances[target]!.open({ deliver: (message, relatedTo) => this.sink.deliver(message, relatedTo), ended: () => this.dropSide(target) }, this.options);
		const answer = await session.request(this.initialize!, signal);
		if (answer.result && session.speaks2026) return session;
		session.close();
		return undefined;
	}

	private dropSide(target: number): void {
		const side = this.sides.get(target);
		this.sides.delete(target);
		void side?.then((session) => session?.close());
	}

	/** Opens the session on instance `to`, with the client's handshake again unless `message` is it. */
	private async move(to: number, message: JsonRpcRequest, signal: AbortSignal): Promise<boolean> {
		this.inner.close();
		this.instance = to;
		this.inner = this.spread.instances[to]!.open(this.relay, this.options);
		if (!this.initialize || message === this.initialize) return true;
		const answer = await this.inner.request(this.initialize, signal);
		if (!answer.result) return false;
		if (!this.inner.speaks2026) await this.inner.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
		if (this.clientStreaming) this.inner.streaming?.(true);
		return true;
	}

	private end(reason: string): void {
		if (this.ended) return;
		this.ended = true;
		this.sink.ended(reason); // the client session still answers the request that found the instance gone
	}

	send(message: JsonRpcNotification | JsonRpcResponse): void | Promise<void> {
		return this.inner.send(message);
	}

	snapshot(): SpreadSnapshot | undefined {
		const upstream = this.inner.snapshot?.();
		return upstream === undefined ? undefined : { instance: this.instance, upstream };
	}

	streaming(open: boolean): void {
		this.clientStreaming = open;
		this.inner.streaming?.(open);
	}

	release(): void {
		this.closeSides();
		if (this.inner.release) this.inner.release();
		else this.inner.close();
	}

	close(): void {
		this.closeSides();
		this.inner.close();
	}

	private closeSides(): void {
		for (const target of [...this.sides.keys()]) this.dropSide(target);
	}
}

/**
 * Where instance `container` answers: its published port, found again when it moves (a
 * restarted container publishes another). A container stopped from outside that its restart
 * policy brings back is started again, and answers on a later look.
 */
export function instanceLocator(runtime: Runtime, container: string, targetPort: number, path: string, policy: RestartPolicy | undefined, log: Logger): () => Promise<URL> {
	return async () => {
		const info = await runtime.inspect(container);
		if (!info) throw new Error(`container ${container} not found`);
		if ((info.state === 'exited' || info.state === 'dead') && comesBack(policy, info.exitCode)) {
			log.info(`starting container ${container} again (restart policy ${policy})`);
			await runtime.start(info.id);
			throw new Error(`container ${container} is starting again`);
		}
		if (info.state !== 'running') throw new Error(`container ${container} is ${info.state}`);
		const endpoint = await runtime.endpoint(info.id, targetPort);
		return new URL(`http://${endpoint.host}:${endpoint.port}${path}`);
	};
}
