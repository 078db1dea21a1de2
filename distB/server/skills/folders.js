/**
 * Skill folders on disk during a transaction: the staged and displaced copies beside them
 * (`<skills dir>/.hangar/<id>/new|old`), moving and copying whole folders, and taking out
 * only the files Hangar wrote. Under a project, every path is first confined to it.
 */
import { copyFile, mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { confine } from '../store/project.js';
import { confineLock } from './lockfile.js';
/** Folder beside the skill folders holding a transaction's staged and displaced copies. */
export const TRANSACTIONS = '.hangar';
/**
 * 400 when a skill folder of a project (its transactions folder, or one of `files` in it),
 * or the project's lock file, lies behind a symlink leading out of the project; nothing to
 * check for user scope.
 */
export async function confineFolders(projectRoot, folders, files = []) {
    if (!projectRoot)
        return;
    await confineLock(projectRoot);
    await confine(projectRoot, folders.flatMap((folder) => [join(dirname(folder), TRANSACTIONS), folder, ...files.map((file) => join(folder, ...file.split('/')))]));
}
/** `<skills dir>/.hangar/<id>` for the skill folder `<skills dir>/<name>`. */
export function transactionFolder(folder, id) {
    return join(dirname(folder), TRANSACTIONS, id);
}
export async function removeTransactionFolder(folder, id) {
    await rm(transactionFolder(folder, id), { recursive: true, force: true });
    await rmdir(join(dirname(folder), TRANSACTIONS)).catch(() => undefined); // only when empty
}
export async function exists(path) {
    return stat(path).then(() => true, () => false);
}
/** Renames a folder into place; false when it must be copied instead (another file system). */
export async function moveFolder(from, to) {
    await mkdir(dirname(to), { recursive: true, mode: 0o755 });
    try {
        await rename(from, to);
        return true;
    }
    catch (error) {
        if (error.code === 'EXDEV')
            return false;
        throw error;
    }
}
/** Copies the listed files of `from` into a new folder `to`, modes 0644. */
export async function copyTree(from, files, to) {
    await mkdir(dirname(to), { recursive: true, mode: 0o755 });
    await mkdir(to, { mode: 0o755 });
    for (const file of files) {
        const target = join(to, ...file.split('/'));
        await mkdir(dirname(target), { recursive: true, mode: 0o755 });
        await copyFile(join(from, ...file.split('/')), target);
    }
}
/** Regular files under a folder, as relative POSIX paths. */
export async function listFiles(folder) {
    const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
    return entries
        .filter((entry) => !entry.isDirectory())
        .map((entry) => relative(folder, join(entry.parentPath ?? entry.path, entry.name)).split(sep).join('/'));
}
/**
 * Takes Hangar's files out of a skill folder: the whole folder (moved aside in one rename)
 * when it holds nothing else, else the files one by one, leaving the others in place.
 */
export async function removeOwnFiles(folder, files, transaction) {
    if (!(await exists(folder)))
        return;
    const present = await listFiles(folder);
    if (present.every((file) => files.includes(file))) {
        await mkdir(transaction, { recursive: true });
        await rename(folder, join(transaction, 'old'));
        return;
    }
    for (const file of files)
        await rm(join(folder, ...file.split('/')), { force: true });
    const folders = [...new Set(files.flatMap((file) => file.split('/').slice(0, -1).map((_, index, parts) => parts.slice(0, index + 1).join('/'))))];
    for (const sub of folders.sort((a, b) => b.length - a.length))
        await rmdir(join(folder, ...sub.split('/'))).catch(() => undefined);
}
//# sourceMappingURL=folders.js.map