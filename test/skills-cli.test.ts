/**
 * One resolution rule for the skill commands, as a user in a terminal meets them: inside a
 * project, `skill info` and `skill rm` see the project skill that `skill ls` lists; every
 * command takes `--project [DIR]`; `skill rm -c CLIENT` removes one client's copy only.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo, git } from './support/git.js';
import { HANGAR_BIN, runEntry } from './support/processes.js';
import { startRegistry, type Registry } from './support/registry.js';
import { createProject, createSkillsWorld, exists, publishSkill, type SkillsWorld } from './support/skills-world.js';
import { skillMd } from './support/skills.js';

let world: SkillsWorld;
let registry: Registry;

beforeAll(async () => {
	[world, registry] = await Promise.all([createSkillsWorld(), startRegistry()]);
});

afterAll(async () => {
	await registry?.stop();
	await world?.dispose();
});

const hangar = (args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) => runEntry(HANGAR_BIN, args, { ...world.env, ...env }, { cwd });
/** The rows of a printed table, each split into its cells (columns are two spaces or more apart). */
const tableRows = (stdout: string) => stdout.trimEnd().split('\n').slice(1).map((line) => line.split(/ {2,}/));
/** The last line of the progress on stderr: the summary, "done" or "failed". */
const summaryOf = (stderr: string) => stderr.trimEnd().split('\n').at(-1);

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
		// Listed among every other scope's and project's skills (other tests install some), as its project's only one.
		const ofProject = (JSON.parse(listed.stdout) as Array<{ project_root?: string }>).filter((skill) => skill.project_root === project);
		expect(ofProject).toEqual([expect.objectContaining({ scope: 'project', metadata: expect.objectContaining({ name: 'here' }) })]);
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

describe('sync and upgrade say what happened, once', () => {
	it('sync prints one row per skill and client with its one outcome: a repaired skill is "updated", not "installed" and "drifted"', async () => {
		const reference = `${registry.host}/skills/rows:1`;
		await publishSkill(world.work, reference, 'rows');
		const project = await createProject(world.work, 'rows-project');
		expect((await hangar(['skill', 'install', reference, '--project', '-c', 'claude-code', '-c', 'cursor'], project)).code).toBe(0);
		await rm(join(project, '.cursor/skills/rows/SKILL.md'));

		const sync = await hangar(['skill', 'sync'], project);
		expect(sync.code, sync.stderr).toBe(0);
		expect(tableRows(sync.stdout).map((row) => row.slice(0, 3))).toEqual([
			['rows', 'claude-code', 'updated'],
			['rows', 'cursor', 'updated'],
		]);
		expect(await exists(join(project, '.cursor/skills/rows/SKILL.md'))).toBe(true);
		const again = await hangar(['skill', 'sync'], project);
		expect(tableRows(again.stdout).map((row) => row.slice(0, 3))).toEqual([
			['rows', 'claude-code', 'unchanged'],
			['rows', 'cursor', 'unchanged'],
		]);
	});

	it('upgrade --preview reports what would change and exits 0; a skill it cannot check exits 1 and the summary is "failed", never "done"', async () => {
		const development = { HANGAR_DEV: '1' };
		const repo = await createRepo(join(world.work, 'repos'), 'org', 'previewed', { 'skills/previewed/SKILL.md': skillMd('previewed') });
		const project = await createProject(world.work, 'preview-project');
		expect((await hangar(['skill', 'install', `git+file://${repo.bare}@main#skills/previewed`, '--project', '-c', 'cursor'], project, development)).code).toBe(0);
		const available = await repo.commit({ 'skills/previewed/SKILL.md': skillMd('previewed', { frontmatter: { version: '2' } }) });

		const preview = await hangar(['skill', 'upgrade', '--preview'], project, development);
		expect(preview.code, preview.stderr).toBe(0);
		expect(tableRows(preview.stdout)).toEqual([['previewed', 'would upgrade', expect.any(String), available.slice(0, 19), expect.any(String)]]);
		expect(summaryOf(preview.stderr)).toBe('done');

		await rename(repo.bare, `${repo.bare}.gone`);
		const unreachable = await hangar(['skill', 'upgrade', '--preview'], project, development);
		expect(unreachable.code).toBe(1);
		expect(tableRows(unreachable.stdout)).toEqual([['previewed', 'failed', expect.any(String), '-', expect.stringMatching(/^cannot check: /)]]);
		expect(summaryOf(unreachable.stderr)).toBe('failed');
	});

	it('a git+file:// skill installed with HANGAR_DEV=1 syncs and upgrades without it; a new local install, or a lock file pointing elsewhere, still needs it', async () => {
		const repo = await createRepo(join(world.work, 'repos'), 'org', 'local', { 'skills/loc/SKILL.md': skillMd('loc') });
		const project = await createProject(world.work, 'local-project');
		const installed = await hangar(['skill', 'install', `git+file://${repo.bare}@main#skills/loc`, '--project', '-c', 'cursor'], project, { HANGAR_DEV: '1' });
		expect(installed.code, installed.stderr).toBe(0);
		const moved = await repo.commit({ 'skills/loc/SKILL.md': skillMd('loc', { frontmatter: { version: '2' } }) });

		const preview = await hangar(['skill', 'upgrade', '--preview', '--json'], project);
		expect(preview.code, preview.stdout).toBe(0);
		expect(JSON.parse(preview.stdout)).toEqual([expect.objectContaining({ name: 'loc', status: 'upgraded', new_digest: moved })]);
		const upgrade = await hangar(['skill', 'upgrade'], project);
		expect(upgrade.code, upgrade.stdout).toBe(0);
		expect(await readFile(join(project, '.cursor/skills/loc/SKILL.md'), 'utf8')).toContain('version: 2');

		await rm(join(project, '.cursor/skills/loc/SKILL.md'));
		const sync = await hangar(['skill', 'sync'], project);
		expect(sync.code, sync.stdout).toBe(0);
		expect(tableRows(sync.stdout).map((row) => row.slice(0, 3))).toEqual([['loc', 'cursor', 'updated']]);
		expect((await hangar(['skill', 'info', 'loc'], project)).code).toBe(0);

		// A new install of a local repository is still development mode only.
		const other = await createRepo(join(world.work, 'repos'), 'org', 'other', { 'skills/loc/SKILL.md': skillMd('loc', { body: 'elsewhere\n' }) });
		const refused = await hangar(['skill', 'install', `git+file://${other.bare}@main#skills/loc`, '-c', 'cursor'], world.work);
		expect(refused.code).not.toBe(0);
		expect(refused.stderr).toContain('HANGAR_DEV=1');
		// The allowance is this machine's, for that repository: a lock file (the project's) cannot move it to another.
		const lockPath = join(project, 'hangar.lock.yaml');
		const lock = parse(await readFile(lockPath, 'utf8')) as { skills: Record<string, unknown>[] };
		lock.skills[0] = { ...lock.skills[0], resolvedReference: `git+file://${other.bare}@main#skills/loc`, digest: git(other.work, 'rev-parse', 'HEAD') };
		await writeFile(lockPath, stringify(lock));
		const elsewhere = await hangar(['skill', 'sync'], project);
		expect(elsewhere.code).toBe(1);
		expect(tableRows(elsewhere.stdout)).toEqual([['loc', 'cursor', 'failed', expect.stringContaining('HANGAR_DEV=1')]]);
		expect(await readFile(join(project, '.cursor/skills/loc/SKILL.md'), 'utf8')).not.toContain('elsewhere');
	});
});
