/**
 * A command loads what it uses: the everyday commands leave out the MCP SDK's client (and the
 * JSON-schema tools it brings), which only `hangar mcp …` and the creation of an aggregate that
 * checks its names need. Read by a module hook registered with `--import`.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar } from './support/processes.js';

let home: TestHome;

const HOOKS = `import { appendFileSync } from 'node:fs';
let out;
export function initialize(data) { out = data.out; }
export async function load(url, context, next) {
	appendFileSync(out, url + '\\n');
	return next(url, context);
}
`;

beforeAll(async () => {
	home = await createTestHome();
	await writeFile(join(home.path, 'hooks.mjs'), HOOKS);
	await writeFile(join(home.path, 'register.mjs'), `import { register } from 'node:module';\nregister('./hooks.mjs', { parentURL: import.meta.url, data: { out: process.env.LOADED_MODULES } });\n`);
});

afterAll(() => home?.dispose());

/** The packages `hangar ARGS…` loads. */
async function packagesLoadedBy(args: string[]): Promise<Set<string>> {
	const out = join(home.path, `${args.join('-')}.txt`);
	await writeFile(out, '');
	const result = await runHangar(args, { ...home.env, NODE_OPTIONS: `--import=${join(home.path, 'register.mjs')}`, LOADED_MODULES: out });
	expect(result.code, result.stderr).toBe(0);
	const urls = (await readFile(out, 'utf8')).split('\n');
	expect(urls.some((url) => url.endsWith('/server/cli/program.js'))).toBe(true);
	return new Set(urls.map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]).filter((name): name is string => name !== undefined));
}

describe('the CLI', { timeout: 60_000 }, () => {
	it.each(['ls --json --all', 'skill ls --json', 'group ls --json'])('runs `hangar %s` without the MCP SDK', async (command) => {
		const packages = await packagesLoadedBy(command.split(' '));
		expect(packages).toContain('zod');
		for (const unused of ['@modelcontextprotocol/sdk', 'zod-to-json-schema', 'ajv']) expect(packages, unused).not.toContain(unused);
	});
});
