/**
 * A sandbox worker: a thread of its own that runs one script at a time in QuickJS (engine.ts),
 * so that a busy script never holds up the proxy's event loop. The pool (pool.ts) sends a
 * script and answers its host calls; the script's cancellation is a flag in shared memory,
 * which the engine reads even while the script runs.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isBroken, runScript, warmUp } from './engine.js';
import { ScriptLimitError, type ScriptLimits, type ScriptOutcome } from './limits.js';

export type ToWorker =
	| { readonly type: 'run'; readonly code: string; readonly prelude: string; readonly limits: ScriptLimits }
	| { readonly type: 'answer'; readonly call: number; readonly value?: unknown; readonly error?: string; readonly limit?: string };

export type FromWorker =
	| { readonly type: 'ready' }
	| { readonly type: 'host'; readonly call: number; readonly name: string; readonly args: unknown }
	/** `retire`: the engine failed or its memory filled, and the worker is not to run another script. */
	| { readonly type: 'done'; readonly outcome: ScriptOutcome; readonly retire: boolean };

const port = parentPort!;
const cancelled = new Int32Array(workerData.cancel as SharedArrayBuffer);
const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
let nextCall = 1;

port.on('message', (message: ToWorker) => {
	if (message.type === 'answer') {
		const call = waiting.get(message.call);
		waiting.delete(message.call);
		if (message.limit !== undefined) call?.reject(new ScriptLimitError(message.limit));
		else if (message.error !== undefined) call?.reject(new Error(message.error));
		else call?.resolve(message.value);
		return;
	}
	void runScript({
		code: message.code,
		prelude: message.prelude,
		limits: message.limits,
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
	});
});

void warmUp(workerData.memoryBytes as number).then(() => port.postMessage({ type: 'ready' } satisfies FromWorker));
