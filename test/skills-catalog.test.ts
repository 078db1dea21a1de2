/**
 * Installs by registry name, through the `SkillCatalog` port the registries service fills.
 * The catalog here is a stand-in answering from a list of entries in the registry's skill
 * format (the registries tests cover the real lookup); the packages it names are real: an OCI
 * artifact in a CNCF distribution registry and a folder of a git repository over smart HTTP.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HangarError, RegistrySkill } from '../protocol/index.js';
import { contextFor } from '../server/context.js';
import { createEnvironment } from '../server/environment.js';
import { GroupStore } from '../server/groups/store.js';
import { SkillService, type SkillCatalog } from '../server/skills/service.js';
import { createRepo, startGitServer, type GitServer } from './support/git.js';
import { startRegistry, type Registry } from './support/registry.js';
import { createSkillsWorld, publishSkill, snapshot, type SkillsWorld } from './support/skills-world.js';
import { skillMd } from './support/skills.js';

let world: SkillsWorld;
let registry: Registry;
let gitServer: GitServer;
let skills: SkillService;
let listed: RegistrySkill[];
let v1: string;
const lookups: string[] = [];
const context = () => contextFor(new AbortController().signal);

beforeAll(async () => {
	[world, registry] = await Promise.all([createSkillsWorld({ HANGAR_DEV: '1' }), startRegistry()]);
	v1 = await publishSkill(world.work, `${registry.host}/catalog/catalogued:1`, 'catalogued', { frontmatter: { version: '1.0.0' } });
	await publishSkill(world.work, `${registry.host}/catalog/catalogued:2`, 'catalogued', { frontmatter: { version: '2.0.0' } });
	await publishSkill(world.work, `${registry.host}/catalog/versioned:3.1`, 'versioned', { frontmatter: { version: '3.1' } });
	const repos = join(world.work, 'repos');
	const repo = await createRepo(repos, 'org', 'skills', { 'skills/git-listed/SKILL.md': skillMd('git-listed') });
	repo.tag('v1');
	gitServer = await startGitServer(repos);
	listed = [
		{ namespace: 'io.github.org', name: 'catalogued', packages: [{ registryType: 'oci', identifier: `${registry.host}/catalog/catalogued:1`, digest: v1 }] },
		{ namespace: 'io.github.org', name: 'versioned', packages: [{ registryType: 'oci', identifier: `${registry.host}/catalog/versioned` }] },
		{ namespace: 'io.github.org', name: 'git-listed', packages: [{ registryType: 'git', url: `http://${gitServer.host}/org/skills`, ref: 'v1', subfolder: 'skills/git-listed' }] },
		{ namespace: 'io.github.org', name: 'no-package', packages: [] },
	];
	const catalog: SkillCatalog = {
		findSkill: async (name) => {
			lookups.push(name);
			const [namespace, short] = name.includes('/') ? name.split('/') : [undefined, name];
			return listed.find((skill) => skill.name === short && (!namespace || skill.namespace === namespace));
		},
	};
	const environment = createEnvironment('catalog-test', world.env);
	skills = new SkillService(environment, new GroupStore(environment.paths), catalog, { env: world.env });
}, 60_000);

afterAll(async () => {
	await gitServer?.stop();
	await registry?.stop();
	await world?.dispose();
});

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as HangarError);

describe('install by registry name', () => {
	it('a name resolves to its OCI package, pinned by the digest the registry lists', async () => {
		const { skill } = await skills.install({ name: 'catalogued', clients: ['claude-code'] }, context());
		// The tag moved on to 2.0.0 since; the listed digest still installs 1.0.0.
		expect(skill).toMatchObject({ reference: `${registry.host}/catalog/catalogued:1`, digest: v1, metadata: { version: '1.0.0' } });
		expect(lookups).toContain('catalogued');
		expect(Object.keys(await snapshot(join(world.userHome, '.claude/skills/catalogued')))).toEqual(['SKILL.md']);
	});

	it('namespace/name is looked up in the catalog before being taken for an OCI repository', async () => {
		const { skill } = await skills.install({ name: 'io.github.org/git-listed', clients: ['cursor'] }, context());
		expect(skill).toMatchObject({ reference: `git://${gitServer.host}/org/skills@v1#skills/git-listed`, tag: 'v1' });
		expect(skill.digest).toMatch(/^[0-9a-f]{40}$/);
	});

	it('a version picks the tag of a package listed without one', async () => {
		const { skill } = await skills.install({ name: 'versioned', version: '3.1', clients: ['cursor'] }, context());
		expect(skill).toMatchObject({ reference: `${registry.host}/catalog/versioned:3.1`, metadata: { version: '3.1' } });
	});

	it('an entry without an installable package is a 422; an unknown name a 404', async () => {
		expect(await failure(skills.install({ name: 'no-package', clients: ['cursor'] }, context()))).toMatchObject({ status: 422, code: 'no_package' });
		expect(await failure(skills.install({ name: 'not-listed', clients: ['cursor'] }, context()))).toMatchObject({ status: 404, code: 'skill_not_found' });
	});
});
