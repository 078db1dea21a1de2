/**
 * A cross-process mutex for work that may hold it for minutes (an install), by name.
 *
 * The lock is a folder created with `mkdir` (atomic) holding an `owner` file: pid, host and a
 * token, refreshed while held. A waiting process takes the lock over as soon as its holder is
 * gone — a dead pid on this host, or an owner file not refreshed for 30 s — so a crash (even
 * kill -9) never blocks the next install and recovery can run at once. Waiting is cancellable.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';

const HEARTBEAT_MS = 5_000;
const STALE_MS = 30_000;
/** A lock folder without an owner file is being created; older than this, its creator died. */
const CREATING_MS = 5_000;
const POLL_MS = 25;

interface Owner {
	readonly pid: number;
	readonly host: string;
	readonly token: string;
}

export class NamedMutex {
	constructor(private readonly folder: string) {}

	private pathOf(name: string): string {
		return join(this.folder, `${encodeURIComponent(name)}.lock`);
	}

	/** Runs `work` holding the lock `name`; waits for it as long as `signal` allows. */
	async run<T>(name: string, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
		const path = this.pathOf(name);
		let owner: Owner | undefined;
		while (!(owner = await this.tryAcquire(path))) {
			if (signal.aborted) throw HangarError.cancelled(`waiting for ${name}`);
			await new Promise((resolve) => setTimeout(resolve, POLL_MS));
		}
		const heartbeat = setInterval(() => void utimes(join(path, 'owner'), new Date(), new Date()).catch(() => undefined), HEARTBEAT_MS);
		heartbeat.unref();
		try {
			return await work();
		} finally {
			clearInterval(heartbeat);
			await this.release(path, owner);
		}
	}

	/** Runs `work` only if the lock is free right now; undefined when someone holds it. */
	async tryRun<T>(name: string, work: () => Promise<T>): Promise<{ value: T } | undefined> {
		const path = this.pathOf(name);
		const owner = await this.tryAcquire(path);
		if (!owner) return undefined;
		try {
			return { value: await work() };
		} finally {
			await this.release(path, owner);
		}
	}

	private async tryAcquire(path: string): Promise<Owner | undefined> {
		await mkdir(this.folder, { recursive: true, mode: 0o700 });
		const owner: Owner = { pid: process.pid, host: hostname(), token: randomBytes(8).toString('hex') };
		for (let attempt = 0; ; attempt++) {
			try {
				await mkdir(path);
				break;
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
				// An abandoned lock is moved aside, then taken at once.
				if (attempt > 0 || !(await this.takeOverIfAbandoned(path))) return undefined;
			}
		}
		await writeFile(join(path, 'owner'), JSON.stringify(owner));
		return owner;
	}

	/** Moves an abandoned lock aside (only the one that was seen abandoned); true when it did. */
	private async takeOverIfAbandoned(path: string): Promise<boolean> {
		const seen = await readOwner(path);
		if (!(await isAbandoned(path, seen))) return false;
		const aside = `${path}.abandoned-${randomBytes(6).toString('hex')}`;
		try {
			await rename(path, aside);
		} catch {
			return false; // someone else took it over first
		}
		const moved = await readOwner(aside);
		if (moved?.token !== seen?.token) {
			// A fresh lock was created between our look and our move: put it back.
			await rename(aside, path).catch(() => undefined);
			return false;
		}
		await rm(aside, { recursive: true, force: true });
		return true;
	}

	private async release(path: string, owner: Owner): Promise<void> {
		const current = await readOwner(path);
		if (current?.token === owner.token) await rm(path, { recursive: true, force: true });
	}
}

async function readOwner(path: string): Promise<Owner | undefined> {
	try {
		return JSON.parse(await readFile(join(path, 'owner'), 'utf8')) as Owner;
	} catch {
		return undefined;
	}
}

async function isAbandoned(path: string, owner: Owner | undefined): Promise<boolean> {
	if (!owner) {
		const created = await stat(path).then((stats) => stats.mtimeMs, () => undefined);
		return created !== undefined && Date.now() - created > CREATING_MS;
	}
	if (owner.host === hostname() && !isAlive(owner.pid)) return true;
	const beat = await stat(join(path, 'owner')).then((stats) => stats.mtimeMs, () => 0);
	return Date.now() - beat > STALE_MS;
}

/** True when a process with this pid exists on this host. */
export function isAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
}
