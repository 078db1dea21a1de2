/**
 * Abort listeners without an EventTarget listener per call. Every call of a session waits on
 * the session's signal, and an AbortController or a listener costs microseconds on the hot
 * path; here a signal gets one real listener, whatever the number of callbacks hung on it.
 */
const callbacks = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

/** Runs `callback` when `signal` aborts (at once if it has); returns what unhooks it. */
export function onAbort(signal: AbortSignal, callback: (reason: unknown) => void): () => void {
	if (signal.aborted) {
		callback(signal.reason);
		return () => undefined;
	}
	let hooked = callbacks.get(signal);
	if (!hooked) {
		const set = new Set<(reason: unknown) => void>();
		signal.addEventListener('abort', () => {
			for (const hook of set) hook(signal.reason);
			set.clear();
		}, { once: true });
		callbacks.set(signal, set);
		hooked = set;
	}
	const registered = hooked;
	registered.add(callback);
	return () => registered.delete(callback);
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
