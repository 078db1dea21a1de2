/**
 * Cross-process locks, so several daemons, the CLI and the REST server can share one state
 * folder, and an install may hold a skill's lock for minutes.
 *
 * The lock of `<target>` is the folder `<target>.lock` holding one owner file, named after a
 * token no other lock has (`owner-<token>`: pid, host, process start time). The folder is
 * made complete in a scratch folder and renamed into place, so it never exists without its
 * owner. Every removal is conditional on what it removes: the holder, or a process taking
 * over an abandoned lock, unlinks that one owner file, then removes the folder only if it is
 * empty. A lock released and taken again in the meantime is never removed by mistake, as it
 * would be by moving the folder aside (a rename moves whichever lock is in place).
 *
 * A lock is taken over only when its holder is gone: on this host, a dead pid (or a pid now
 * used by another process); on another host sharing the folder, an owner file not refreshed
 * for 30 s. A holder that is alive but paused (SIGSTOP, a debugger, a suspended laptop) keeps
 * its lock however long the pause lasts.
 */
import { readFileSync, rmSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rename, rm, rmdir, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import { randomHex } from './atomic.js';

/** How often a holder refreshes its owner file (read only across hosts). */
const HEARTBEAT_MS = 5_000;
/** An owner file of another host not refreshed for this long belongs to a holder that is gone. */
const STALE_MS = 30_000;
/** How long `withLock` waits without a signal before answering 503. */
const WAIT_MS = 30_000;
const MAX_POLL_MS = 100;
/** Owner files start so; an older Hangar named its owner file just this. */
const OWNER = 'owner';

interface Owner {
	readonly pid: number;
	readonly host: string;
	/** When the process started (Linux `/proc/<pid>/stat`), to tell a reused pid from the holder. */
	readonly started?: string;
}

export interface LockOptions {
	/** Wait as long as this signal allows (cancelled with 499) instead of 503 after 30 s. */
	readonly signal?: AbortSignal;
}

/**
 * Scratch folders being made into a lock. A process that exits meanwhile (a proxy told to stop
 * ends with process.exit) removes them on its way out; one it could not (killed, or the exit
 * overtook the file system's work) names its pid, and the next taker of that lock removes it.
 */
const scratches = new Set<string>();
let exitHook = false;

function removeScratchesAtExit(): void {
	for (const scratch of scratches) rmSync(scratch, { recursive: true, force: true });
}

/** Runs `work` while holding the lock named by `target` (which need not exist). */
export async function withLock<T>(target: string, work: () => Promise<T>, options: LockOptions = {}): Promise<T> {
	const path = lockPathOf(target);
	const deadline = options.signal ? Number.POSITIVE_INFINITY : Date.now() + WAIT_MS;
	let ownerFile: string | undefined;
	for (let delay = 5; !(ownerFile = await acquire(path)); delay = Math.min(delay * 2, MAX_POLL_MS)) {
		if (options.signal?.aborted) throw HangarError.cancelled(`waiting for the lock of ${basename(target)}`);
		if (Date.now() > deadline) throw new HangarError(503, `state is locked by another Hangar process (${path}); try again`, 'locked');
		await new Promise((resolve) => setTimeout(resolve, delay));
	}
	return holding(ownerFile, work);
}

/** Runs `work` only if the lock is free right now; undefined when someone holds it. */
export async function tryLock<T>(target: string, work: () => Promise<T>): Promise<{ value: T } | undefined> {
	const ownerFile = await acquire(lockPathOf(target));
	return ownerFile ? { value: await holding(ownerFile, work) } : undefined;
}

function lockPathOf(target: string): string {
	return `${target}.lock`;
}

async function holding<T>(ownerFile: string, work: () => Promise<T>): Promise<T> {
	const heartbeat = setInterval(() => void utimes(ownerFile, new Date(), new Date()).catch(() => undefined), HEARTBEAT_MS);
	heartbeat.unref();
	try {
		return await work();
	} finally {
		clearInterval(heartbeat);
		await release(ownerFile);
	}
}

/** Takes the lock if it is free (or abandoned); the path of its owner file, or undefined. */
async function acquire(path: string): Promise<string | undefined> {
	if ((await exists(path)) && !(await clearIfAbandoned(path))) return undefined;
	await mkdir(dirname(path), { recursive: true, mode: 0o700 });
	await removeAbandonedScratches(path);
	const token = randomHex(8);
	const name = `${OWNER}-${token}`;
	const scratch = `${path}.${process.pid}-${token}.tmp`;
	if (!exitHook) {
		exitHook = true;
		process.once('exit', removeScratchesAtExit);
	}
	scratches.add(scratch); // before it exists: an exit while it is being made removes it too
	await mkdir(scratch, { mode: 0o700 }).catch((error: unknown) => {
		scratches.delete(scratch);
		throw error;
	});
	try {
		const owner: Owner = { pid: process.pid, host: hostname(), ...(START !== undefined && { started: START }) };
		await writeFile(join(scratch, name), JSON.stringify(owner));
		// Replaces nothing but an empty folder: one its holder is removing, or an older Hangar's.
		await rename(scratch, path);
		return join(path, name);
	} catch (error) {
		// ENOENT: another host's taker removed our scratch as abandoned (its pid is not ours): try again.
		if (['EEXIST', 'ENOTEMPTY', 'EPERM', 'ENOENT'].includes((error as NodeJS.ErrnoException).code ?? '')) return undefined;
		throw error;
	} finally {
		await rm(scratch, { recursive: true, force: true });
		scratches.delete(scratch);
	}
}

/** Removes the scratch folders of `path`'s lock whose process is gone (`<lock>.<pid>-<token>.tmp`). */
async function removeAbandonedScratches(path: string): Promise<void> {
	const prefix = `${basename(path)}.`;
	const entries = await readdir(dirname(path)).catch(() => [] as string[]);
	for (const entry of entries) {
		const pid = entry.startsWith(prefix) ? /^(\d+)-[0-9a-f]+\.tmp$/.exec(entry.slice(prefix.length))?.[1] : undefined;
		if (pid !== undefined && !isAlive(Number(pid))) await rm(join(dirname(path), entry), { recursive: true, force: true });
	}
}

/** Removes the lock if its holder is gone; true when the lock may be free now. */
async function clearIfAbandoned(path: string): Promise<boolean> {
	const found = await ownerOf(path);
	if (found === 'gone') return true;
	if (found === 'none') {
		// Emptied by a holder releasing it, or left empty by an older Hangar.
		await rmdir(path).catch(() => undefined);
		return true;
	}
	if (!(await isAbandoned(found.file, found.owner))) return false;
	// That owner's file, then the folder only if nothing took its place.
	await unlink(found.file).then(
		() => rmdir(path).catch(() => undefined),
		() => undefined,
	);
	return true;
}

async function release(ownerFile: string): Promise<void> {
	try {
		await unlink(ownerFile);
	} catch {
		return; // taken over (from another host, after a long pause): what is there now is not ours
	}
	await rmdir(dirname(ownerFile)).catch(() => undefined); // a newcomer may have moved in already
}

type Found = 'gone' | 'none' | { readonly file: string; readonly owner: Owner | undefined };

/** Who holds the lock at `path`: 'gone' when there is none, 'none' for a folder without an owner. */
async function ownerOf(path: string): Promise<Found> {
	let entries: string[];
	try {
		entries = await readdir(path);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
		throw error;
	}
	const name = entries.find((entry) => entry.startsWith(OWNER));
	if (name === undefined) return 'none';
	const file = join(path, name);
	let text: string;
	try {
		text = await readFile(file, 'utf8');
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone'; // released since
		throw error;
	}
	try {
		return { file, owner: JSON.parse(text) as Owner };
	} catch {
		return { file, owner: undefined }; // no holder leaves this: its file is whole before the folder is in place
	}
}

async function isAbandoned(ownerFile: string, owner: Owner | undefined): Promise<boolean> {
	if (!owner) return true;
	if (owner.host === hostname()) return !isAlive(owner.pid) || (owner.started !== undefined && processStart(owner.pid) !== owner.started);
	const beat = await lstat(ownerFile).then((stats) => stats.mtimeMs, () => 0);
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
	// Only Linux's: under Wine a Windows process would read the Linux process of the same number.
	if (process.platform !== 'linux') return undefined;
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
