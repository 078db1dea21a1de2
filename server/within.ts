/**
 * Waiting for something for a bounded time: what a shutdown gives its last work, a probe its
 * answer, a list its slowest member.
 */

/**
 * What `promise` gives if it settles within `ms` (and before `signal` aborts), else `late`. A
 * rejection within the time is the caller's. The timer ends with the wait and never keeps the
 * process alive by itself: what is waited for is what holds it. A plain timer and listener: an
 * aggregate waits so for each member's list on every list and script, where an abortable sleep
 * cost an AbortSignal.any and an AbortError each time.
 */
export function within<T, L>(promise: Promise<T>, ms: number, late: L, signal?: AbortSignal): Promise<T | L> {
	if (signal?.aborted) return Promise.resolve(late);
	return new Promise<T | L>((resolve, reject) => {
		const end = () => {
			clearTimeout(timer);
			signal?.removeEventListener('abort', onAbort);
		};
		const onAbort = () => {
			end();
			resolve(late);
		};
		const timer = setTimeout(onAbort, ms);
		timer.unref();
		signal?.addEventListener('abort', onAbort);
		promise.then(
			(value) => {
				end();
				resolve(value);
			},
			(error: unknown) => {
				end();
				reject(error);
			},
		);
	});
}
