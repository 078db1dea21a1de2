/**
 * Atomic file replacement: write a temporary file in the same folder, fsync it, rename it
 * over the target and fsync the folder. A reader sees the old file or the new one, never a
 * torn write, and a crash leaves at most a stray temporary file.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
	/** Mode of a new file; an existing file keeps its own. Default 0600. */
	readonly mode?: number;
	/** Mode of folders created on the way. Default 0700. */
	readonly dirMode?: number;
}

export async function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
	const folder = dirname(path);
	await mkdir(folder, { recursive: true, mode: options.dirMode ?? 0o700 });
	const mode = await existingMode(path) ?? options.mode ?? 0o600;
	const temporary = join(folder, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
	const handle = await open(temporary, 'wx', mode);
	try {
		await handle.writeFile(data);
		await handle.chmod(mode);
		await handle.sync();
	} catch (error) {
		await handle.close();
		await rm(temporary, { force: true });
		throw error;
	}
	await handle.close();
	try {
		await rename(temporary, path);
	} catch (error) {
		await rm(temporary, { force: true });
		throw error;
	}
	await syncFolder(folder);
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

/** A file's text, or undefined when there is no such file; any other failure is thrown. */
export async function readTextIfExists(path: string): Promise<string | undefined> {
	try {
		return await readFile(path, 'utf8');
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
		throw error;
	}
}
