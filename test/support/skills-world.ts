/**
 * What skills tests share: a throwaway Hangar home plus a throwaway user home (`HOME`, where
 * clients keep their skills folders), empty Docker credentials, and a way to publish skill
 * fixtures to a real registry the way `hangar skill build` + `push` do.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { RegistryClient } from '../../server/oci/client.js';
import { SkillBuilds } from '../../server/skills/builds.js';
import { resolvePaths } from '../../server/store/paths.js';
import { createTestHome, type TestHome } from './home.js';
import { git } from './git.js';
import { writeSkill, type SkillFixture } from './skills.js';

export interface SkillsWorld extends TestHome {
	/** `HOME` of the spawned processes. */
	readonly userHome: string;
	/** Scratch space for fixtures and projects. */
	readonly work: string;
}

export async function createSkillsWorld(extraEnv: NodeJS.ProcessEnv = {}): Promise<SkillsWorld> {
	const base = await createTestHome('hangar-skills-');
	const userHome = join(base.path, 'home');
	const work = join(base.path, 'work');
	const docker = join(base.path, 'docker');
	await Promise.all([mkdir(userHome), mkdir(work), mkdir(docker)]);
	return {
		...base,
		userHome,
		work,
		env: { ...base.env, HANGAR_HOME: join(base.path, 'hangar'), HOME: userHome, DOCKER_CONFIG: docker, ...extraEnv },
	};
}

/** Builds a skill fixture and pushes it to `reference`; returns the pushed index digest. */
export async function publishSkill(work: string, reference: string, name: string, fixture: SkillFixture = {}, env: NodeJS.ProcessEnv = {}): Promise<string> {
	const scratch = await mkdtemp(join(work, 'publish-'));
	try {
		const folder = await writeSkill(join(scratch, 'src'), name, fixture);
		const builds = new SkillBuilds(resolvePaths({ HANGAR_HOME: join(scratch, 'hangar') }), env);
		await builds.build(folder, reference);
		await builds.push(new RegistryClient({ env: { ...env, DOCKER_CONFIG: scratch } }), reference, new AbortController().signal);
		return (await builds.find(reference))!.descriptor.digest;
	} finally {
		await rm(scratch, { recursive: true, force: true });
	}
}

/** Every file under a folder with its content, by relative path; {} when the folder is absent. */
export async function snapshot(folder: string): Promise<Record<string, string>> {
	const result: Record<string, string> = {};
	const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
	for (const entry of entries) {
		if (entry.isDirectory()) continue;
		const absolute = join(entry.parentPath, entry.name);
		result[relative(folder, absolute)] = await readFile(absolute, 'utf8');
	}
	return result;
}

export async function exists(path: string): Promise<boolean> {
	return stat(path).then(
		() => true,
		() => false,
	);
}

/** A git work tree to use as a project root. */
export async function createProject(work: string, name: string): Promise<string> {
	const root = join(work, name);
	await mkdir(root, { recursive: true });
	git(root, 'init', '-q', '-b', 'main');
	return root;
}
