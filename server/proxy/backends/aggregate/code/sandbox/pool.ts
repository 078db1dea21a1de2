/**
 * The sandbox workers of an aggregate's proxy: a few kept warm (each with its QuickJS module
 * loaded and contexts ready), one per script running (at most 8 at once: the others wait), none
 * before the aggregate starts or for an aggregate without code mode. A worker that overruns its
 * script's time by more than the engine's own checks allow, or dies, is ended and replaced; the
 * others go on.
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { Deadlines } from '../../../../core/deadlines.js';
import type { CancelSignal } from '../../cancellation.js';
import { ScriptLimitError, type HostFunction, type ScriptLimits, type ScriptOutcome } from './limits.js';
import { CANCELLED, DOORBELL, SIGNAL_CELLS, TIDYING, type FromWorker, type SandboxData, type ToWorker } from './protocol.js';

const WORKER = new URL('./worker.js', import.meta.url);
/** Workers kept waiting for the next script. */
const IDLE = 2;
/** Scripts running at once; more wait their turn, so a flood of calls cannot start a thread each. */
const MAX_RUNNING = 8;
/** How far past its time limit a script's worker is ended, when the engine did not end it. */
const GRACE_MS = 2_000;
/** The worker's own stack: roomy beside the engine's (at most 256 KiB, limits.ts). */
const WORKER_STACK_MB = 4;

export interface PooledRun {
	readonly code: string;
	readonly prelude: string;
	readonly host: HostFunction;
	readonly signal: CancelSignal;
}

class SandboxWorker {
	readonly worker: Worker;
	private readonly signals = new Int32Array(new SharedArrayBuffer(SIGNAL_CELLS * Int32Array.BYTES_PER_ELEMENT));
	/** The pool's side of the worker's port. */
	private readonly port: MessagePort;
	readonly ready: Promise<void>;
	/** Whether the worker said it is ready (then its script need not wait for `ready`). */
	isReady = false;
	/** Whether the worker ended (it died, or was ended): it is never used again. */
	gone = false;
	/** The prelude of its last script, which it keeps. */
	prelude: string | undefined;
	/** Hears the worker's messages about the script it runs. */
	listener: ((message: FromWorker) => void) | undefined;

	constructor(url: URL, limits: ScriptLimits) {
		const { port1, port2 } = new MessageChannel();
		this.port = port1;
		this.worker = new Worker(url, {
			workerData: { signals: this.signals.buffer as SharedArrayBuffer, port: port2, limits } satisfies SandboxData,
			transferList: [port2],
			resourceLimits: { stackSizeMb: WORKER_STACK_MB },
		});
		// The proxy lives as long as its server: a sandbox never keeps it up.
		this.worker.unref();
		this.ready = new Promise((resolve, reject) => {
			this.worker.once('message', (message: FromWorker) => (message.type === 'ready' ? resolve() : reject(new Error(`unexpected ${message.type}`))));
			this.worker.once('error', reject);
		});
		this.ready.then(() => (this.isReady = true)).catch(() => undefined);
		this.worker.once('exit', () => {
			this.gone = true;
			// A script whose worker died ends with it.
			this.listener?.({ type: 'done', outcome: { ok: false, error: 'the sandbox failed: its worker ended', logs: [] }, retire: true });
		});
		this.worker.on('message', (message: FromWorker) => (message.type === 'broken' ? this.end() : this.listener?.(message)));
	}

	/** Sends `message`, and wakes the worker if it sleeps waiting for one. */
	send(message: ToWorker): void {
		if (this.gone) return;
		this.port.postMessage(message);
		this.ring();
	}

	/** Whether the worker is still making ready for its next script, after its last. */
	get tidying(): boolean {
		return Atomics.load(this.signals, TIDYING) !== 0;
	}

	/** Cancels the script the worker runs. */
	cancel(): void {
		Atomics.store(this.signals, CANCELLED, 1);
		this.ring();
	}

	/** Readies the worker for its next script. */
	reset(): void {
		Atomics.store(this.signals, CANCELLED, 0);
	}

	end(): void {
		this.gone = true;
		void this.worker.terminate();
	}

	private ring(): void {
		Atomics.add(this.signals, DOORBELL, 1);
		Atomics.notify(this.signals, DOORBELL);
	}
}

export class SandboxPool {
	private readonly idle: SandboxWorker[] = [];
	private running = 0;
	private readonly queued: Array<() => void> = [];
	private closed = false;
	/** Each running script's backstop: one Node timer for all, rather than one made and cleared per script. */
	private readonly backstops: Deadlines<() => void>;

	/** `limits`: each script's; the memory limit is its worker's. */
	constructor(
		readonly limits: ScriptLimits,
		private readonly url: URL = WORKER,
	) {
		this.backstops = new Deadlines(limits.timeoutMs + GRACE_MS, (stop) => stop());
	}

	/** Starts the workers kept warm, ahead of the first script. */
	warm(): void {
		while (!this.closed && this.idle.length < IDLE) this.idle.push(new SandboxWorker(this.url, this.limits));
	}

	/** Runs one script in a worker; never rejects. */
	async run(run: PooledRun): Promise<ScriptOutcome> {
		if (this.running >= MAX_RUNNING) await new Promise<void>((resolve) => this.queued.push(resolve));
		this.running++;
		try {
			if (run.signal.aborted) return { ok: false, error: 'the call was cancelled', logs: [] };
			const worker = this.take();
			try {
				if (!worker.isReady) await worker.ready;
			} catch (error) {
				worker.end();
				return { ok: false, error: `the sandbox could not start: ${(error as Error).message}`, logs: [] };
			}
			const outcome = await this.runOn(worker, run);
			this.giveBack(worker);
			return outcome;
		} finally {
			this.running--;
			this.queued.shift()?.();
		}
	}

	close(): void {
		this.closed = true;
		for (const worker of this.idle.splice(0)) worker.end();
	}

	/**
	 * A warm worker, or a new one; when none is left warm, one starts for the next script (it goes
	 * back after). The worker used last, unless it is still making ready after its script and
	 * another is ready (started, and not doing so).
	 */
	private take(): SandboxWorker {
		const ready = this.idle.findLastIndex((each) => !each.gone && each.isReady && !each.tidying);
		let worker = ready >= 0 ? this.idle.splice(ready, 1)[0] : this.idle.pop();
		while (worker?.gone) worker = this.idle.pop();
		if (!this.idle.length && !this.closed) this.idle.push(new SandboxWorker(this.url, this.limits));
		return worker ?? new SandboxWorker(this.url, this.limits);
	}

	private giveBack(worker: SandboxWorker): void {
		if (worker.gone) return;
		if (this.closed || this.idle.length >= IDLE) return worker.end();
		// Last in, first out: the worker used last has its engine's memory and code warm.
		worker.reset();
		this.idle.push(worker);
	}

	private runOn(sandbox: SandboxWorker, run: PooledRun): Promise<ScriptOutcome> {
		return new Promise<ScriptOutcome>((resolve) => {
			const finish = (outcome: ScriptOutcome) => {
				this.backstops.delete(backstop);
				run.signal.removeEventListener('abort', cancel);
				sandbox.listener = undefined;
				resolve(outcome);
			};
			const cancel = () => sandbox.cancel();
			const backstop = this.backstops.add(() => {
				sandbox.end();
				finish({ ok: false, error: `time limit: the script ran past ${this.limits.timeoutMs} ms (its sandbox was stopped)`, logs: [] });
			});
			sandbox.listener = (message) => {
				if (message.type === 'done') {
					if (message.retire) sandbox.end();
					// After this turn of the proxy's loop, which passes the answer on.
					else setImmediate(() => sandbox.send({ type: 'tidy' }));
					return finish(message.outcome);
				}
				if (message.type !== 'host') return;
				const { call } = message;
				const answered = (value: unknown) => sandbox.send({ type: 'answer', call, json: JSON.stringify(value ?? null) });
				const failed = (error: Error) => sandbox.send({ type: 'answer', call, ...(error instanceof ScriptLimitError ? { limit: error.message } : { error: error.message }) });
				try {
					run.host(message.name, JSON.parse(message.args) as unknown).then(answered, failed);
				} catch (error) {
					failed(error as Error);
				}
			};
			if (run.signal.aborted) cancel();
			run.signal.addEventListener('abort', cancel);
			const prelude = run.prelude === sandbox.prelude ? undefined : run.prelude;
			sandbox.prelude = run.prelude;
			sandbox.send({ type: 'run', code: run.code, prelude });
		});
	}
}
