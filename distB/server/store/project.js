/**
 * A user's project on disk: the one rule for naming a project root, and the one confinement
 * check for writing under it. A cloned repository is untrusted input: it may ship any folder
 * (`.claude/skills`, `.vscode`, `hangar.lock.yaml`) as a symlink that leads out of the project,
 * so every create, rename and delete Hangar does under a project first checks its path here.
 */
import { lstat, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, normalize, relative, sep } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
/**
 * The project root `given` names, cleaned (normalised, no trailing slash) and real (no symlinks):
 * one project, one key. 400 `invalid_project_root` when it is relative, missing or not a folder,
 * reached through a symlink (with `refuseSymlinks`), or not a git work tree (with `git`).
 */
export async function projectRoot(given, rules = {}) {
    const invalid = (why) => HangarError.badRequest(`project_root ${given} ${why}`, 'invalid_project_root');
    if (!isAbsolute(given))
        throw invalid('must be absolute');
    const cleaned = cleanPath(given);
    const stats = await stat(cleaned).catch(() => undefined);
    if (!stats?.isDirectory())
        throw invalid('is not an existing folder');
    const real = await realpath(cleaned);
    if (real !== cleaned && rules.refuseSymlinks)
        throw invalid(`may not contain symlinks; use ${real}`);
    if (rules.git && !(await stat(join(real, '.git')).catch(() => undefined)))
        throw invalid('is not a git repository (no .git)');
    return real;
}
/** The git work tree around `start` (the nearest folder at or above it holding `.git`), real; undefined outside one. */
export async function enclosingProject(start) {
    let folder = await realpath(start).catch(() => undefined);
    while (folder !== undefined) {
        if (await stat(join(folder, '.git')).catch(() => undefined))
            return folder;
        const parent = dirname(folder);
        folder = parent === folder ? undefined : parent;
    }
    return undefined;
}
/** A path normalised, without trailing slashes. */
export function cleanPath(path) {
    const normalised = normalize(path);
    return normalised.length > 1 ? normalised.replace(/[\\/]+$/, '') : normalised;
}
/**
 * Where `path` (under the real folder `root`) really is, once symlinks are followed; 400
 * `outside_project` naming the first symlink on the way that resolves outside `root` (or
 * nowhere). Parts of the path that do not exist yet are fine: Hangar creates them as folders.
 */
export async function confinedPath(root, path) {
    const parts = relative(root, path).split(sep).filter(Boolean);
    if (!isAbsolute(path) || parts[0] === '..')
        throw outside(path, path, root);
    let real = root;
    let given = root;
    for (const [index, part] of parts.entries()) {
        given = join(given, part);
        const next = join(real, part);
        const stats = await lstat(next).catch((error) => {
            if (error.code === 'ENOENT' || error.code === 'ENOTDIR')
                return undefined;
            throw error;
        });
        if (!stats)
            return join(next, ...parts.slice(index + 1));
        if (stats.isSymbolicLink()) {
            const target = await realpath(next).catch(() => undefined);
            if (target === undefined || !isWithin(root, target))
                throw outside(given, target, root);
            real = target;
        }
        else {
            real = next;
        }
    }
    return real;
}
/** Like `confinedPath` for several paths; resolves when all stay inside. */
export async function confine(root, paths) {
    for (const path of paths)
        await confinedPath(root, path);
}
/** Where `path` really is once symlinks (of the path or of any existing folder above it) are followed. */
export async function realLocation(path) {
    const missing = [];
    let existing = path;
    for (;;) {
        try {
            return join(await realpath(existing), ...missing);
        }
        catch (error) {
            if (error.code !== 'ENOENT' || dirname(existing) === existing)
                throw error;
            missing.unshift(basename(existing));
            existing = dirname(existing);
        }
    }
}
function isWithin(root, path) {
    return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}
function outside(link, target, root) {
    const what = target === undefined ? 'is a symlink to a missing target,' : link === target ? 'is' : `is a symlink to ${target},`;
    return new HangarError(400, `${link} ${what} outside the project ${root}; Hangar does not follow links out of a project (remove the link and try again)`, 'outside_project');
}
//# sourceMappingURL=project.js.map