/**
 * A lock file a fresh clone can act on: it records the clients each skill was installed for,
 * so `skill sync` on a machine where no client is detected yet installs for them; and a
 * project that has only ToolHive's `toolhive.lock.yaml` is synced from it (read, never changed).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstallSkill, ListSkills, SyncSkills } from '../protocol/index.js';
import { git } from './support/git.js';
import { runHangar, spawnDaemon, type DaemonProcess } from './support/processes.js';
import { startRegistry, type Registry } from './support/registry.js';
import { createProject, createSkillsWorld, exists, publishSkill, type SkillsWorld } from './support/skills-world.js';

let registry: Registry;
let alice: SkillsWorld;
let bob: SkillsWorld;
let aliceDaemon: DaemonProcess;

const oci = (name: string) => `${registry.host}/skills/${name}:1`;

beforeAll(async () => {
	registry = await startRegistry();
	[alice, bob] = await Promise.all([createSkillsWorld(), createSkillsWorld()]);
	aliceDaemon = spawnDaemon(alice.env);
	await aliceDaemon.client.initialize('alice');
}, 60_000);

afterAll(async () => {
	await aliceDaemon?.stop();
	await registry?.stop();
	await Promise.all([alice?.dispose(), bob?.dispose()]);
});

describe('the clients of each skill', () => {
	it('are recorded in the lock file, and a fresh clone with no client detected syncs for them', async () => {
		await publishSkill(alice.work, oci('for-claude'), 'for-claude');
		await publishSkill(alice.work, oci('for-two'), 'for-two');
		const project = await createProject(alice.work, 'shared');
		await aliceDaemon.client.request(InstallSkill, { name: oci('for-claude'), project_root: project, clients: ['claude-code'] });
		await aliceDaemon.client.request(InstallSkill, { name: oci('for-two'), project_root: project, clients: ['cursor', 'claude-code'] });
		const lock = parse(await readFile(join(project, 'hangar.lock.yaml'), 'utf8')) as { skills: { name: string; clients: string[] }[] };
		expect(lock.skills.map(({ name, clients }) => ({ name, clients }))).toEqual([
			{ name: 'for-claude', clients: ['claude-code'] },
			{ name: 'for-two', clients: ['claude-code', 'cursor'] },
		]);
		git(project, 'add', 'hangar.lock.yaml');
		git(project, 'commit', '-q', '-m', 'skills');

		const clone = join(bob.work, 'shared');
		git(bob.work, 'clone', '-q', project, clone);
		const result = await runHangar(['skill', 'sync', '--project', clone, '--json'], bob.env);
		expect(result.code, result.stderr).toBe(0);
		expect(JSON.parse(result.stdout)).toMatchObject({ installed: ['for-claude', 'for-two'], failed: [], missing: ['for-claude', 'for-two'] });
		expect(await exists(join(clone, '.claude/skills/for-claude/SKILL.md'))).toBe(true);
		expect(await exists(join(clone, '.cursor/skills/for-claude'))).toBe(false);
		expect(await exists(join(clone, '.cursor/skills/for-two/SKILL.md'))).toBe(true);
		expect(await exists(join(clone, '.claude/skills/for-two/SKILL.md'))).toBe(true);
	});
});

describe("ToolHive's lock file", () => {
	it('a project with only toolhive.lock.yaml is synced from it, and the file is left as ToolHive wrote it', async () => {
		const digest = await publishSkill(alice.work, oci('from-toolhive'), 'from-toolhive', { frontmatter: { version: '1.0.0' } });
		const project = await createProject(alice.work, 'toolhive-project');
		// As ToolHive writes it: its own content digest (another hash), provenance, plugins.
		const toolhive = stringify({
			version: 1,
			skills: [
				{
					name: 'from-toolhive',
					version: '1.0.0',
					source: oci('from-toolhive'),
					resolvedReference: oci('from-toolhive'),
					digest,
					contentDigest: 'h1:0NwXbJ1AJsbJ2LSRpAnWBDcZJi9XJ3XGRyJKu6sEM3M=',
					provenance: { signerIdentity: '', provisional: false },
					unsigned: true,
					explicit: true,
				},
			],
			plugins: [],
		});
		await writeFile(join(project, 'toolhive.lock.yaml'), toolhive);

		const first = await aliceDaemon.client.request(SyncSkills, { project_root: project, clients: ['cursor'] });
		expect(first).toMatchObject({ installed: ['from-toolhive'], failed: [] });
		expect(await exists(join(project, '.cursor/skills/from-toolhive/SKILL.md'))).toBe(true);
		const again = await aliceDaemon.client.request(SyncSkills, { project_root: project, check: true });
		expect(again).toMatchObject({ already_current: ['from-toolhive'], drifted: [], missing: [] });
		expect(await readFile(join(project, 'toolhive.lock.yaml'), 'utf8')).toBe(toolhive);
		expect((await aliceDaemon.client.request(ListSkills, { project_root: project })).skills.map((skill) => skill.metadata?.name)).toEqual(['from-toolhive']);
	});
});
