/**
 * A cloned repository is hostile input: it may ship a client's skills folder, a folder above
 * it, or the lock file as a symlink leading out of the project. Every write of a project skill
 * (install, sync with force and repair, upgrade, uninstall, the lock file) must refuse with 400
 * naming the link, and leave what is outside untouched. Links that stay inside are fine.
 */
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HangarError, InstallSkill, SyncSkills, UninstallSkill, UpgradeSkills } from '../protocol/index.js';
import { runHangar, spawnDaemon, startServe, type DaemonProcess, type ServeProcess } from './support/processes.js';
import { startRegistry, type Registry } from './support/registry.js';
import { callRest } from './support/rest.js';
import { createProject, createSkillsWorld, exists, publishSkill, snapshot, type SkillsWorld } from './support/skills-world.js';

let world: SkillsWorld;
let registry: Registry;
let daemon: DaemonProcess;
let serve: ServeProcess;

beforeAll(async () => {
	[world, registry] = await Promise.all([createSkillsWorld(), startRegistry()]);
	daemon = spawnDaemon(world.env);
	await daemon.client.initialize('skills-confine-test');
	serve = await startServe(world.env);
});

afterAll(async () => {
	await Promise.all([daemon?.stop(), serve?.stop()]);
	await registry?.stop();
	await world?.dispose();
});

const ref = (name: string, tag = '1') => `${registry.host}/skills/${name}:${tag}`;
const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as HangarError);
const outsideTheProject = (link: string) => ({ status: 400, code: 'outside_project', message: expect.stringContaining(`${link} is a symlink to`) });

/** A folder of the user's, outside every project, with a file the attack would destroy. */
async function victimFolder(parent: string, name: string): Promise<string> {
	const folder = join(parent, name);
	await mkdir(folder, { recursive: true });
	await writeFile(join(folder, 'precious.txt'), 'the user\'s own file\n');
	return folder;
}

/** A cloned project with a committed lock file naming `entries`. */
async function projectWithLock(name: string, entries: { name: string; reference: string; digest: string }[]): Promise<string> {
	const project = await createProject(world.work, name);
	const skills = entries.map((entry) => ({ name: entry.name, source: entry.reference, resolvedReference: entry.reference, digest: entry.digest, contentDigest: '', explicit: true }));
	const { stringify } = await import('yaml');
	await writeFile(join(project, 'hangar.lock.yaml'), stringify({ version: 1, skills }));
	return project;
}

describe('a skills folder linked out of the project', () => {
	it('sync (force and repair) refuses a .claude/skills linked to ../.. and leaves the folder outside alone', async () => {
		const digest = await publishSkill(world.work, ref('victim'), 'victim');
		const parent = join(world.work, 'outer');
		const victim = await victimFolder(parent, 'victim');
		const project = await projectWithLock('outer/attacked', [{ name: 'victim', reference: ref('victim'), digest }]);
		await mkdir(join(project, '.claude'));
		await symlink('../..', join(project, '.claude/skills'));

		const error = await failure(daemon.client.request(SyncSkills, { project_root: project, clients: ['claude-code'] }));
		expect(error).toMatchObject(outsideTheProject(join(project, '.claude/skills')));
		expect(await snapshot(victim)).toEqual({ 'precious.txt': 'the user\'s own file\n' });
		expect(await exists(join(parent, '.hangar'))).toBe(false);

		const rest = await callRest(serve.url, SyncSkills, { project_root: project, clients: ['claude-code'] });
		expect(rest).toMatchObject({ status: 400, body: { code: 'outside_project' } });
		expect(await snapshot(victim)).toEqual({ 'precious.txt': 'the user\'s own file\n' });
	});

	it('install --project refuses an .agents/skills linked into ~/.config, so a skill named git cannot plant ~/.config/git/config', async () => {
		await publishSkill(world.work, ref('git'), 'git', { files: { config: '[core]\n\tfsmonitor = "touch /tmp/pwned"\n' } });
		const config = join(world.userHome, '.config');
		await mkdir(config, { recursive: true });
		const project = await createProject(world.work, 'config-attack');
		await mkdir(join(project, '.agents'));
		await symlink(config, join(project, '.agents/skills'));

		const cli = await runHangar(['skill', 'install', ref('git'), '--project', project, '--client', 'amp-cli', '--force'], { ...world.env });
		expect(cli.code).toBe(2);
		expect(cli.stderr).toContain(`${join(project, '.agents/skills')} is a symlink to ${config}, outside the project`);
		const error = await failure(daemon.client.request(InstallSkill, { name: ref('git'), project_root: project, clients: ['amp-cli'], force: true }));
		expect(error).toMatchObject(outsideTheProject(join(project, '.agents/skills')));
		expect(await exists(join(config, 'git'))).toBe(false);
		expect(await exists(join(config, '.hangar'))).toBe(false);
	});

	it('a link further up (.claude itself) is refused the same way', async () => {
		await publishSkill(world.work, ref('upper'), 'upper');
		const elsewhere = join(world.work, 'elsewhere');
		await victimFolder(join(elsewhere, 'skills'), 'upper');
		const project = await createProject(world.work, 'upper-link');
		await symlink(elsewhere, join(project, '.claude'));
		const error = await failure(daemon.client.request(InstallSkill, { name: ref('upper'), project_root: project, clients: ['claude-code'], force: true }));
		expect(error).toMatchObject(outsideTheProject(join(project, '.claude')));
		expect(await snapshot(join(elsewhere, 'skills/upper'))).toEqual({ 'precious.txt': 'the user\'s own file\n' });
	});

	it('uninstall and upgrade refuse once a pulled commit turned the folder into a link, and delete nothing outside', async () => {
		await publishSkill(world.work, ref('pulled'), 'pulled');
		const project = await createProject(world.work, 'pulled-later');
		await daemon.client.request(InstallSkill, { name: ref('pulled'), project_root: project, clients: ['claude-code'] });
		// The next `git pull` replaces the folder with a link to a folder of the user's of the same shape.
		const mine = join(world.work, 'mine');
		await victimFolder(mine, 'pulled');
		await writeFile(join(mine, 'pulled', 'SKILL.md'), 'the user\'s own skill\n');
		await rm(join(project, '.claude/skills'), { recursive: true });
		await symlink(mine, join(project, '.claude/skills'));

		const removal = await failure(daemon.client.request(UninstallSkill, { name: 'pulled', project_root: project }));
		expect(removal).toMatchObject(outsideTheProject(join(project, '.claude/skills')));
		await publishSkill(world.work, ref('pulled'), 'pulled', { body: 'moved on\n' });
		const upgrade = await failure(daemon.client.request(UpgradeSkills, { project_root: project, clients: ['claude-code'] }));
		expect(upgrade).toMatchObject(outsideTheProject(join(project, '.claude/skills')));
		expect(await snapshot(join(mine, 'pulled'))).toEqual({ 'precious.txt': 'the user\'s own file\n', 'SKILL.md': 'the user\'s own skill\n' });
	});

	it('a lock file linked out of the project is neither read nor written', async () => {
		await publishSkill(world.work, ref('locked'), 'locked');
		const project = await createProject(world.work, 'lock-link');
		const profile = join(world.userHome, '.profile');
		await writeFile(profile, 'export SECRET_THING=1\n');
		await symlink(profile, join(project, 'hangar.lock.yaml'));
		const error = await failure(daemon.client.request(InstallSkill, { name: ref('locked'), project_root: project, clients: ['claude-code'] }));
		expect(error).toMatchObject(outsideTheProject(join(project, 'hangar.lock.yaml')));
		expect(error?.message).not.toContain('SECRET_THING');
		expect(await readFile(profile, 'utf8')).toBe('export SECRET_THING=1\n');
		expect(await exists(join(project, '.claude/skills/locked'))).toBe(false);
	});
});

describe('links that stay inside the project', () => {
	it('install follows a skills folder linked to another folder of the same project', async () => {
		await publishSkill(world.work, ref('shared'), 'shared');
		const project = await createProject(world.work, 'inner-link');
		await mkdir(join(project, 'agent-skills'));
		await mkdir(join(project, '.claude'));
		await symlink('../agent-skills', join(project, '.claude/skills'));
		await daemon.client.request(InstallSkill, { name: ref('shared'), project_root: project, clients: ['claude-code'] });
		expect(await exists(join(project, 'agent-skills/shared/SKILL.md'))).toBe(true);
		await daemon.client.request(UninstallSkill, { name: 'shared', project_root: project });
		expect(await exists(join(project, 'agent-skills/shared'))).toBe(false);
	});
});
