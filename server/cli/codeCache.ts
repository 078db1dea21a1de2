/**
 * A V8 code cache for the bundle's CommonJS files, so that a command compiles almost nothing
 * after its first run: what Node ≥ 22.1's `module.enableCompileCache()` does, for every Node
 * Hangar supports, with the cache kept among the user's own files.
 *
 * - A bundle file is compiled as Node compiles it (the CommonJS wrapper, the same filename), with
 *   the cached data of the file's last compilation when there is one (bundleLoader.ts loads it).
 * - The cache is written when the process ends, so it holds the functions the command ran and
 *   not only the few V8 compiles eagerly. A file whose cache V8 accepted is not written again.
 * - V8 checks that cached data matches its own version and flags, but of the source it checks
 *   only the length: each build's cache has a folder of its own, named by the build's hash.
 *   Folders of other builds are pruned to a few.
 * - The cache holds code this process will run, so it is only used in a folder that nobody but
 *   the user may write to.
 * - It is best effort: a cache that cannot be read or written is no cache.
 * - `NODE_DISABLE_COMPILE_CACHE` (Node's own switch for its cache) turns it off.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { join, sep } from 'node:path';
import { constants, Script } from 'node:vm';

/** Folders of earlier builds kept beside the current one (a few builds may be in use at once). */
const KEPT_BUILDS = 3;

/** A CommonJS file's wrapper function, called with `exports`, `require`, `module`, `__filename` and `__dirname`. */
export type ModuleWrapper = (this: unknown, exports: unknown, require: NodeJS.Require, module: object, filename: string, dirname: string) => void;

/** Compiles a file of the bundle (its content, its path) into its wrapper. */
export type Compile = (content: string, filename: string) => ModuleWrapper;

/** Compiles as Node does: the CommonJS wrapper, the file's name, `import()` through Node's loader. */
function compileScript(content: string, filename: string, cachedData: Buffer | undefined): Script {
	// V8 reads a hashbang only at a script's start, which the wrapper takes.
	const source = content.startsWith('#!') ? `//${content.slice(2)}` : content;
	return new Script(Module.wrap(source), { filename, cachedData, importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
}

function wrapperOf(script: Script): ModuleWrapper {
	return script.runInThisContext({ displayErrors: true }) as ModuleWrapper;
}

/** Compiles the bundle's files with cached code from `cacheRoot`/`buildId`, or without it where no cache may be kept. */
export function compileWithCache(cacheRoot: string, buildId: string): Compile {
	const uncached: Compile = (content, filename) => wrapperOf(compileScript(content, filename, undefined));
	if (process.env.NODE_DISABLE_COMPILE_CACHE) return uncached;
	const folder = join(cacheRoot, `${process.version}-${process.arch}-${buildId}`);
	const made = ownFolder(cacheRoot, folder);
	if (made === undefined) return uncached;
	const toWrite: { script: Script; file: string }[] = [];
	process.once('exit', () => {
		for (const { script, file } of toWrite) {
			try {
				const temporary = `${file}.${process.pid}`;
				writeFileSync(temporary, script.createCachedData());
				renameSync(temporary, file);
			} catch {
				return; // the folder is gone or full: the next run compiles
			}
		}
		if (made && toWrite.length) pruneOtherBuilds(cacheRoot, folder);
	});
	return (content, filename) => {
		// The bundle is one folder: a file's name is its name in the cache. (Joined by hand: the
		// path module's normalizing, called for every file, became hot enough for V8 to optimise
		// it in the background, and the process waited for that at its exit.)
		const file = `${folder}${sep}${filename.slice(filename.lastIndexOf(sep) + 1)}`;
		const cachedData = made ? undefined : readOrUndefined(file);
		const script = compileScript(content, filename, cachedData);
		if (cachedData === undefined || script.cachedDataRejected) toWrite.push({ script, file });
		return wrapperOf(script);
	};
}

/**
 * Makes `folder` (in `root`) if it is missing, only the user's: true when it was made, false
 * when it was there, undefined when it may not be used (someone else may write to it).
 */
function ownFolder(root: string, folder: string): boolean | undefined {
	try {
		mkdirSync(root, { recursive: true, mode: 0o700 });
		if (!writableByUserOnly(root)) return undefined;
		let made = true;
		try {
			mkdirSync(folder, { mode: 0o700 });
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
			made = false;
		}
		return writableByUserOnly(folder) ? made : undefined;
	} catch {
		return undefined;
	}
}

/** Owned by this user, and neither its group nor others may write to it (Windows: per-user folders by default). */
function writableByUserOnly(path: string): boolean {
	if (process.platform === 'win32') return true;
	const { uid, mode } = statSync(path);
	return uid === process.getuid!() && (mode & 0o022) === 0;
}

function readOrUndefined(file: string): Buffer | undefined {
	try {
		return readFileSync(file);
	} catch {
		return undefined;
	}
}

/** Removes the folders of other builds but the most recently made few. */
function pruneOtherBuilds(root: string, current: string): void {
	try {
		const others = readdirSync(root)
			.map((name) => join(root, name))
			.filter((path) => path !== current)
			.map((path) => ({ path, made: statSync(path).mtimeMs }))
			.sort((a, b) => b.made - a.made);
		for (const { path } of others.slice(KEPT_BUILDS)) rmSync(path, { recursive: true, force: true });
	} catch {
		// another process pruned at the same time
	}
}
