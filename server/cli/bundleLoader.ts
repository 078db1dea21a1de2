/**
 * Loads the bundle's CommonJS files without Node's module loader. For each file Node's loader
 * searches for it (stats, resolving symbolic links along its path), works out its
 * `node_modules` paths and the package that scopes it, and makes it a `require` of its own: a
 * few per cent of `hangar info`'s time, which loads 50 files. The bundle needs none of it: its files
 * require each other as `./name.js`, all in its one folder, each once, and every other request
 * (a builtin, a package outside the bundle) goes to Node's `require`, resolved as from the
 * bundle's folder, where all of its files are.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Compile } from './codeCache.js';

/** What a file of the bundle sees as `module`. */
interface BundleModule {
	exports: unknown;
	readonly id: string;
	readonly filename: string;
	loaded: boolean;
}

/** Runs the bundle in `bundleDir` from its entry point, `main.js`, each file compiled by `compile`. */
export function runBundle(bundleDir: string, compile: Compile): void {
	const modules = new Map<string, BundleModule>();
	const outside = createRequire(join(bundleDir, 'main.js'));
	const prefix = join(bundleDir, '/');
	const require = ((request: string) => (request.startsWith('./') ? load(prefix + request.slice(2)) : outside(request))) as NodeJS.Require;

	function load(filename: string): unknown {
		const known = modules.get(filename);
		if (known) return known.exports;
		const module: BundleModule = { exports: {}, id: filename, filename, loaded: false };
		modules.set(filename, module);
		try {
			compile(readFileSync(filename, 'utf8'), filename).call(module.exports, module.exports, require, module, filename, bundleDir);
		} catch (error) {
			// As in Node: a file that failed to load is tried again by the next require.
			modules.delete(filename);
			throw error;
		}
		module.loaded = true;
		return module.exports;
	}

	load(`${prefix}main.js`);
}
