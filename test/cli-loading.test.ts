/**
 * A command loads what it uses: the everyday commands leave out the MCP SDK's client (and the
 * JSON-schema tools it brings), which only `hangar mcp …` and the creation of an aggregate that
 * checks its names need. Read by a module hook (test/support/loadedModules.ts).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestHome, type TestHome } from './support/home.js';
import { modulesOf, packagesOf, writeModuleHook } from './support/loadedModules.js';
import { runHangar } from './support/processes.js';

let home: TestHome;
let nodeOptions: string;

beforeAll(async () => {
	home = await createTestHome();
	nodeOptions = await writeModuleHook(home.path);
});

afterAll(() => home?.dispose());

/** The packages `hangar ARGS…` loads. */
async function packagesLoadedBy(args: string[]): Promise<Set<string>> {
	const out = join(home.path, `${args.join('-')}.txt`);
	await writeFile(out, '');
	const result = await runHangar(args, { ...home.env, NODE_OPTIONS: nodeOptions, LOADED_MODULES: out });
	expect(result.code, result.stderr).toBe(0);
	const urls = await modulesOf((await readFile(out, 'utf8')).split('\n'));
	expect(urls.some((url) => url.endsWith('/server/cli/program.js'))).toBe(true);
	return packagesOf(urls);
}

describe('the CLI', { timeout: 60_000 }, () => {
	it.each(['ls --json --all', 'skill ls --json', 'group ls --json'])('runs `hangar %s` without the MCP SDK', async (command) => {
		const packages = await packagesLoadedBy(command.split(' '));
		expect(packages).toContain('zod');
		for (const unused of ['@modelcontextprotocol/sdk', 'zod-to-json-schema', 'ajv']) expect(packages, unused).not.toContain(unused);
	});
});
