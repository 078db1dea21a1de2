/** Skill folders written by tests: a `SKILL.md` with the given frontmatter and other files. */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface SkillFixture {
	/** Frontmatter fields, written as YAML `key: value` lines (strings are written as given). */
	readonly frontmatter?: Record<string, string | string[]>;
	readonly body?: string;
	/** Other files: relative path → content. */
	readonly files?: Record<string, string | Buffer>;
}

export function skillMd(name: string, fixture: SkillFixture = {}): string {
	const fields = { name, description: `The ${name} skill, written by a test.`, ...fixture.frontmatter };
	const lines = Object.entries(fields).map(([key, value]) =>
		Array.isArray(value) ? `${key}:\n${value.map((item) => `  - ${item}`).join('\n')}` : `${key}: ${value}`,
	);
	return `---\n${lines.join('\n')}\n---\n${fixture.body ?? `# ${name}\n\nDo the ${name} thing.\n`}`;
}

/** Writes `<parent>/<name>/SKILL.md` and the fixture's files; returns the skill folder. */
export async function writeSkill(parent: string, name: string, fixture: SkillFixture = {}): Promise<string> {
	const folder = join(parent, name);
	await mkdir(folder, { recursive: true });
	await writeFile(join(folder, 'SKILL.md'), skillMd(name, fixture));
	for (const [path, content] of Object.entries(fixture.files ?? {})) {
		await mkdir(dirname(join(folder, path)), { recursive: true });
		await writeFile(join(folder, path), content);
	}
	return folder;
}
