/**
 * Waiting for something for a bounded time: what a shutdown gives its last work, a probe its
 * answer, a list its slowest member.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What `promise` gives if it settles within `ms` (and before `signal` aborts), else `late`. A
 * rejection within the time is the caller's. The timer ends with the wait and never keeps the
 * process alive by itself: what is waited for is what holds it.
 */
export async function within<T, L>(promise: Promise<T>, ms: number, late: L, signal?: AbortSignal): Promise<T | L> {
	const done = new AbortController();
	const timer = sleep(ms, late, { ref: false, signal: signal ? AbortSignal.any([signal, done.signal]) : done.signal }).catch(() => late);
	try {
		return await Promise.race([promise, timer]);
	} finally {
		done.abort();
	}
}
