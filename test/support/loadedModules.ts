/**
 * Which modules a `hangar` process loads: a module hook, registered through NODE_OPTIONS
 * (`--import`, which child processes inherit), appends the URL of every module the process
 * loads to the file named by LOADED_MODULES, one a line: the ESM ones through Node's loader
 * hooks, the CommonJS packages as `node:module` loads them, and the bundle's files as the
 * launcher reads them (server/cli/bundleLoader.ts loads them without `node:module`).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const HOOKS = `import { appendFileSync } from 'node:fs';
let out;
export function initialize(data) { out = data.out; }
export async function load(url, context, next) {
	appendFileSync(out, url + '\\n');
	return next(url, context);
}
`;

/**
 * Writes the hook into `folder` and returns the NODE_OPTIONS that load it; `when` is a
 * JavaScript condition that picks the processes that register it (all by default).
 */
export async function writeModuleHook(folder: string, when = 'true'): Promise<string> {
	await writeFile(join(folder, 'hooks.mjs'), HOOKS);
	const register = join(folder, 'register.mjs');
	await writeFile(
		register,
		`import fs, { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
if (${when}) {
	register('./hooks.mjs', { parentURL: import.meta.url, data: { out: process.env.LOADED_MODULES } });
	const load = Module.prototype.load;
	Module.prototype.load = function (filename) {
		if (isAbsolute(filename)) appendFileSync(process.env.LOADED_MODULES, pathToFileURL(filename).href + '\\n');
		return load.call(this, filename);
	};
	const readFileSync = fs.readFileSync;
	fs.readFileSync = function (path, ...rest) {
		if (typeof path === 'string' && /[\\\\/]dist[\\\\/]server[\\\\/]cli[\\\\/]bundle[\\\\/][^\\\\/]+\\.js$/.test(path)) appendFileSync(process.env.LOADED_MODULES, pathToFileURL(path).href + '\\n');
		return readFileSync.call(this, path, ...rest);
	};
}
`,
	);
	return `--import=${register}`;
}

/**
 * The modules behind loaded module URLs: a file of the bundle (dist/server/cli/bundle/) stands
 * for the source modules it holds, as its meta.json lists them (scripts/bundle.mjs), each named
 * by the URL it had without the bundle (dist/…/name.js, or its file in node_modules).
 */
export async function modulesOf(urls: readonly string[]): Promise<string[]> {
	const bundle = new URL('../../dist/server/cli/bundle/', import.meta.url).href;
	const meta = JSON.parse(await readFile(new URL('meta.json', bundle), 'utf8')) as Record<string, string[]>;
	return urls.flatMap((url) => (url.startsWith(bundle) ? (meta[url.slice(bundle.length)] ?? [url]) : [url]));
}

/** The npm packages among loaded module URLs (`@scope/name` or `name`). */
export function packagesOf(urls: readonly string[]): Set<string> {
	return new Set(urls.map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]).filter((name): name is string => name !== undefined));
}
