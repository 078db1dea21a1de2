/**
 * Skills ship scripts: a file committed as 100755 (or packed 0755) must land executable from
 * git and from OCI, in every client folder, never with setuid/setgid; and the lock file's
 * content digest covers the execute bit, so a sync repairs a script that lost it.
 */
import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstallSkill, SyncSkills } from '../protocol/index.js';
import { createRepo, git } from './support/git.js';
import { spawnDaemon, type DaemonProcess } from './support/processes.js';
import { startRegistry, type Registry } from './support/registry.js';
import { createProject, createSkillsWorld, type SkillsWorld } from './support/skills-world.js';
import { skillMd } from './support/skills.js';
import { RegistryClient } from '../server/oci/client.js';
import { SkillBuilds } from '../server/skills/builds.js';
import { resolvePaths } from '../server/store/paths.js';

let world: SkillsWorld;
let registry: Registry;
let daemon: DaemonProcess;

beforeAll(async () => {
	[world, registry] = await Promise.all([createSkillsWorld({ HANGAR_DEV: '1' }), startRegistry()]);
	daemon = spawnDaemon(world.env);
	await daemon.client.initialize('skills-scripts-test');
});

afterAll(async () => {
	await daemon?.stop();
	await registry?.stop();
	await world?.dispose();
});

const modeOf = async (path: string) => (await stat(path)).mode & 0o7777;

describe('execute bits', () => {
	it('a script committed as 100755 installs executable from git, for every client folder', async () => {
		const repo = await createRepo(join(world.work, 'repos'), 'org', 'scripted', { 'SKILL.md': skillMd('scripted'), 'notes.md': 'plain\n' });
		await mkdir(join(repo.work, 'scripts'), { recursive: true });
		await writeFile(join(repo.work, 'scripts/run.sh'), '#!/bin/sh\necho run\n');
		git(repo.work, 'add', 'scripts/run.sh');
		git(repo.work, 'update-index', '--chmod=+x', 'scripts/run.sh');
		git(repo.work, 'commit', '-q', '-m', 'a script');
		git(repo.work, 'push', '-q', 'origin', 'HEAD');

		await daemon.client.request(InstallSkill, { name: `git+file://${repo.bare}`, clients: ['claude-code', 'cursor'] });
		for (const folder of ['.claude/skills/scripted', '.cursor/skills/scripted']) {
			expect(await modeOf(join(world.userHome, folder, 'scripts/run.sh')), folder).toBe(0o755);
			expect(await modeOf(join(world.userHome, folder, 'notes.md')), folder).toBe(0o644);
		}
	});

	it('a 0755 script built and pushed installs executable from OCI; setuid bits of the source never travel', async () => {
		const source = join(world.work, 'oci-src', 'packed');
		await mkdir(join(source, 'bin'), { recursive: true });
		await writeFile(join(source, 'SKILL.md'), skillMd('packed'));
		await writeFile(join(source, 'bin/tool'), '#!/bin/sh\necho tool\n');
		await chmod(join(source, 'bin/tool'), 0o4755);
		const reference = `${registry.host}/skills/packed:1`;
		const builds = new SkillBuilds(resolvePaths({ HANGAR_HOME: join(world.work, 'builder') }), {});
		await builds.build(source, reference);
		await builds.push(new RegistryClient({ env: { DOCKER_CONFIG: world.work } }), reference, new AbortController().signal);

		await daemon.client.request(InstallSkill, { name: reference, clients: ['claude-code', 'cursor'] });
		for (const folder of ['.claude/skills/packed', '.cursor/skills/packed']) {
			expect(await modeOf(join(world.userHome, folder, 'bin/tool')), folder).toBe(0o755);
			expect(await modeOf(join(world.userHome, folder, 'SKILL.md')), folder).toBe(0o644);
		}
	});

	it('the lock file pins the execute bit: a script that lost it is drifted, and sync makes it executable again', async () => {
		const project = await createProject(world.work, 'scripts-project');
		const source = join(world.work, 'oci-src', 'pinned');
		await mkdir(source, { recursive: true });
		await writeFile(join(source, 'SKILL.md'), skillMd('pinned'));
		await writeFile(join(source, 'go.sh'), '#!/bin/sh\n');
		await chmod(join(source, 'go.sh'), 0o755);
		const reference = `${registry.host}/skills/pinned:1`;
		const builds = new SkillBuilds(resolvePaths({ HANGAR_HOME: join(world.work, 'builder') }), {});
		await builds.build(source, reference);
		await builds.push(new RegistryClient({ env: { DOCKER_CONFIG: world.work } }), reference, new AbortController().signal);
		await daemon.client.request(InstallSkill, { name: reference, project_root: project, clients: ['claude-code'] });

		const script = join(project, '.claude/skills/pinned/go.sh');
		expect(await modeOf(script)).toBe(0o755);
		await chmod(script, 0o644);
		expect(await daemon.client.request(SyncSkills, { project_root: project, check: true })).toMatchObject({ drifted: ['pinned'] });
		expect(await daemon.client.request(SyncSkills, { project_root: project })).toMatchObject({ installed: ['pinned'], failed: [] });
		expect(await modeOf(script)).toBe(0o755);
	});
});
