/**
 * A user's project on disk: the one rule for naming a project root, and the one confinement
 * check for writing under it. A cloned repository is untrusted input: it may ship any folder
 * (`.claude/skills`, `.vscode`, `hangar.lock.yaml`) as a symlink that leads out of the project,
 * so every create, rename and delete Hangar does under a project first checks its path here.
 */
import { lstat, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, posix, relative, sep, win32 } from 'node:path';
import { HangarError } from '../../protocol/errors.js';

export interface ProjectRootRules {
	/** The folder must be a git work tree (`.git` folder or file): skills pin their lock file there. */
	readonly git?: boolean;
	/** Refuse a path through symlinks instead of following it to the real folder (ToolHive's rule for skills). */
	readonly refuseSymlinks?: boolean;
}

/**
 * The project root `given` names, cleaned (normalised, no trailing slash) and real (no symlinks):
 * one project, one key. 400 `invalid_project_root` when it is relative, missing or not a folder,
 * reached through a symlink (with `refuseSymlinks`), or not a git work tree (with `git`).
 */
export async function projectRoot(given: string, rules: ProjectRootRules = {}): Promise<string> {
	const invalid = (why: string) => HangarError.badRequest(`project_root ${given} ${why}`, 'invalid_project_root');
	if (!isAbsolute(given)) throw invalid('must be absolute');
	const cleaned = cleanPath(given);
	const stats = await stat(cleaned).catch(() => undefined);
	if (!stats?.isDirectory()) throw invalid('is not an existing folder');
	const real = await realpath(cleaned);
	if (!samePath(real, cleaned) && rules.refuseSymlinks) throw invalid(`may not contain symlinks; use ${real}`);
	if (rules.git && !(await stat(join(real, '.git')).catch(() => undefined))) throw invalid('is not a git repository (no .git)');
	return real;
}

/** The git work tree around `start` (the nearest folder at or above it holding `.git`), real; undefined outside one. */
export async function enclosingProject(start: string): Promise<string | undefined> {
	let folder = await realpath(start).catch(() => undefined);
	while (folder !== undefined) {
		if (await stat(join(folder, '.git')).catch(() => undefined)) return folder;
		const parent = dirname(folder);
		folder = parent === folder ? undefined : parent;
	}
	return undefined;
}

/**
 * The key a project was recorded under: its real root while the folder exists, else the path as
 * given, cleaned. Lookups go through it, so `c:\work\app` finds what `C:\Work\App` recorded.
 */
export function recordedProjectRoot(given: string): Promise<string> {
	return projectRoot(given).catch(() => cleanPath(given));
}

/**
 * A path normalised, without trailing slashes; on Windows with the drive letter in capitals, as
 * Windows reports it (VS Code hands folders over as `c:\…`).
 */
export function cleanPath(given: string, platform: NodeJS.Platform = process.platform): string {
	const { normalize } = platform === 'win32' ? win32 : posix;
	const normalised = normalize(given);
	const cleaned = normalised.length > 1 && !/^[a-z]:\\$/i.test(normalised) ? normalised.replace(/[\\/]+$/, '') : normalised;
	return platform === 'win32' ? cleaned.replace(/^[a-z](?=:)/, (drive) => drive.toUpperCase()) : cleaned;
}

/** Whether two cleaned paths name one file: on Windows, whose file names ignore case, whatever their case. */
function samePath(a: string, b: string): boolean {
	return process.platform === 'win32' ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/**
 * Where `path` (under the real folder `root`) really is, once symlinks are followed; 400
 * `outside_project` naming the first symlink on the way that resolves outside `root` (or
 * nowhere). Parts of the path that do not exist yet are fine: Hangar creates them as folders.
 */
export async function confinedPath(root: string, path: string): Promise<string> {
	const parts = relative(root, path).split(sep).filter(Boolean);
	if (!isAbsolute(path) || parts[0] === '..') throw outside(path, path, root);
	let real = root;
	let given = root;
	for (const [index, part] of parts.entries()) {
		given = join(given, part);
		const next = join(real, part);
		const stats = await lstat(next).catch((error: NodeJS.ErrnoException) => {
			if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
			throw error;
		});
		if (!stats) return join(next, ...parts.slice(index + 1));
		if (stats.isSymbolicLink()) {
			const target = await realpath(next).catch(() => undefined);
			if (target === undefined || !isWithin(root, target)) throw outside(given, target, root);
			real = target;
		} else {
			real = next;
		}
	}
	return real;
}

/** Like `confinedPath` for several paths; resolves when all stay inside. */
export async function confine(root: string, paths: Iterable<string>): Promise<void> {
	for (const path of paths) await confinedPath(root, path);
}

/** Where `path` really is once symlinks (of the path or of any existing folder above it) are followed. */
export async function realLocation(path: string): Promise<string> {
	const missing: string[] = [];
	let existing = path;
	for (;;) {
		try {
			return join(await realpath(existing), ...missing);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(existing) === existing) throw error;
			missing.unshift(basename(existing));
			existing = dirname(existing);
		}
	}
}

function isWithin(root: string, path: string): boolean {
	return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function outside(link: string, target: string | undefined, root: string): HangarError {
	const what = target === undefined ? 'is a symlink to a missing target,' : link === target ? 'is' : `is a symlink to ${target},`;
	return new HangarError(
		400,
		`${link} ${what} outside the project ${root}; Hangar does not follow links out of a project (remove the link and try again)`,
		'outside_project',
	);
}
