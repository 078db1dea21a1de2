/**
 * A sandbox worker: a thread of its own that runs one script at a time in QuickJS (engine.ts),
 * so that a busy script never holds up the proxy's event loop. The pool (pool.ts) sends a
 * script (its prelude only when it changed) and answers its host calls (protocol.ts); once the
 * proxy has passed the script's answer on, it says so, and the worker frees the script's context
 * and makes the next one (about half a millisecond of the engine's time, which would otherwise
 * compete for the cores with the proxy's answer).
 *
 * The thread never goes back to its event loop while it waits for the pool: it sleeps on a
 * doorbell in shared memory (Atomics.wait) and takes the pool's messages off its port itself
 * (receiveMessageOnPort). A message wakes it without a turn of its loop, the wait's timeout is
 * the script's time limit (no timer), and a cancellation rings the same bell, so a script
 * waiting on the host ends at once. While a script runs, the engine reads the cancellation flag
 * in its interrupt handler.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { isBroken, recycle, runScript, warmUp, type HostAnswer } from './engine.js';
import { CANCELLED, DOORBELL, TIDYING, type FromWorker, type SandboxData, type ToWorker } from './protocol.js';

/**
 * The thread's clock, coarse to the second: the engine's `Date` (its `Date.now()`, `new Date()`)
 * reads it through the WebAssembly module's one clock import (Emscripten's `emscripten_date_now`,
 * which calls `Date.now()`), so no script can reach a finer one; the engine's own deadlines read
 * `performance.now()`. Set before the engine loads, on this thread only.
 */
const preciseNow = Date.now;
Date.now = () => Math.floor(preciseNow() / 1000) * 1000;

const parent = parentPort!;
const { signals, port, limits } = workerData as SandboxData;
const cells = new Int32Array(signals);
let nextCall = 1;
let prelude = '';
/** The doorbell's count when the worker last looked: a ring since is something to look at. */
let heard = 0;

/**
 * The pool's next message, waiting at most `timeoutMs` (no limit: Infinity) for it; undefined
 * when none came in that time or the bell rang without one (a cancellation): the caller then
 * looks at the cancellation flag and the clock.
 */
function receive(timeoutMs: number): ToWorker | undefined {
	const waiting = receiveMessageOnPort(port);
	if (waiting) return waiting.message as ToWorker;
	// The pool posts before it rings: a message posted after the look above has rung past `heard`.
	if (timeoutMs > 0) Atomics.wait(cells, DOORBELL, heard, timeoutMs);
	heard = Atomics.load(cells, DOORBELL);
	return receiveMessageOnPort(port)?.message as ToWorker | undefined;
}

/** The next answer to one of the script's host calls (an answer to an earlier script's is dropped). */
function nextAnswer(timeoutMs: number): HostAnswer | undefined {
	const message = receive(timeoutMs);
	return message?.type === 'answer' ? message : undefined;
}

async function serve(): Promise<void> {
	await warmUp(limits);
	parent.postMessage({ type: 'ready' } satisfies FromWorker);
	for (;;) {
		const message = receive(Infinity);
		if (message?.type === 'tidy') {
			recycle();
			Atomics.store(cells, TIDYING, 0);
			if (isBroken()) parent.postMessage({ type: 'broken' } satisfies FromWorker);
			continue;
		}
		if (message?.type !== 'run') continue;
		if (message.prelude !== undefined) prelude = message.prelude;
		const outcome = await runScript({
			code: message.code,
			prelude,
			cancelled: () => Atomics.load(cells, CANCELLED) !== 0,
			send: (name, args) => {
				const call = nextCall++;
				parent.postMessage({ type: 'host', call, name, args } satisfies FromWorker);
				return call;
			},
			nextAnswer,
		});
		Atomics.store(cells, TIDYING, 1);
		parent.postMessage({ type: 'done', outcome, retire: isBroken() } satisfies FromWorker);
	}
}

void serve();
