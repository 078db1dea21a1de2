/**
 * Crash safety, for real: `hangar skill install` and `rm` processes killed with SIGKILL —
 * at each step of the transaction, and at random moments — must leave the old skill or the
 * new one in every client folder (never a mix), and, once any Hangar command has looked,
 * never a record without its files nor files without their record.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANGAR_BIN, runHangar } from './support/processes.js';
import { startRegistry, type Registry } from './support/registry.js';
import { createSkillsWorld, exists, publishSkill, snapshot, type SkillsWorld } from './support/skills-world.js';
import { skillMd } from './support/skills.js';

let registry: Registry;
const versions: Record<string, { digest: string; files: Record<string, string> }> = {};
const CLIENTS = ['-c', 'claude-code', '-c', 'cursor', '-c', 'codex'];
const FOLDERS = ['.claude/skills', '.cursor/skills', '.agents/skills'];

/** A version's files: a few that differ, and many so an install takes a while. */
function filesOf(version: string): Record<string, string> {
	const files: Record<string, string> = { 'shared.md': `shared ${version}\n`, [`only-${version}.md`]: `${version}\n` };
	for (let index = 0; index < 80; index++) files[`bulk/${index}.md`] = `${version} ${index}\n`.repeat(40);
	return files;
}

beforeAll(async () => {
	registry = await startRegistry();
	const scratch = await createSkillsWorld();
	for (const version of ['1', '2']) {
		const files = filesOf(version);
		const digest = await publishSkill(scratch.work, `${registry.host}/skills/sturdy:${version}`, 'sturdy', { frontmatter: { version: `${version}.0.0` }, files });
		versions[version] = { digest, files: { ...files, 'SKILL.md': skillMd('sturdy', { frontmatter: { version: `${version}.0.0` } }) } };
	}
	await scratch.dispose();
}, 60_000);

afterAll(() => registry?.stop());

const reference = (version: string) => `${registry.host}/skills/sturdy:${version}`;

/** Which version a folder holds exactly: '1', '2', 'absent', or 'MIXED'. */
async function versionIn(folder: string): Promise<string> {
	if (!(await exists(folder))) return 'absent';
	const files = await snapshot(folder);
	for (const [version, expected] of Object.entries(versions)) {
		if (JSON.stringify(Object.entries(files).sort()) === JSON.stringify(Object.entries(expected.files).sort())) return version;
	}
	return 'MIXED';
}

/** What the folders and the records say after a Hangar command recovered the state. */
async function settled(world: SkillsWorld): Promise<{ record: string; folders: string[] }> {
	const listed = await runHangar(['skill', 'ls', '--json'], world.env);
	expect(listed.code, listed.stderr).toBe(0);
	const skills = JSON.parse(listed.stdout) as { digest: string; metadata: { name: string } }[];
	const record = skills.find((skill) => skill.metadata.name === 'sturdy');
	const recordVersion = record ? Object.keys(versions).find((version) => versions[version]!.digest === record.digest) ?? 'UNKNOWN' : 'none';
	const folders = await Promise.all(FOLDERS.map((folder) => versionIn(join(world.userHome, folder, 'sturdy'))));
	return { record: recordVersion, folders };
}

/** Nothing left of any transaction: no journal, no staging, no `.hangar` folder beside skills. */
async function expectNoLeftovers(world: SkillsWorld): Promise<void> {
	const state = join(world.env.HANGAR_HOME!, 'state', 'skills');
	expect(await readdir(join(state, 'journal')).catch(() => [])).toEqual([]);
	expect(await readdir(join(world.env.HANGAR_HOME!, 'cache', 'skills', 'staging')).catch(() => [])).toEqual([]);
	for (const folder of FOLDERS) expect(await exists(join(world.userHome, folder, '.hangar'))).toBe(false);
}

async function install(world: SkillsWorld, version: string, crashAt?: string): Promise<number> {
	const result = await runHangar(['skill', 'install', reference(version), ...CLIENTS], crashAt ? { ...world.env, HANGAR_TEST_CRASH_AT: crashAt } : world.env);
	return result.code;
}

describe('killed at each step of an upgrade (v1 installed, installing v2)', () => {
	it.each([
		['prepared', '1'],
		['committed', '2'],
		['swapping', '2'],
		['swapped', '2'],
		['recorded', '2'],
	])('killed when %s: settles on v%s', async (point, expected) => {
		const world = await createSkillsWorld();
		try {
			expect(await install(world, '1')).toBe(0);
			expect(await install(world, '2', point)).toBe(-1); // killed by SIGKILL
			// Before anyone recovers: each folder is whole (or, mid-swap, briefly absent) — never a mix.
			for (const folder of FOLDERS) expect(['1', '2', 'absent']).toContain(await versionIn(join(world.userHome, folder, 'sturdy')));
			const after = await settled(world);
			expect(after).toEqual({ record: expected, folders: [expected, expected, expected] });
			await expectNoLeftovers(world);
			// And the next install just works.
			expect(await install(world, '2')).toBe(0);
			expect(await settled(world)).toEqual({ record: '2', folders: ['2', '2', '2'] });
		} finally {
			await world.dispose();
		}
	});
});

describe('killed during a first install and during an uninstall', () => {
	it('a first install killed before commit leaves nothing; after commit, the skill', async () => {
		const world = await createSkillsWorld();
		try {
			expect(await install(world, '1', 'prepared')).toBe(-1);
			expect(await settled(world)).toEqual({ record: 'none', folders: ['absent', 'absent', 'absent'] });
			expect(await install(world, '1', 'committed')).toBe(-1);
			expect(await settled(world)).toEqual({ record: '1', folders: ['1', '1', '1'] });
			await expectNoLeftovers(world);
		} finally {
			await world.dispose();
		}
	});

	it('a journal write killed before its rename leaves a temporary file that the next command removes', async () => {
		const world = await createSkillsWorld();
		try {
			expect(await install(world, '1')).toBe(0);
			const journal = join(world.env.HANGAR_HOME!, 'state', 'skills', 'journal');
			const gone = spawnSync(process.execPath, ['-e', '']).pid;
			await mkdir(journal, { recursive: true });
			await writeFile(join(journal, `.tx.json.${gone}.0a1b2c3d.tmp`), '{"id":');
			expect(await settled(world)).toEqual({ record: '1', folders: ['1', '1', '1'] });
			await expectNoLeftovers(world);
		} finally {
			await world.dispose();
		}
	});

	it.each(['removed', 'recorded'])('an uninstall killed when %s completes on recovery', async (point) => {
		const world = await createSkillsWorld();
		try {
			expect(await install(world, '1')).toBe(0);
			const killed = await runHangar(['skill', 'rm', 'sturdy'], { ...world.env, HANGAR_TEST_CRASH_AT: point });
			expect(killed.code).toBe(-1);
			expect(await settled(world)).toEqual({ record: 'none', folders: ['absent', 'absent', 'absent'] });
			await expectNoLeftovers(world);
		} finally {
			await world.dispose();
		}
	});
});

describe('killed at random moments', () => {
	it('16 installs and uninstalls killed with SIGKILL at random times never leave a mix', async () => {
		const world = await createSkillsWorld();
		const seen = new Set<string>();
		try {
			// Kill anywhere from start-up to just after the end of an install that runs to completion.
			const started = performance.now();
			expect(await install(world, '1')).toBe(0);
			const duration = performance.now() - started;
			// A loaded machine can push all 16 kills to one side of the commit point; then a few more
			// rounds wait longer each time, until the kills have landed on both sides.
			for (let round = 0; round < 16 || (seen.size < 2 && round < 32); round++) {
				const args = round % 5 === 4 ? ['skill', 'rm', 'sturdy'] : ['skill', 'install', reference(String((round % 2) + 1)), ...CLIENTS];
				const child = spawn(process.execPath, [HANGAR_BIN, ...args], { env: world.env, stdio: 'ignore' });
				const exited = new Promise((resolve) => child.once('exit', resolve));
				const reach = round < 16 ? 0.3 + Math.random() * 0.8 : 1 + (round - 15) * 0.5;
				await new Promise((resolve) => setTimeout(resolve, duration * reach));
				child.kill('SIGKILL');
				await exited;
				for (const folder of FOLDERS) expect(await versionIn(join(world.userHome, folder, 'sturdy'))).not.toBe('MIXED');
				const after = await settled(world);
				const expected = after.record === 'none' ? 'absent' : after.record;
				expect(after.folders, `round ${round}`).toEqual([expected, expected, expected]);
				await expectNoLeftovers(world);
				seen.add(after.record);
			}
			// The kills landed on both sides of the commit point at least once.
			expect(seen.size).toBeGreaterThan(1);
		} finally {
			await world.dispose();
		}
	}, 300_000);
});
