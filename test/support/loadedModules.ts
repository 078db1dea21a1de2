/**
 * Which modules a `hangar` process loads: a module hook, registered through NODE_OPTIONS
 * (`--import`, which child processes inherit), appends the URL of every module the process
 * loads to the file named by LOADED_MODULES, one a line.
 */
import { writeFile } from 'node:fs/promises';
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
	await writeFile(register, `import { register } from 'node:module';\nif (${when}) register('./hooks.mjs', { parentURL: import.meta.url, data: { out: process.env.LOADED_MODULES } });\n`);
	return `--import=${register}`;
}

/** The npm packages among loaded module URLs (`@scope/name` or `name`). */
export function packagesOf(urls: readonly string[]): Set<string> {
	return new Set(urls.map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]).filter((name): name is string => name !== undefined));
}
