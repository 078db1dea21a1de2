/**
 * Cross-process locks, so several daemons, the CLI and the REST server can share one state
 * folder. Built on proper-lockfile: an atomic `mkdir` of `<target>.lock`, refreshed while
 * held and taken over when its holder died (stale after 10 s).
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import lockfile from 'proper-lockfile';
import { HangarError } from '../../protocol/errors.js';

const RETRIES = { retries: 200, factor: 1.3, minTimeout: 5, maxTimeout: 100, randomize: true };

/** Runs `work` while holding the lock named by `target` (which need not exist). */
export async function withLock<T>(target: string, work: () => Promise<T>): Promise<T> {
	await mkdir(dirname(target), { recursive: true, mode: 0o700 });
	let release: () => Promise<void>;
	try {
		release = await lockfile.lock(target, { realpath: false, stale: 10_000, update: 2_000, retries: RETRIES });
	} catch (error) {
		throw new HangarError(503, `state is locked by another Hangar process (${target}.lock); try again`, 'locked', {
			cause: error,
		});
	}
	try {
		return await work();
	} finally {
		await release().catch(() => undefined);
	}
}
