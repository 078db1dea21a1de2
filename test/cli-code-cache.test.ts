/**
 * `hangar` keeps a V8 code cache of its bundle (server/cli/codeCache.ts): the first run of a
 * build writes it, later runs read it, a cache V8 refuses is written anew, and a folder someone
 * else may write to is never used.
 */
import { chmod, mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar } from './support/processes.js';

let home: TestHome;
let cacheRoot: string;

beforeEach(async () => {
	home = await createTestHome();
	cacheRoot = join(home.path, 'cache', 'v8');
});

afterEach(() => home.dispose());

async function groupList(env: NodeJS.ProcessEnv = home.env): Promise<string> {
	const result = await runHangar(['group', 'ls', '--json'], env);
	expect(result.code, result.stderr).toBe(0);
	return result.stdout;
}

/** The build folders of the cache, and each one's files with their inode and modification time. */
async function cacheFiles(): Promise<Map<string, string>> {
	const files = new Map<string, string>();
	for (const build of await readdir(cacheRoot)) {
		for (const name of await readdir(join(cacheRoot, build))) {
			const { ino, mtimeMs } = await stat(join(cacheRoot, build, name));
			files.set(`${build}/${name}`, `${ino}:${mtimeMs}`);
		}
	}
	return files;
}

describe('the code cache', { timeout: 60_000 }, () => {
	it('is written by the first run, in a folder of this build only the user may enter, and read by the next without a write', async () => {
		const answer = await groupList();
		const builds = await readdir(cacheRoot);
		expect(builds).toHaveLength(1);
		expect(builds[0]).toMatch(new RegExp(`^${process.version.replaceAll('.', '\\.')}-${process.arch}-[0-9a-f]{16}$`));
		expect((await stat(cacheRoot)).mode & 0o777).toBe(0o700);
		expect((await stat(join(cacheRoot, builds[0]!))).mode & 0o777).toBe(0o700);
		const written = await cacheFiles();
		expect([...written.keys()]).toContain(`${builds[0]}/main.js`);

		expect(await groupList()).toBe(answer);
		// V8 accepted every file's cached code: nothing was written again.
		expect(await cacheFiles()).toEqual(written);
	});

	it('writes anew what V8 refuses, and the command runs as without it', async () => {
		const answer = await groupList();
		const [build] = await readdir(cacheRoot);
		const main = join(cacheRoot, build!, 'main.js');
		const garbage = Buffer.alloc((await stat(main)).size, 7);
		await writeFile(main, garbage);

		expect(await groupList()).toBe(answer);
		const rewritten = await readFile(main);
		expect(rewritten.equals(garbage)).toBe(false);
		expect(rewritten.length).toBeGreaterThan(0);
	});

	it('is not used in a folder others may write to', async () => {
		await mkdir(join(cacheRoot, 'planted'), { recursive: true });
		await chmod(cacheRoot, 0o777);
		const answer = await groupList();
		expect(await readdir(cacheRoot)).toEqual(['planted']);

		await chmod(cacheRoot, 0o700);
		expect(await groupList()).toBe(answer);
		expect((await readdir(cacheRoot)).length).toBe(2);
	});

	it('is off with NODE_DISABLE_COMPILE_CACHE', async () => {
		await groupList({ ...home.env, NODE_DISABLE_COMPILE_CACHE: '1' });
		await expect(stat(cacheRoot)).rejects.toMatchObject({ code: 'ENOENT' });
	});

	it('keeps the folders of the three most recent other builds', async () => {
		const others = ['v0-old-1', 'v0-old-2', 'v0-old-3', 'v0-old-4', 'v0-old-5'];
		for (const [index, name] of others.entries()) {
			await mkdir(join(cacheRoot, name), { recursive: true, mode: 0o700 });
			const made = new Date(Date.now() - (index + 1) * 86_400_000);
			await utimes(join(cacheRoot, name), made, made);
		}
		await chmod(cacheRoot, 0o700);
		await groupList();
		const kept = (await readdir(cacheRoot)).sort();
		expect(kept.filter((name) => others.includes(name))).toEqual(['v0-old-1', 'v0-old-2', 'v0-old-3']);
		expect(kept).toHaveLength(4);
	});
});
