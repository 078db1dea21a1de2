/**
 * The project lock file end to end: skills installed in one project (OCI, git, a dependency)
 * are reproduced exactly in a fresh clone on "another machine" by `skills/sync` — at the
 * pinned digests even after their tags moved — then drift is found and repaired, and
 * `skills/upgrade` reports and applies what moved upstream.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HangarError, InstallSkill, ListSkills, SyncSkills, UpgradeSkills } from '../protocol/index.js';
import { createRepo, git, type GitRepo } from './support/git.js';
import { runHangar, spawnDaemon, type DaemonProcess } from './support/processes.js';
import { startRegistry, type Registry } from './support/registry.js';
import { createSkillsWorld, exists, publishSkill, snapshot, type SkillsWorld } from './support/skills-world.js';
import { skillMd } from './support/skills.js';

let registry: Registry;
let alice: SkillsWorld;
let bob: SkillsWorld;
let aliceDaemon: DaemonProcess;
let bobDaemon: DaemonProcess;
let skillsRepo: GitRepo;
let project: string;
let remote: string;
/** A clone Bob synced once, which tests only read (sync again, preview). */
let synced: string;
const digests: Record<string, string> = {};
const BOTH = ['claude-code', 'cursor'] as const;

const oci = (name: string, tag: string) => `${registry.host}/skills/${name}:${tag}`;

/**
 * The world every test starts from: Alice installed the v1 set in her project, committed and
 * pushed its lock file; then upstream moved on (the tag points to v2, the git branch has a new
 * commit). Tests that change a project work on their own clone of Alice's.
 */
beforeAll(async () => {
	registry = await startRegistry();
	[alice, bob] = await Promise.all([createSkillsWorld({ HANGAR_DEV: '1' }), createSkillsWorld({ HANGAR_DEV: '1' })]);
	digests.stableV1 = await publishSkill(alice.work, oci('locked', 'stable'), 'locked', { frontmatter: { version: '1.0.0' }, files: { 'guide.md': 'v1\n' } });
	digests.helper = await publishSkill(alice.work, oci('helper', '1'), 'helper');
	await publishSkill(alice.work, oci('with-helper', '1'), 'with-helper', { frontmatter: { 'toolhive.requires': oci('helper', '1') } });
	skillsRepo = await createRepo(join(alice.work, 'repos'), 'org', 'skills', { 'skills/from-git/SKILL.md': skillMd('from-git', { frontmatter: { version: '1' } }) });
	digests.fromGitV1 = git(skillsRepo.work, 'rev-parse', 'HEAD');

	remote = join(alice.work, 'project-remote.git');
	project = join(alice.work, 'project');
	await mkdir(project);
	git(alice.work, 'init', '-q', '--bare', '-b', 'main', remote);
	git(project, 'init', '-q', '-b', 'main');
	git(project, 'remote', 'add', 'origin', remote);

	aliceDaemon = spawnDaemon(alice.env);
	bobDaemon = spawnDaemon(bob.env);
	await Promise.all([aliceDaemon.client.initialize('alice'), bobDaemon.client.initialize('bob')]);

	for (const name of [oci('locked', 'stable'), oci('with-helper', '1'), `git+file://${skillsRepo.bare}@main#skills/from-git`]) {
		await aliceDaemon.client.request(InstallSkill, { name, project_root: project, clients: ['claude-code'] });
	}
	git(project, 'add', 'hangar.lock.yaml');
	git(project, 'commit', '-q', '-m', 'skills');
	git(project, 'push', '-q', 'origin', 'main');

	await publishSkill(alice.work, oci('locked', 'stable'), 'locked', { frontmatter: { version: '2.0.0' }, files: { 'guide.md': 'v2\n' } });
	await skillsRepo.commit({ 'skills/from-git/SKILL.md': skillMd('from-git', { frontmatter: { version: '2' } }) });
	synced = await syncedClone('synced');
}, 60_000);

afterAll(async () => {
	await Promise.all([aliceDaemon?.stop(), bobDaemon?.stop()]);
	await registry?.stop();
	await Promise.all([alice?.dispose(), bob?.dispose()]);
});

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as HangarError);
const lockOf = async (root: string) => parse(await readFile(join(root, 'hangar.lock.yaml'), 'utf8')) as { version: number; skills: Record<string, unknown>[] };

/** A fresh clone of Alice's pushed project on Bob's machine, under its own name. */
function cloneOnBob(name: string): string {
	const root = join(bob.work, name);
	git(bob.work, 'clone', '-q', remote, root);
	return root;
}

/** A fresh clone that Bob synced for both clients. */
async function syncedClone(name: string): Promise<string> {
	const root = cloneOnBob(name);
	await bobDaemon.client.request(SyncSkills, { project_root: root, clients: [...BOTH] });
	return root;
}

describe('one machine writes the lock file', () => {
	it('project installs record source, resolved reference, pin, content digest and dependencies', async () => {
		const lock = await lockOf(project);
		expect(lock.version).toBe(1);
		expect(lock.skills.map((entry) => entry.name)).toEqual(['from-git', 'helper', 'locked', 'with-helper']);
		expect(lock.skills.find((entry) => entry.name === 'locked')).toEqual({
			name: 'locked',
			version: '1.0.0',
			source: oci('locked', 'stable'),
			resolvedReference: oci('locked', 'stable'),
			digest: digests.stableV1,
			contentDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
			explicit: true,
			unsigned: true,
			clients: ['claude-code'],
		});
		expect(lock.skills.find((entry) => entry.name === 'helper')).toMatchObject({ explicit: false, requiredBy: ['with-helper'], digest: digests.helper });
		expect(lock.skills.find((entry) => entry.name === 'from-git')).toMatchObject({ digest: digests.fromGitV1 });
	});
});

describe('another machine syncs a fresh clone', () => {
	it('reproduces exactly the locked set, at the pins, even after the sources moved', async () => {
		const clone = cloneOnBob('fresh');
		const result = await bobDaemon.client.request(SyncSkills, { project_root: clone, clients: [...BOTH] });
		expect(result.installed?.sort()).toEqual(['from-git', 'helper', 'locked', 'with-helper']);
		expect(result.failed).toEqual([]);
		for (const name of ['locked', 'from-git', 'helper', 'with-helper']) {
			const mine = await snapshot(join(project, '.claude/skills', name));
			expect(await snapshot(join(clone, '.claude/skills', name)), name).toEqual(mine);
			expect(await snapshot(join(clone, '.cursor/skills', name)), name).toEqual(mine);
		}
		expect(await readFile(join(clone, '.claude/skills/locked/guide.md'), 'utf8')).toBe('v1\n');
		const { skills } = await bobDaemon.client.request(ListSkills, { project_root: clone });
		expect(skills.find((skill) => skill.metadata?.name === 'locked')).toMatchObject({ digest: digests.stableV1, reference: oci('locked', 'stable'), managed: true });
		// The lock file is unchanged by a sync.
		expect(git(clone, 'status', '--porcelain', 'hangar.lock.yaml')).toBe('');
	});

	it('a second sync finds everything current', async () => {
		const result = await bobDaemon.client.request(SyncSkills, { project_root: synced });
		expect(result.already_current?.sort()).toEqual(['from-git', 'helper', 'locked', 'with-helper']);
		expect(result.installed).toEqual([]);
	});

	it('check reports drift and missing skills without touching them; sync repairs them', async () => {
		const clone = await syncedClone('drifted');
		await writeFile(join(clone, '.cursor/skills/locked/guide.md'), 'edited by hand\n');
		await rm(join(clone, '.claude/skills/helper'), { recursive: true });
		await mkdir(join(clone, '.claude/skills/handmade'), { recursive: true });
		const checked = await bobDaemon.client.request(SyncSkills, { project_root: clone, check: true });
		expect(checked).toMatchObject({ drifted: ['helper', 'locked'], installed: [], never_managed: ['handmade'] });
		expect(await readFile(join(clone, '.cursor/skills/locked/guide.md'), 'utf8')).toBe('edited by hand\n');

		const cli = await runHangar(['skill', 'sync', '--check', '--project-root', clone], bob.env);
		expect(cli.code).toBe(2);
		expect(cli.stdout).toMatch(/^helper +\S+ +drifted /m);
		expect(cli.stdout).toMatch(/^locked +\S+ +drifted /m);
		expect(cli.stdout).toMatch(/^handmade +- +unmanaged /m);

		const repaired = await bobDaemon.client.request(SyncSkills, { project_root: clone });
		expect(repaired.installed?.sort()).toEqual(['helper', 'locked']);
		expect(await readFile(join(clone, '.cursor/skills/locked/guide.md'), 'utf8')).toBe('v1\n');
		expect(await exists(join(clone, '.claude/skills/helper/SKILL.md'))).toBe(true);
		expect(await exists(join(clone, '.claude/skills/handmade'))).toBe(true);
	});
});

describe('upgrade', () => {
	it('preview reports what moved upstream and changes nothing', async () => {
		const { outcomes } = await bobDaemon.client.request(UpgradeSkills, { project_root: synced, preview: true });
		const byName = Object.fromEntries((outcomes ?? []).map((outcome) => [outcome.name, outcome]));
		expect(byName.locked).toMatchObject({ status: 'upgraded', old_digest: digests.stableV1, new_digest: expect.not.stringMatching(digests.stableV1!) });
		expect(byName['from-git']).toMatchObject({ status: 'upgraded', new_digest: git(skillsRepo.work, 'rev-parse', 'HEAD') });
		expect(byName.helper).toMatchObject({ status: 'up-to-date' });
		expect(await readFile(join(synced, '.claude/skills/locked/guide.md'), 'utf8')).toBe('v1\n');
		expect((await lockOf(synced)).skills.find((entry) => entry.name === 'locked')).toMatchObject({ digest: digests.stableV1 });

		const gate = await runHangar(['skill', 'upgrade', '--fail-on-changes', '--project-root', synced], bob.env);
		expect(gate.code).toBe(2);
	});

	it('applies the upgrade: new files, new pins in the lock file', async () => {
		const clone = await syncedClone('upgraded');
		const { outcomes } = await bobDaemon.client.request(UpgradeSkills, { project_root: clone, names: ['locked'], clients: [...BOTH] });
		expect(outcomes).toEqual([expect.objectContaining({ name: 'locked', status: 'upgraded' })]);
		expect(await readFile(join(clone, '.claude/skills/locked/guide.md'), 'utf8')).toBe('v2\n');
		const entry = (await lockOf(clone)).skills.find((skill) => skill.name === 'locked');
		expect(entry).toMatchObject({ version: '2.0.0', digest: outcomes![0]!.new_digest, source: oci('locked', 'stable') });
	});

	it('a source pinned by digest is not upgradable; unknown names and a missing lock file are 404', async () => {
		const pinnedProject = join(bob.work, 'pinned');
		await mkdir(pinnedProject);
		git(pinnedProject, 'init', '-q');
		await bobDaemon.client.request(InstallSkill, { name: `${registry.host}/skills/helper@${digests.helper}`, project_root: pinnedProject, clients: ['cursor'] });
		const { outcomes } = await bobDaemon.client.request(UpgradeSkills, { project_root: pinnedProject });
		expect(outcomes).toEqual([expect.objectContaining({ name: 'helper', status: 'not-upgradable' })]);
		expect(await failure(bobDaemon.client.request(UpgradeSkills, { project_root: pinnedProject, names: ['nope'] }))).toMatchObject({ status: 404 });
		const empty = join(bob.work, 'empty-project');
		await mkdir(empty);
		git(empty, 'init', '-q');
		expect(await failure(bobDaemon.client.request(UpgradeSkills, { project_root: empty }))).toMatchObject({ status: 404 });
		expect(await failure(bobDaemon.client.request(SyncSkills, { project_root: join(bob.work, 'missing') }))).toMatchObject({ status: 400 });
	});
});

describe('skills that left the lock file', () => {
	it('are reported, then pruned on request', async () => {
		const clone = await syncedClone('pruned');
		const lockFile = join(clone, 'hangar.lock.yaml');
		const lock = await lockOf(clone);
		const { stringify } = await import('yaml');
		await writeFile(lockFile, stringify({ ...lock, skills: lock.skills.filter((entry) => entry.name !== 'from-git') }));
		const reported = await bobDaemon.client.request(SyncSkills, { project_root: clone });
		expect(reported.removed_from_lock).toEqual(['from-git']);
		expect(await exists(join(clone, '.claude/skills/from-git'))).toBe(true);
		const pruned = await bobDaemon.client.request(SyncSkills, { project_root: clone, prune: true });
		expect(pruned.pruned).toEqual(['from-git']);
		expect(await exists(join(clone, '.claude/skills/from-git'))).toBe(false);
		expect(await exists(join(clone, '.cursor/skills/from-git'))).toBe(false);
	});

	it('a damaged lock file is a 400 naming the problem', async () => {
		const clone = cloneOnBob('damaged');
		await writeFile(join(clone, 'hangar.lock.yaml'), 'version: 1\nskills:\n  - name: x\n');
		const error = await failure(bobDaemon.client.request(SyncSkills, { project_root: clone }));
		expect(error).toMatchObject({ status: 400, code: 'invalid_lock_file', message: expect.stringContaining('skills.0.source') });
	});
});
