/**
 * A sandbox worker: a thread of its own that runs one script at a time in QuickJS (engine.ts),
 * so that a busy script never holds up the proxy's event loop. The pool (pool.ts) sends a
 * script (its prelude only when it changed) and answers its host calls, JSON text both ways so
 * that nothing is cloned twice; the script's cancellation is a flag in shared memory, which the
 * engine reads even while the script runs.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isBroken, runScript, warmUp } from './engine.js';
import { ScriptLimitError, type ScriptLimits, type ScriptOutcome } from './limits.js';

/** What the pool gives a worker at its start. */
export interface SandboxData {
	readonly cancel: SharedArrayBuffer;
	readonly limits: ScriptLimits;
}

export type ToWorker =
	/** `prelude`: absent when it is the one of the worker's last script. */
	| { readonly type: 'run'; readonly code: string; readonly prelude?: string }
	| { readonly type: 'answer'; readonly call: number; readonly json?: string; readonly error?: string; readonly limit?: string };

export type FromWorker =
	| { readonly type: 'ready' }
	| { readonly type: 'host'; readonly call: number; readonly name: string; readonly args: string }
	/** `retire`: the engine failed or its memory filled, and the worker is not to run another script. */
	| { readonly type: 'done'; readonly outcome: ScriptOutcome; readonly retire: boolean }
	/** The engine failed freeing the last script, after its answer: the worker is not to run another. */
	| { readonly type: 'broken' };

const port = parentPort!;
const { cancel, limits } = workerData as SandboxData;
const cancelled = new Int32Array(cancel);
const waiting = new Map<number, { resolve: (json: string) => void; reject: (error: Error) => void }>();
let nextCall = 1;
let prelude = '';

port.on('message', (message: ToWorker) => {
	if (message.type === 'answer') {
		const call = waiting.get(message.call);
		waiting.delete(message.call);
		if (message.limit !== undefined) call?.reject(new ScriptLimitError(message.limit));
		else if (message.error !== undefined) call?.reject(new Error(message.error));
		else call?.resolve(message.json ?? 'null');
		return;
	}
	if (message.prelude !== undefined) prelude = message.prelude;
	void runScript({
		code: message.code,
		prelude,
		limits,
		cancelled: () => Atomics.load(cancelled, 0) !== 0,
		host: (name, args) =>
			new Promise((resolve, reject) => {
				const call = nextCall++;
				waiting.set(call, { resolve, reject });
				port.postMessage({ type: 'host', call, name, args } satisfies FromWorker);
			}),
	}).then((outcome) => {
		waiting.clear();
		port.postMessage({ type: 'done', outcome, retire: isBroken() } satisfies FromWorker);
		// After the engine's own clean-up, which it makes once the answer is on its way.
		setImmediate(() => isBroken() && port.postMessage({ type: 'broken' } satisfies FromWorker));
	});
});

void warmUp(limits.memoryBytes).then(() => port.postMessage({ type: 'ready' } satisfies FromWorker));
