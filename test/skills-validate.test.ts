/**
 * `skills/validate` over a real daemon and a real `hangar serve`: folders on disk and inline
 * definitions, every rule of the Agent Skills format as ToolHive applies it, and the line
 * between an invalid skill (200, `valid: false`) and a bad request (400).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HangarError, ValidateSkill } from '../protocol/index.js';
import { createTestHome, type TestHome } from './support/home.js';
import { spawnDaemon, startServe, type DaemonProcess, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';
import { skillMd, writeSkill } from './support/skills.js';

let home: TestHome;
let daemon: DaemonProcess;
let serve: ServeProcess;
let work: string;

beforeAll(async () => {
	home = await createTestHome();
	work = await mkdtemp(join(tmpdir(), 'hangar-validate-'));
	daemon = spawnDaemon(home.env);
	await daemon.client.initialize('validate-test');
	serve = await startServe(home.env);
});

afterAll(async () => {
	await Promise.all([daemon?.stop(), serve?.stop()]);
	await rm(work, { recursive: true, force: true });
	await home?.dispose();
});

const validate = (params: Parameters<typeof daemon.client.request<typeof ValidateSkill>>[1]) =>
	daemon.client.request(ValidateSkill, params);

/** Writes `<work>/<case>/<name>/SKILL.md` with `text` and validates the folder. */
async function validateText(name: string, text: string) {
	const folder = join(await mkdtemp(join(work, 'case-')), name);
	await mkdir(folder);
	await writeFile(join(folder, 'SKILL.md'), text);
	return validate({ path: folder });
}

describe('a skill folder', () => {
	it('a well-formed skill is valid, with no errors', async () => {
		const folder = await writeSkill(work, 'good-skill', {
			frontmatter: { version: '1.10', license: 'Apache-2.0', 'allowed-tools': 'Read Grep', compatibility: 'claude-code' },
			files: { 'scripts/run.sh': 'echo hi\n', 'references/guide.md': '# Guide\n' },
		});
		expect(await validate({ path: folder })).toEqual({ valid: true, errors: [], warnings: [] });
	});

	it('SKILL.md missing', async () => {
		const folder = join(work, 'empty-skill');
		await mkdir(folder);
		expect(await validate({ path: folder })).toEqual({ valid: false, errors: ['SKILL.md not found in skill directory'], warnings: [] });
	});

	it('the name must equal the folder name', async () => {
		const result = await validateText('folder-name', skillMd('other-name'));
		expect(result.valid).toBe(false);
		expect(result.errors).toEqual(['skill name "other-name" must match directory name "folder-name"']);
	});

	it.each([
		['a', '2-64'],
		['-ab', 'hyphen'],
		['ab-', 'hyphen'],
		['Ab', 'lowercase'],
		['a_b', 'lowercase'],
		['a--b', 'consecutive'],
		['a'.repeat(65), '2-64'],
	])('rejects the name %j', async (name, hint) => {
		const result = await validateText(name.replace(/^-/, 'x'), skillMd(name));
		expect(result.valid).toBe(false);
		expect(result.errors?.join('\n')).toContain(hint === 'lowercase' ? 'lowercase letters' : hint);
	});

	it('accepts names of 2 and 64 characters', async () => {
		expect((await validateText('ab', skillMd('ab'))).valid).toBe(true);
		const long = `a${'-b'.repeat(31)}a`;
		expect(long).toHaveLength(64);
		expect((await validateText(long, skillMd(long))).valid).toBe(true);
	});

	it('description is required and at most 1024 characters', async () => {
		const missing = await validateText('no-desc', '---\nname: no-desc\n---\nbody\n');
		expect(missing.errors).toEqual(['description is required']);
		const long = await validateText('long-desc', skillMd('long-desc', { frontmatter: { description: 'x'.repeat(1025) } }));
		expect(long.errors).toEqual(['description is 1025 characters; at most 1024 allowed']);
		const exact = await validateText('exact-desc', skillMd('exact-desc', { frontmatter: { description: 'x'.repeat(1024) } }));
		expect(exact.valid).toBe(true);
	});

	it('compatibility is at most 500 characters', async () => {
		const result = await validateText('compat', skillMd('compat', { frontmatter: { compatibility: 'y'.repeat(501) } }));
		expect(result.errors).toEqual(['compatibility is 501 characters; at most 500 allowed']);
	});

	it('allowed-tools is a string or a list; commas are a warning', async () => {
		const list = await validateText('tools-list', skillMd('tools-list', { frontmatter: { 'allowed-tools': ['Read', 'Bash(git:*)'] } }));
		expect(list).toEqual({ valid: true, errors: [], warnings: [] });
		const commas = await validateText('tools-commas', skillMd('tools-commas', { frontmatter: { 'allowed-tools': 'Read, Grep' } }));
		expect(commas.valid).toBe(true);
		expect(commas.warnings?.[0]).toMatch(/comma-delimited/);
		const map = await validateText('tools-map', '---\nname: tools-map\ndescription: d\nallowed-tools:\n  read: yes\n---\n');
		expect(map.errors).toEqual(['allowed-tools must be a string or a list']);
	});

	it('metadata must be a map', async () => {
		const list = await validateText('meta-list', '---\nname: meta-list\ndescription: d\nmetadata:\n  - a\n---\n');
		expect(list.errors).toEqual(['metadata must be a map']);
		const map = await validateText('meta-map', '---\nname: meta-map\ndescription: d\nmetadata:\n  author: me\n---\n');
		expect(map.valid).toBe(true);
	});

	it('frontmatter must open the file and close within 64 KiB', async () => {
		expect((await validateText('no-front', '# just markdown\n')).errors?.[0]).toMatch(/must start with a "---" line/);
		expect((await validateText('unclosed', '---\nname: unclosed\ndescription: d\n')).errors?.[0]).toMatch(/no closing "---"/);
		const huge = `---\nname: huge\ndescription: d\nnotes: ${'z'.repeat(70 * 1024)}\n---\n`;
		expect((await validateText('huge', huge)).errors?.[0]).toMatch(/within 64 KiB/);
		expect((await validateText('bad-yaml', '---\nname: [unclosed\n---\n')).errors?.[0]).toMatch(/^invalid frontmatter/);
		expect((await validateText('scalar', '---\njust a string\n---\n')).errors).toEqual(['invalid frontmatter: expected a map of fields']);
	});

	it('reports every error at once', async () => {
		const result = await validateText('many', '---\nname: Many\ncompatibility: ' + 'c'.repeat(600) + '\n---\n');
		expect(result.errors).toHaveLength(3);
	});

	it('symlinks and special files are errors; hidden files a warning', async () => {
		const folder = await writeSkill(work, 'linked', { files: { '.env': 'SECRET=1\n' } });
		await symlink('/etc/passwd', join(folder, 'passwd'));
		execFileSync('mkfifo', [join(folder, 'pipe')]);
		const result = await validate({ path: folder });
		expect(result.valid).toBe(false);
		expect(result.errors).toEqual(['passwd: symlinks and special files are not allowed', 'pipe: symlinks and special files are not allowed']);
		expect(result.warnings).toEqual(['hidden files are not part of the skill: .env']);
	});

	it('names Windows cannot hold, and names differing only in case, are errors (the skill may be synced there)', async () => {
		const folder = await writeSkill(work, 'unportable', { files: { 'docs/con.txt': 'c', 'Notes.md': '1', 'notes.md': '2' } });
		const result = await validate({ path: folder });
		expect(result.valid).toBe(false);
		expect(result.errors).toEqual([
			'docs/con.txt: con.txt is a reserved name on Windows; rename it',
			'notes.md and Notes.md differ only in case: they would be one file on Windows and macOS; rename one',
		]);
	});

	it('a symlinked skill folder is refused', async () => {
		const target = await writeSkill(work, 'real-skill');
		const link = join(work, 'link-skill');
		await symlink(target, link);
		expect((await validate({ path: link })).errors?.[0]).toMatch(/is a symlink/);
	});

	it('a long SKILL.md is a warning', async () => {
		const result = await validateText('long-body', skillMd('long-body', { body: 'line\n'.repeat(600) }));
		expect(result.valid).toBe(true);
		expect(result.warnings?.[0]).toMatch(/lines; keep it under 500/);
	});
});

describe('an inline skill', () => {
	it('validates SKILL.md text and files without a folder', async () => {
		expect(await validate({ skill_md: skillMd('inline-skill'), files: [{ path: 'notes/a.md', content: 'a' }] })).toEqual({
			valid: true,
			errors: [],
			warnings: [],
		});
		const bad = await validate({ skill_md: '---\nname: x\n---\n' });
		expect(bad.valid).toBe(false);
		expect(bad.errors).toEqual([expect.stringContaining('invalid skill name "x"'), 'description is required']);
	});

	it('a file listed twice is an error', async () => {
		const result = await validate({ skill_md: skillMd('twice'), files: [{ path: 'a.md', content: '' }, { path: './a.md', content: '' }] });
		expect(result.errors).toEqual(['a.md: listed twice']);
	});
});

describe('bad requests are 400 and name the field', () => {
	const cases: [string, Record<string, unknown>, RegExp][] = [
		['no path and no skill_md', {}, /path is required/],
		['a relative path', { path: 'relative/skill' }, /path.*must be absolute/],
		['a path with ..', { path: '/tmp/../etc' }, /"\.\." segments/],
		['both path and skill_md', { path: '/tmp/x', skill_md: 'x' }, /cannot specify both/],
		['a file escaping the skill', { skill_md: 'x', files: [{ path: '../evil', content: '' }] }, /files\.0\.path/],
		['an absolute file path', { skill_md: 'x', files: [{ path: '/etc/passwd', content: '' }] }, /must be relative/],
		['files without skill_md', { path: '/tmp/x', files: [] }, /files may only be given with skill_md/],
	];
	it.each(cases)('%s', async (_label, params, message) => {
		const error = await validate(params as never).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(HangarError);
		expect((error as HangarError).status).toBe(400);
		expect((error as HangarError).message).toMatch(message);
	});
});

describe('REST', () => {
	// ToolHive's API e2e case: validating a path that does not exist is a result, not an error.
	it('POST /api/v1beta/skills/validate with a path that does not exist answers 200 {valid: false, errors}', async () => {
		const missing = join(work, 'does-not-exist');
		const response = await callRest(serve.url, ValidateSkill, { path: missing });
		expect(response.status).toBe(200);
		expect(response.body).toMatchObject({ valid: false, errors: [expect.stringContaining(missing)] });
		const file = join(await writeSkill(work, 'file-case'), 'SKILL.md');
		expect(await callRest(serve.url, ValidateSkill, { path: file })).toMatchObject({ status: 200, body: { valid: false, errors: [expect.stringContaining('not a directory')] } });
	});

	it('POST /api/v1beta/skills/validate answers 200 with the result, 400 for a bad body', async () => {
		const folder = await writeSkill(work, 'rest-skill');
		expect(await callRest(serve.url, ValidateSkill, { path: folder })).toMatchObject({
			status: 200,
			body: { valid: true, errors: [], warnings: [] },
		});
		const invalid = await callRest(serve.url, ValidateSkill, { path: join(work, 'empty-skill') });
		expect(invalid).toMatchObject({ status: 200, body: { valid: false } });
		const bad = await callRest(serve.url, ValidateSkill, { path: 'nope' });
		expect(bad).toMatchObject({ status: 400, body: { code: 'invalid_params', message: expect.stringContaining('path') } });
	});
});
