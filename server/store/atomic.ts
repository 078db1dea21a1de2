/**
 * Atomic file replacement: write a temporary file in the same folder, fsync it, rename it
 * over the target and fsync the folder. A reader sees the old file or the new one, never a
 * torn write, and a crash leaves at most a stray temporary file.
 *
 * On Windows a rename over a file that another program has open (an editor, a virus scanner,
 * the search indexer, a client reading its configuration) fails for a moment with EPERM,
 * EACCES or EBUSY; the rename is tried again for a few seconds before the write fails.
 */
import { readFileSync } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
	/** Mode of a new file; an existing file keeps its own. Default 0600. */
	readonly mode?: number;
	/** Mode of folders created on the way. Default 0700. */
	readonly dirMode?: number;
	/**
	 * fsync the file and its folder (default). Off for files that guard against a process
	 * dying but not against power loss (skill journals), where the sync costs more than it saves.
	 */
	readonly durable?: boolean;
}

export async function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
	const file = await openFileAtomic(path, options);
	try {
		await file.write(typeof data === 'string' ? Buffer.from(data) : data);
	} catch (error) {
		await file.abort();
		throw error;
	}
	await file.commit();
}

/** A file written in pieces that appears at its path whole, on `commit`, or not at all. */
export interface AtomicFile {
	write(chunk: Uint8Array): Promise<void>;
	/** Puts the file in place; on failure nothing is left behind. */
	commit(): Promise<void>;
	/** Drops what was written. */
	abort(): Promise<void>;
}

/**
 * `bytes` random bytes as hex, for names no other process picks. From the global Web Crypto
 * object, which Node loads on first use: a command that only reads never loads `node:crypto`.
 */
export function randomHex(bytes: number): string {
	return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');
}

export async function openFileAtomic(path: string, options: AtomicWriteOptions = {}): Promise<AtomicFile> {
	const folder = dirname(path);
	const durable = options.durable ?? true;
	await mkdir(folder, { recursive: true, mode: options.dirMode ?? 0o700 });
	const mode = (await existingMode(path)) ?? options.mode ?? 0o600;
	const temporary = join(folder, `.${basename(path)}.${process.pid}.${randomHex(4)}.tmp`);
	const handle = await open(temporary, 'wx', mode);
	let isOpen = true;
	const close = async () => {
		if (isOpen) {
			isOpen = false;
			await handle.close();
		}
	};
	const abort = async () => {
		await close().catch(() => undefined);
		await rm(temporary, { force: true });
	};
	return {
		async write(chunk) {
			await handle.writeFile(chunk);
		},
		async commit() {
			try {
				await handle.chmod(mode);
				if (durable) await handle.sync();
				await close();
				await renameRetrying(temporary, path);
			} catch (error) {
				await abort();
				throw error;
			}
			if (durable) await syncFolder(folder);
		},
		abort,
	};
}

/** What a sharing violation looks like on Windows: another process has the target open. */
const SHARING_VIOLATIONS: Readonly<Partial<Record<NodeJS.Platform, readonly string[]>>> = { win32: ['EPERM', 'EACCES', 'EBUSY'] };
const RENAME_ATTEMPTS = 12;
const MAX_RENAME_DELAY_MS = 500;

/**
 * `rename`, tried again with a growing pause (about 3 s in all) while the platform reports
 * a sharing violation; other failures, and the last one, are thrown with what to do next.
 */
export async function renameRetrying(from: string, to: string, platform: NodeJS.Platform = process.platform): Promise<void> {
	const retried = SHARING_VIOLATIONS[platform] ?? [];
	for (let attempt = 1, delay = 10; ; attempt++, delay = Math.min(delay * 2, MAX_RENAME_DELAY_MS)) {
		try {
			return await rename(from, to);
		} catch (error) {
			const code = (error as NodeJS.ErrnoException).code ?? '';
			if (!retried.includes(code)) throw error;
			if (attempt === RENAME_ATTEMPTS) {
				throw Object.assign(new Error(`${to} stayed in use by another program (${code}); close what holds it open and try again`), { code });
			}
			await new Promise((resolve) => setTimeout(resolve, delay));
		}
	}
}

async function existingMode(path: string): Promise<number | undefined> {
	try {
		return (await stat(path)).mode & 0o7777;
	} catch {
		return undefined;
	}
}

async function syncFolder(folder: string): Promise<void> {
	// Makes the rename durable. Not every platform can open a folder for fsync.
	try {
		const handle = await open(folder, 'r');
		try {
			await handle.sync();
		} finally {
			await handle.close();
		}
	} catch {
		// Best effort: Windows cannot fsync folders.
	}
}

/**
 * A file's text, or undefined when there is no such file; any other failure is thrown.
 *
 * Read synchronously: Hangar's state files are a few kilobytes on a local disk, read in tens
 * of microseconds, where an asynchronous read is four trips through libuv's thread pool (and a
 * command's first one starts the pool): a command reading ten of them starts 5 ms sooner.
 */
export async function readTextIfExists(path: string): Promise<string | undefined> {
	try {
		return readFileSync(path, 'utf8');
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
		throw error;
	}
}
