/**
 * A skill published to a real OCI registry the way its author would: written to a folder,
 * then `hangar skill build` and `hangar skill push` by a Hangar of its own (its own HANGAR_HOME).
 */
import { join } from 'node:path';
import { runHangar } from './processes.js';
import type { Registry } from './registry.js';
import { writeSkill, type SkillFixture } from './skills.js';

/** Publishes `<registry>/skills/<name>:<version>` and returns that reference. */
export async function publishSkill(registry: Registry, workDir: string, name: string, fixture: SkillFixture = {}, version = '1.0.0'): Promise<string> {
	const reference = `${registry.host}/skills/${name}:${version}`;
	const env = { ...process.env, HANGAR_HOME: join(workDir, 'publisher'), HANGAR_LOG: 'warn' };
	const folder = await writeSkill(join(workDir, 'published'), name, fixture);
	for (const args of [['skill', 'build', folder, '--tag', reference], ['skill', 'push', reference, '--no-sign']]) {
		const result = await runHangar(args, env);
		if (result.code !== 0) throw new Error(`hangar ${args.join(' ')} failed: ${result.stderr}`);
	}
	return reference;
}
