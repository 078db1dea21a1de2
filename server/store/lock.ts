/**
 * Cross-process locks, so several daemons, the CLI and the REST server can share one state
 * folder, and an install may hold a skill's lock for minutes.
 *
 * The lock of `<target>` is the folder `<target>.lock` holding an `owner` file (pid, host,
 * process start time, a token). It is made complete in a scratch folder and renamed into place,
 * so it never exists without its owner. A lock is taken over only when its holder is gone:
 * on this host, a dead pid (or a pid now used by another process); on another host sharing
 * the folder, an owner file not refreshed for 30 s. A holder that is alive but paused (SIGSTOP,
 * a debugger, a suspended laptop) keeps its lock however long the pause lasts.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { lstat, mkdir, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';

/** How often a holder refreshes its owner file (read only across hosts). */
const HEARTBEAT_MS = 5_000;
/** An owner file of another host not refreshed for this long belongs to a holder that is gone. */
const STALE_MS = 30_000;
/** How long `withLock` waits without a signal before answering 503. */
const WAIT_MS = 30_000;
const MAX_POLL_MS = 100;

interface Owner {
	readonly pid: number;
	readonly host: string;
	/** When the process started (Linux `/proc/<pid>/stat`), to tell a reused pid from the holder. */
	readonly started?: string;
	readonly token: string;
}

export interface LockOptions {
	/** Wait as long as this signal allows (cancelled with 499) instead of 503 after 30 s. */
	readonly signal?: AbortSignal;
}

/** Runs `work` while holding the lock named by `target` (which need not exist). */
export async function withLock<T>(target: string, work: () => Promise<T>, options: LockOptions = {}): Promise<T> {
	const path = lockPathOf(target);
	const deadline = options.signal ? Number.POSITIVE_INFINITY : Date.now() + WAIT_MS;
	let owner: Owner | undefined;
	for (let delay = 5; !(owner = await acquire(path)); delay = Math.min(delay * 2, MAX_POLL_MS)) {
		if (options.signal?.aborted) throw HangarError.cancelled(`waiting for the lock of ${basename(target)}`);
		if (Date.now() > deadline) throw new HangarError(503, `state is locked by another Hangar process (${path}); try again`, 'locked');
		await new Promise((resolve) => setTimeout(resolve, delay));
	}
	return holding(path, owner, work);
}

/** Runs `work` only if the lock is free right now; undefined when someone holds it. */
export async function tryLock<T>(target: string, work: () => Promise<T>): Promise<{ value: T } | undefined> {
	const path = lockPathOf(target);
	const owner = await acquire(path);
	return owner ? { value: await holding(path, owner, work) } : undefined;
}

function lockPathOf(target: string): string {
	return `${target}.lock`;
}

async function holding<T>(path: string, owner: Owner, work: () => Promise<T>): Promise<T> {
	const heartbeat = setInterval(() => void utimes(join(path, 'owner'), new Date(), new Date()).catch(() => undefined), HEARTBEAT_MS);
	heartbeat.unref();
	try {
		return await work();
	} finally {
		clearInterval(heartbeat);
		await release(path, owner);
	}
}

async function acquire(path: string): Promise<Owner | undefined> {
	if ((await exists(path)) && !(await takeOverIfAbandoned(path))) return undefined;
	await mkdir(dirname(path), { recursive: true, mode: 0o700 });
	const owner: Owner = { pid: process.pid, host: hostname(), ...(START !== undefined && { started: START }), token: randomBytes(8).toString('hex') };
	const scratch = `${path}.${process.pid}-${owner.token}.tmp`;
	await mkdir(scratch, { mode: 0o700 });
	try {
		await writeFile(join(scratch, 'owner'), JSON.stringify(owner));
		await rename(scratch, path);
		return owner;
	} catch (error) {
		// Someone else's lock is in place: a rename never replaces a folder that holds a file.
		if (['EEXIST', 'ENOTEMPTY', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '')) return undefined;
		throw error;
	} finally {
		await rm(scratch, { recursive: true, force: true });
	}
}

/** Moves an abandoned lock aside (only the one that was seen abandoned); true when it is gone. */
async function takeOverIfAbandoned(path: string): Promise<boolean> {
	const seen = await readOwner(path);
	if (!(await isAbandoned(path, seen))) return false;
	const aside = `${path}.abandoned-${randomBytes(6).toString('hex')}`;
	try {
		await rename(path, aside);
	} catch {
		return !(await exists(path)); // someone else moved it first
	}
	const moved = await readOwner(aside);
	if (moved?.token !== seen?.token) {
		// A fresh lock was put in place between our look and our move: put it back.
		await rename(aside, path).catch(() => undefined);
		return false;
	}
	await rm(aside, { recursive: true, force: true });
	return true;
}

async function release(path: string, owner: Owner): Promise<void> {
	if ((await readOwner(path))?.token !== owner.token) return; // taken over: it is not ours to remove
	// Renamed away first, so the lock is gone in one step and a newcomer's lock is never removed.
	const gone = `${path}.released-${owner.token}`;
	await rename(path, gone).catch(() => undefined);
	await rm(gone, { recursive: true, force: true });
}

async function readOwner(path: string): Promise<Owner | undefined> {
	try {
		return JSON.parse(await readFile(join(path, 'owner'), 'utf8')) as Owner;
	} catch {
		return undefined;
	}
}

async function isAbandoned(path: string, owner: Owner | undefined): Promise<boolean> {
	if (!owner) return true; // not a lock of this design (an empty folder left by an older Hangar)
	if (owner.host === hostname()) return !isAlive(owner.pid) || (owner.started !== undefined && processStart(owner.pid) !== owner.started);
	const beat = await lstat(join(path, 'owner')).then((stats) => stats.mtimeMs, () => 0);
	return Date.now() - beat > STALE_MS;
}

async function exists(path: string): Promise<boolean> {
	return lstat(path).then(
		() => true,
		() => false,
	);
}

/**
 * True when a process with this pid runs on this host. One that exited but was never reaped (a
 * zombie: its parent ignores it, or it was left to an init that does not reap, as in some
 * containers) keeps its pid and is not alive.
 */
export function isAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
	const state = statOf(pid)?.[0];
	return state !== 'Z' && state !== 'X';
}

/** The fields of `/proc/<pid>/stat` after the command name (which may hold spaces), from field 3 (Linux). */
function statOf(pid: number | 'self'): string[] | undefined {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
		return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
	} catch {
		return undefined;
	}
}

/** A process's start time in clock ticks since boot (field 22, Linux); undefined elsewhere. */
function processStart(pid: number | 'self'): string | undefined {
	return statOf(pid)?.[19];
}

const START = processStart('self');
