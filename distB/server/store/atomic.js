/**
 * Atomic file replacement: write a temporary file in the same folder, fsync it, rename it
 * over the target and fsync the folder. A reader sees the old file or the new one, never a
 * torn write, and a crash leaves at most a stray temporary file.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
export async function writeFileAtomic(path, data, options = {}) {
    const file = await openFileAtomic(path, options);
    try {
        await file.write(typeof data === 'string' ? Buffer.from(data) : data);
    }
    catch (error) {
        await file.abort();
        throw error;
    }
    await file.commit();
}
export async function openFileAtomic(path, options = {}) {
    const folder = dirname(path);
    const durable = options.durable ?? true;
    await mkdir(folder, { recursive: true, mode: options.dirMode ?? 0o700 });
    const mode = (await existingMode(path)) ?? options.mode ?? 0o600;
    const temporary = join(folder, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
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
                if (durable)
                    await handle.sync();
                await close();
                await rename(temporary, path);
            }
            catch (error) {
                await abort();
                throw error;
            }
            if (durable)
                await syncFolder(folder);
        },
        abort,
    };
}
async function existingMode(path) {
    try {
        return (await stat(path)).mode & 0o7777;
    }
    catch {
        return undefined;
    }
}
async function syncFolder(folder) {
    // Makes the rename durable. Not every platform can open a folder for fsync.
    try {
        const handle = await open(folder, 'r');
        try {
            await handle.sync();
        }
        finally {
            await handle.close();
        }
    }
    catch {
        // Best effort: Windows cannot fsync folders.
    }
}
/** A file's text, or undefined when there is no such file; any other failure is thrown. */
export async function readTextIfExists(path) {
    try {
        return await readFile(path, 'utf8');
    }
    catch (error) {
        if (error.code === 'ENOENT')
            return undefined;
        throw error;
    }
}
//# sourceMappingURL=atomic.js.map