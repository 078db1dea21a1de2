/**
 * What the pool (pool.ts, on the proxy's thread) and a sandbox worker (worker.ts) say to each
 * other: the messages, JSON text inside so that nothing is cloned twice, and the shared memory
 * by which the pool wakes a worker that sleeps waiting for it.
 */
import type { MessagePort } from 'node:worker_threads';
import type { HostAnswer } from './engine.js';
import type { ScriptLimits, ScriptOutcome } from './limits.js';

/** The Int32 cells of the shared memory. */
export const DOORBELL = 0;
export const CANCELLED = 1;
export const TIDYING = 2;
export const SIGNAL_CELLS = 3;

/** What the pool gives a worker at its start. */
export interface SandboxData {
	/**
	 * DOORBELL: counted up by the pool after each message and cancellation; CANCELLED: 1 once the
	 * script is cancelled; TIDYING: 1 from a script's end until the worker has made the contexts of
	 * the next ones (a script sent meanwhile waits for that).
	 */
	readonly signals: SharedArrayBuffer;
	/** Where the pool's messages (ToWorker) come; the worker takes them off it itself. */
	readonly port: MessagePort;
	readonly limits: ScriptLimits;
}

export type ToWorker =
	/** `prelude`: absent when it is the one of the worker's last script. */
	| { readonly type: 'run'; readonly code: string; readonly prelude?: string }
	/** The proxy has passed on the last script's answer: time to free its context and make the next scripts'. */
	| { readonly type: 'tidy' }
	| ({ readonly type: 'answer' } & HostAnswer);

export type FromWorker =
	| { readonly type: 'ready' }
	| { readonly type: 'host'; readonly call: number; readonly name: string; readonly args: string }
	/** `retire`: the engine failed or its memory filled, and the worker is not to run another script. */
	| { readonly type: 'done'; readonly outcome: ScriptOutcome; readonly retire: boolean }
	/** The engine failed freeing the last script, after its answer: the worker is not to run another. */
	| { readonly type: 'broken' };
