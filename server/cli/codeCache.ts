/**
 * A V8 code cache for the bundle's CommonJS files, so that a command compiles almost nothing
 * after its first run: what Node ≥ 22.1's `module.enableCompileCache()` does, for every Node
 * Hangar supports, with the cache kept among the user's own files.
 *
 * - A bundle file is compiled as Node compiles it (the CommonJS wrapper, the same filename), with
 *   the cached data of the file's last compilation when there is one.
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
import Module, { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { constants, Script } from 'node:vm';

/** Folders of earlier builds kept beside the current one (a few builds may be in use at once). */
const KEPT_BUILDS = 3;

interface CommonJsModule {
	exports: unknown;
	_compile(content: string, filename: string, ...rest: unknown[]): unknown;
}

/** Compiles the CommonJS files of `bundleDir` with cached code from `cacheRoot`/`buildId`. */
export function cacheCompiledCode(bundleDir: string, cacheRoot: string, buildId: string): void {
	if (process.env.NODE_DISABLE_COMPILE_CACHE) return;
	const folder = join(cacheRoot, `${process.version}-${process.arch}-${buildId}`);
	const made = ownFolder(cacheRoot, folder);
	if (made === undefined) return;
	const within = bundleDir.endsWith(sep) ? bundleDir : `${bundleDir}${sep}`;
	const prototype = Module.prototype as unknown as CommonJsModule;
	const compile = prototype._compile;
	const toWrite: { script: Script; file: string }[] = [];
	prototype._compile = function (this: CommonJsModule, content: string, filename: string, ...rest: unknown[]) {
		// Node 22 passes more (the module's format): whatever it passes goes on to its own compile.
		if (!filename.startsWith(within)) return compile.call(this, content, filename, ...rest);
		const file = join(folder, filename.slice(within.length).replaceAll(sep, '_'));
		const cachedData = made ? undefined : readOrUndefined(file);
		// V8 reads a hashbang only at a script's start, which the wrapper takes.
		const source = content.startsWith('#!') ? `//${content.slice(2)}` : content;
		const script = new Script(Module.wrap(source), { filename, cachedData, importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
		if (cachedData === undefined || script.cachedDataRejected) toWrite.push({ script, file });
		const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
		return wrapper.call(this.exports, this.exports, createRequire(filename), this, filename, dirname(filename));
	};
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
