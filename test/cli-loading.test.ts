/**
 * A command loads what it uses: the everyday commands leave out the MCP SDK's client (and the
 * JSON-schema tools it brings), which only `hangar mcp …` and the creation of an aggregate that
 * checks its names need, and the areas of the operation table they do not call (the dispatcher
 * loads an area on its first call); the commands that read leave out zod (their params pass the
 * build's plain schemas, their stores are checked by generated JSON Schemas). Read by a module
 * hook (test/support/loadedModules.ts).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestHome, type TestHome } from './support/home.js';
import { modulesOf, packagesOf, writeModuleHook } from './support/loadedModules.js';
import { HANGAR_BIN, runHangar } from './support/processes.js';

let home: TestHome;
let nodeOptions: string;

beforeAll(async () => {
	home = await createTestHome();
	nodeOptions = await writeModuleHook(home.path);
});

afterAll(() => home?.dispose());

/** The modules `hangar ARGS…` loads, by the URL each had without the bundle. */
async function modulesLoadedBy(args: string[], commandTree = true): Promise<string[]> {
	const out = join(home.path, `${args.join('-')}.txt`);
	await writeFile(out, '');
	const result = await runHangar(args, { ...home.env, NODE_OPTIONS: nodeOptions, LOADED_MODULES: out });
	expect(result.code, result.stderr).toBe(0);
	const urls = await modulesOf((await readFile(out, 'utf8')).split('\n'));
	expect(urls.some((url) => url.endsWith('/server/cli/program.js'))).toBe(commandTree);
	return urls;
}

/** What V8 says it optimises while `hangar ARGS…` runs (`--trace-opt`, on standard output). */
async function traceOptimising(args: string[]): Promise<string> {
	const child = spawn(process.execPath, ['--trace-opt', HANGAR_BIN, ...args], { env: { ...home.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'ignore'] });
	let trace = '';
	child.stdout.on('data', (chunk: Buffer) => (trace += chunk.toString()));
	await once(child, 'close');
	return trace;
}

describe('the CLI', { timeout: 60_000 }, () => {
	it.each(['ls --json --all', 'skill ls --json', 'group ls --json'])('runs `hangar %s` without the MCP SDK', async (command) => {
		const packages = packagesOf(await modulesLoadedBy(command.split(' ')));
		for (const unused of ['@modelcontextprotocol/sdk', 'zod-to-json-schema', 'ajv']) expect(packages, unused).not.toContain(unused);
	});

	it.each(['group ls --json', 'client ls --json'])('runs `hangar %s` without zod: params checked by the build\'s plain schemas, stores by generated JSON Schemas', async (command) => {
		const modules = await modulesLoadedBy(command.split(' '));
		expect(modules.some((url) => url.endsWith('/server/manifest.js'))).toBe(true);
		expect(modules.filter((url) => /\/protocol\/(protocol\.|common|runConfig)/.test(url))).toEqual([]);
		expect(packagesOf(modules)).not.toContain('zod');
	});

	it('loads zod for params the plain schema leaves to it, and answers with its message', async () => {
		const refused = await runHangar(['group', 'create', 'two  spaces'], home.env);
		expect(refused.code).toBe(2);
		expect(refused.stderr).toContain('group name may not contain consecutive spaces');
		const out = join(home.path, 'refused.txt');
		await writeFile(out, '');
		await runHangar(['group', 'create', 'Upper'], { ...home.env, NODE_OPTIONS: nodeOptions, LOADED_MODULES: out });
		expect(packagesOf(await modulesOf((await readFile(out, 'utf8')).split('\n')))).toContain('zod');
	});

	it('builds only the areas a command calls: `hangar group ls` leaves out the other areas\' services and schemas', async () => {
		const modules = await modulesLoadedBy(['group', 'ls', '--json']);
		expect(modules.some((url) => url.endsWith('/server/groups/service.js'))).toBe(true);
		for (const area of ['workloads', 'skills', 'clients', 'registries', 'secrets']) {
			expect(modules.filter((url) => url.endsWith(`/protocol/protocol.${area}.js`)), area).toEqual([]);
		}
		for (const service of ['workloads/service.js', 'skills/service.js', 'clients/service.js', 'registry/service.js', 'secrets/service.js']) {
			expect(modules.filter((url) => url.endsWith(`/server/${service}`)), service).toEqual([]);
		}
	});

	it('builds a service only when a call needs it: `hangar ls` and `hangar skill ls` leave out the registries\' and the secrets\' services', async () => {
		for (const command of [['ls', '--json', '--all'], ['skill', 'ls', '--json']]) {
			const modules = await modulesLoadedBy(command);
			for (const service of ['registry/service.js', 'secrets/service.js']) {
				expect(modules.filter((url) => url.endsWith(`/server/${service}`)), `${command.join(' ')}: ${service}`).toEqual([]);
			}
		}
	});

	it('completes workload names from the file names alone: `hangar __complete info` loads no store, no record schema, no zod', async () => {
		const modules = await modulesLoadedBy(['__complete', 'info', ''], false);
		expect(modules.some((url) => url.endsWith('/server/runspec/workloadNames.js'))).toBe(true);
		for (const heavy of ['/server/runspec/store.js', '/server/runspec/records.generated.js', '/server/store/document.js']) {
			expect(modules.filter((url) => url.endsWith(heavy)), heavy).toEqual([]);
		}
		expect(packagesOf(modules)).not.toContain('zod');
	});

	it('optimises nothing in the everyday commands, so that no process waits at its exit for V8 to finish optimising', async () => {
		await runHangar(['run', 'http://127.0.0.1:9/mcp', '--name', 'unreachable'], home.env); // stored, in error
		for (const command of [['ls', '--all'], ['info', 'unreachable'], ['logs', 'unreachable'], ['client', 'ls'], ['skill', 'ls'], ['group', 'ls'], ['--help']]) {
			// The second run reads the code cache the first one wrote, as a user's commands do.
			for (const run of ['first', 'second']) {
				const traced = await traceOptimising(command);
				// Before the fix, the launcher joined each file's cache path with node:path, whose
				// normalizing V8 then optimised, and `hangar info` waited 3 ms for it at its exit.
				expect([...traced.matchAll(/compiling method \S+ <JSFunction (\S*)/g)].map((match) => match[1]), `${command.join(' ')}, ${run} run`).toEqual([]);
			}
		}
	});

	it('runs `hangar version` without the command tree or the operation table: no commander, no zod', async () => {
		const modules = await modulesLoadedBy(['version', '--json'], false);
		expect(modules.some((url) => url.endsWith('/server/runtime/docker.js'))).toBe(true);
		const packages = packagesOf(modules);
		for (const unused of ['commander', 'zod']) expect(packages, unused).not.toContain(unused);
	});
});
