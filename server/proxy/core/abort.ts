/**
 * Abort listeners without an EventTarget listener per call. Every call of a session waits on
 * the session's signal, and an AbortController or a listener costs microseconds on the hot
 * path; here a signal gets one real listener, whatever the number of callbacks hung on it.
 */
import { CallTable } from './callTable.js';

/** The callbacks hung on one signal, by number (not a Set: see callTable.ts). */
interface Hooks {
	readonly callbacks: CallTable<(reason: unknown) => void>;
	next: number;
}

const hooksOf = new WeakMap<AbortSignal, Hooks>();

/** Runs `callback` when `signal` aborts (at once if it has); returns what unhooks it. */
export function onAbort(signal: AbortSignal, callback: (reason: unknown) => void): () => void {
	if (signal.aborted) {
		callback(signal.reason);
		return () => undefined;
	}
	let hooks = hooksOf.get(signal);
	if (!hooks) {
		const created: Hooks = { callbacks: new CallTable(), next: 0 };
		signal.addEventListener('abort', () => {
			for (const hook of created.callbacks.values()) hook(signal.reason);
			created.callbacks.clear();
		}, { once: true });
		hooksOf.set(signal, created);
		hooks = created;
	}
	const { callbacks } = hooks;
	const key = hooks.next++;
	callbacks.set(key, callback);
	return () => callbacks.delete(key);
}

/** A controller that also aborts when `signal` does; `unlink` once it is done with. */
export function linkedController(signal: AbortSignal): { readonly controller: AbortController; readonly unlink: () => void } {
	const controller = new AbortController();
	const unlink = onAbort(signal, (reason) => controller.abort(reason));
	return { controller, unlink };
}

/** `promise`, unless `signal` aborts first: then at once what `answer` makes of the reason. */
export function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal, answer: (reason: unknown) => T): Promise<T> {
	return new Promise<T>((resolve, reject) => {
		const unhook = onAbort(signal, (reason) => resolve(answer(reason)));
		promise.then(
			(value) => {
				unhook();
				resolve(value);
			},
			(error: unknown) => {
				unhook();
				reject(error);
			},
		);
	});
}
