/**
 * One resolution rule for the skill commands, as a user in a terminal meets them: inside a
 * project, `skill info` and `skill rm` see the project skill that `skill ls` lists; every
 * command takes `--project [DIR]`; `skill rm -c CLIENT` removes one client's copy only.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANGAR_BIN, runEntry } from './support/processes.js';
import { startRegistry, type Registry } from './support/registry.js';
import { createProject, createSkillsWorld, exists, publishSkill, type SkillsWorld } from './support/skills-world.js';

let world: SkillsWorld;
let registry: Registry;

beforeAll(async () => {
	[world, registry] = await Promise.all([createSkillsWorld(), startRegistry()]);
});

afterAll(async () => {
	await registry?.stop();
	await world?.dispose();
});

const hangar = (args: string[], cwd: string) => runEntry(HANGAR_BIN, args, world.env, { cwd });

// Each test runs eight to ten `hangar` processes one after another (13 s idle): the default
// 30 s is too short for that under load (flake-hunt run 7), so the budget is per process.
describe('skill commands inside a project', { timeout: 90_000 }, () => {
	it('install --project, then info, rm -c and rm find the project skill from a subfolder, with no flag', async () => {
		const reference = `${registry.host}/skills/here:1`;
		await publishSkill(world.work, reference, 'here');
		const project = await createProject(world.work, 'cli-project');
		const sub = join(project, 'src', 'deep');
		await mkdir(sub, { recursive: true });

		const installed = await hangar(['skill', 'install', reference, '--project', '-c', 'claude-code', '-c', 'cursor'], sub);
		expect(installed.code, installed.stderr).toBe(0);
		expect(await exists(join(project, '.claude/skills/here/SKILL.md'))).toBe(true);

		const listed = await hangar(['skill', 'ls', '--json'], sub);
		expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ scope: 'project', project_root: project })]);
		const info = await hangar(['skill', 'info', 'here', '--json'], sub);
		expect(info.code, info.stderr).toBe(0);
		expect(JSON.parse(info.stdout)).toMatchObject({ installed_skill: { scope: 'project', project_root: project, clients: ['claude-code', 'cursor'] } });

		const one = await hangar(['skill', 'rm', 'here', '-c', 'cursor'], sub);
		expect(one.code, one.stderr).toBe(0);
		expect(one.stdout).toBe('Uninstalled here for cursor.\n');
		expect(await exists(join(project, '.cursor/skills/here'))).toBe(false);
		expect(await exists(join(project, '.claude/skills/here/SKILL.md'))).toBe(true);
		expect(JSON.parse((await hangar(['skill', 'info', 'here', '--json'], sub)).stdout)).toMatchObject({ installed_skill: { clients: ['claude-code'] } });

		const all = await hangar(['skill', 'rm', 'here'], sub);
		expect(all.code, all.stderr).toBe(0);
		expect(await exists(join(project, '.claude/skills/here'))).toBe(false);
		const gone = await hangar(['skill', 'info', 'here'], sub);
		expect(gone.code).toBe(1);
		expect(gone.stderr).toContain('skill here is not installed');
	});

	it('--project DIR names the project from anywhere, for install, ls, info, rm, sync and upgrade', async () => {
		const reference = `${registry.host}/skills/there:1`;
		await publishSkill(world.work, reference, 'there');
		const project = await createProject(world.work, 'named-project');
		const elsewhere = world.work;
		expect((await hangar(['skill', 'install', reference, '--project', project, '-c', 'cursor'], elsewhere)).code).toBe(0);
		expect(JSON.parse((await hangar(['skill', 'ls', '--project', project, '--json'], elsewhere)).stdout)).toHaveLength(1);
		expect((await hangar(['skill', 'info', 'there', '--project', project], elsewhere)).code).toBe(0);
		expect(JSON.parse((await hangar(['skill', 'sync', '--project', project, '--check', '--json'], elsewhere)).stdout)).toMatchObject({ already_current: ['there'] });
		expect(JSON.parse((await hangar(['skill', 'upgrade', '--project', project, '--preview', '--json'], elsewhere)).stdout)).toEqual([
			expect.objectContaining({ name: 'there', status: 'up-to-date' }),
		]);
		expect((await hangar(['skill', 'rm', 'there', '--project', project], elsewhere)).code).toBe(0);
		expect(await exists(join(project, '.cursor/skills/there'))).toBe(false);
	});

	it('rm -c of a client the skill is not installed for is a 404 that names the clients it is for', async () => {
		const reference = `${registry.host}/skills/solo:1`;
		await publishSkill(world.work, reference, 'solo');
		expect((await hangar(['skill', 'install', reference, '-c', 'cursor'], world.work)).code).toBe(0);
		const wrong = await hangar(['skill', 'rm', 'solo', '-c', 'claude-code'], world.work);
		expect(wrong.code).toBe(1);
		expect(wrong.stderr).toContain('skill solo is not installed for claude-code (it is for cursor)');
		expect(await exists(join(world.userHome, '.cursor/skills/solo/SKILL.md'))).toBe(true);
	});
});
