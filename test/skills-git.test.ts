/**
 * Skills from git over real smart HTTP (`git http-backend`) and file:// repositories: refs
 * (tag, branch, commit, default branch), the skill path, the pinned commit, tokens sent only
 * to their host, private hosts refused outside development mode, and every failure's status.
 */
import { execFile } from 'node:child_process';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GetSkill, GetSkillContent, HangarError, InstallSkill, ListSkills, UninstallSkill } from '../protocol/index.js';
import { parseGitReference } from '../server/skills/git.js';
import { createRepo, git, startGitServer, type GitRepo, type GitServer } from './support/git.js';
import { HANGAR_BIN, runHangar, spawnDaemon, startServe, type DaemonProcess } from './support/processes.js';
import { callRest } from './support/rest.js';
import { createSkillsWorld, exists, snapshot, type SkillsWorld } from './support/skills-world.js';
import { skillMd } from './support/skills.js';

let world: SkillsWorld;
let server: GitServer;
let guarded: GitServer;
let daemon: DaemonProcess;
let repo: GitRepo;
let v1: string;
let latest: string;
let reposRoot: string;

beforeAll(async () => {
	world = await createSkillsWorld({ HANGAR_DEV: '1' });
	reposRoot = join(world.work, 'repos');
	repo = await createRepo(reposRoot, 'org', 'skills', {
		'skills/alpha/SKILL.md': skillMd('alpha', { frontmatter: { version: '1.0.0' } }),
		'skills/alpha/references/guide.md': 'v1 guide\n',
		'skills/beta/SKILL.md': skillMd('beta'),
		'assets/big.bin': 'x'.repeat(200_000),
		'README.md': '# skills\n',
	});
	v1 = git(repo.work, 'rev-parse', 'HEAD');
	repo.tag('v1');
	latest = await repo.commit({ 'skills/alpha/SKILL.md': skillMd('alpha', { frontmatter: { version: '2.0.0' } }), 'skills/alpha/references/guide.md': null, 'skills/nameless/README.md': 'no skill here\n' });
	await createRepo(reposRoot, 'org', 'solo-skill', { 'SKILL.md': skillMd('solo-skill'), 'notes.md': 'solo\n' });
	[server, guarded] = await Promise.all([startGitServer(reposRoot), startGitServer(reposRoot, { password: 'tok123' })]);
	daemon = spawnDaemon(world.env);
	await daemon.client.initialize('skills-git-test');
});

// Every test starts with no user-scope skill: one installed by an earlier test would make an
// install of the same commit a no-op that keeps the earlier reference.
afterEach(async () => {
	const { skills } = await daemon.client.request(ListSkills, { scope: 'user' });
	for (const { metadata } of skills) if (metadata?.name) await daemon.client.request(UninstallSkill, { name: metadata.name });
});

afterAll(async () => {
	await daemon?.stop();
	await Promise.all([server?.stop(), guarded?.stop()]);
	await world?.dispose();
});

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as HangarError);
const at = (path: string) => `git://${server.host}/${path}`;

describe('refs and paths', () => {
	it('content of a tag and a path: only that folder, at that tag', async () => {
		const content = await daemon.client.request(GetSkillContent, { ref: at('org/skills@v1#skills/alpha') });
		expect(content).toMatchObject({ name: 'alpha', version: '1.0.0' });
		expect(content.files).toEqual([
			{ path: 'SKILL.md', size: skillMd('alpha', { frontmatter: { version: '1.0.0' } }).length },
			{ path: 'references/guide.md', size: 9 },
		]);
	});

	it('install pins the commit the ref resolved to', async () => {
		const { skill } = await daemon.client.request(InstallSkill, { name: at('org/skills@v1#skills/alpha'), clients: ['claude-code'] });
		expect(skill).toMatchObject({ digest: v1, reference: at('org/skills@v1#skills/alpha'), tag: 'v1', metadata: { version: '1.0.0' } });
		expect(Object.keys(await snapshot(join(world.userHome, '.claude/skills/alpha'))).sort()).toEqual(['SKILL.md', 'references/guide.md']);
	});

	it('a branch, the default branch and a commit', async () => {
		const branch = await daemon.client.request(InstallSkill, { name: at('org/skills@main#skills/alpha'), clients: ['claude-code'] });
		expect(branch.skill).toMatchObject({ digest: latest, metadata: { version: '2.0.0' } });
		expect(Object.keys(await snapshot(join(world.userHome, '.claude/skills/alpha')))).toEqual(['SKILL.md']);
		const head = await daemon.client.request(GetSkillContent, { ref: at('org/skills#skills/beta') });
		expect(head.name).toBe('beta');
		const commit = await daemon.client.request(InstallSkill, { name: at(`org/skills@${v1}#skills/alpha`), clients: ['claude-code'] });
		expect(commit.skill).toMatchObject({ digest: v1, metadata: { version: '1.0.0' } });
	});

	it('a repository that is itself the skill takes the repository name', async () => {
		const { skill } = await daemon.client.request(InstallSkill, { name: at('org/solo-skill'), clients: ['cursor'] });
		expect(skill.metadata?.name).toBe('solo-skill');
		expect(Object.keys(await snapshot(join(world.userHome, '.cursor/skills/solo-skill'))).sort()).toEqual(['SKILL.md', 'notes.md']);
	});

	it('a git skill is named by its SKILL.md, not its folder or repository: a mismatch installs with a warning', async () => {
		const named = await createRepo(reposRoot, 'org', 'Odd_Repo', { 'tools/Folder_Name/SKILL.md': skillMd('real-name'), 'tools/Folder_Name/run.md': 'run\n' });
		const result = await runHangar(['skill', 'install', `git+file://${named.bare}#tools/Folder_Name`, '-c', 'cursor', '--json'], world.env);
		expect(result.code, result.stderr).toBe(0);
		expect(JSON.parse(result.stdout)).toMatchObject({ metadata: { name: 'real-name' } });
		expect(result.stderr).toMatch(/warning: .*SKILL.md names the skill "real-name", not "Folder_Name"; it is installed as "real-name"/);
		expect(Object.keys(await snapshot(join(world.userHome, '.cursor/skills/real-name'))).sort()).toEqual(['SKILL.md', 'run.md']);
		expect(await exists(join(world.userHome, '.cursor/skills/Folder_Name'))).toBe(false);
	});

	it('install goes past rules that affect neither safety nor loading (a 1,068-character description) with a warning; validate still reports them', async () => {
		const long = 'Helps with the Claude API'.padEnd(1068, '.');
		const wordy = await createRepo(reposRoot, 'org', 'wordy', { 'SKILL.md': skillMd('wordy', { frontmatter: { description: long } }) });
		const { skill, warnings } = await daemon.client.request(InstallSkill, { name: `git+file://${wordy.bare}`, clients: ['cursor'] });
		expect(skill.metadata?.name).toBe('wordy');
		expect(warnings).toEqual(['description is 1068 characters; at most 1024 allowed']);
		const validated = await runHangar(['skill', 'validate', wordy.work], world.env);
		expect(validated.code).toBe(1);
		expect(validated.stderr).toContain('hangar: invalid skill: description is 1068 characters; at most 1024 allowed');
	});

	it('install refuses what clients cannot load: no description, or a name that is not a skill name', async () => {
		const cases = { 'skills/blank/SKILL.md': '---\nname: blank\n---\n# blank\n', 'skills/upper/SKILL.md': skillMd('Upper_Case') };
		const unloadable = await createRepo(reposRoot, 'org', 'unloadable', cases);
		for (const [path, message] of [['skills/blank', /description is required/], ['skills/upper', /invalid skill name "Upper_Case"/]] as const) {
			expect(await failure(daemon.client.request(InstallSkill, { name: `git+file://${unloadable.bare}#${path}`, clients: ['cursor'] }))).toMatchObject({ status: 422, message: expect.stringMatching(message) });
		}
		expect(await exists(join(world.userHome, '.cursor/skills/blank'))).toBe(false);
	});

	it('git progress: a line per stage when stderr is not a terminal, one line updated in place per stage on a terminal', async () => {
		const files = Object.fromEntries(Array.from({ length: 200 }, (_, index) => [`docs/page-${index}.md`, `page ${index} ${'text '.repeat(index % 50)}\n`]));
		const big = await createRepo(reposRoot, 'org', 'many-files', { 'SKILL.md': skillMd('many-files'), ...files });
		const piped = await runHangar(['skill', 'content', `git+file://${big.bare}`, '--json'], world.env);
		expect(piped.code, piped.stderr).toBe(0);
		const stages = piped.stderr.split('\n').filter((line) => line.startsWith('  git: ')).map((line) => line.replace(/ \(\d+%\)$/, ''));
		expect(stages.length).toBeGreaterThan(0);
		expect(new Set(stages).size).toBe(stages.length);

		// A real terminal (a pty from util-linux `script`): each stage's line is rewritten, not repeated.
		const command = [process.execPath, HANGAR_BIN, 'skill', 'content', `git+file://${big.bare}`, '--json'].map((part) => `'${part}'`).join(' ');
		const tty = await new Promise<string>((resolve, reject) =>
			execFile('script', ['-qec', `${command} >/dev/null`, '/dev/null'], { env: world.env }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
		);
		const lines = tty.split(/\r?\n/).filter((line) => line.includes('git: '));
		expect(lines.length).toBe(new Set(lines.map((line) => line.split('\r').at(-1)!.replace(/\x1b\[K/g, '').replace(/ \(\d+%\)$/, ''))).size);
	}, 180_000);

	it('a local repository with git+file:// in development mode', async () => {
		const content = await daemon.client.request(GetSkillContent, { ref: `git+file://${repo.bare}@v1#skills/alpha` });
		expect(content).toMatchObject({ name: 'alpha', version: '1.0.0' });
	});
});

describe("ToolHive's API cases over REST", () => {
	it('POST /api/v1beta/skills with a git source that cannot be resolved answers 502; one named by its SKILL.md answers 201 under that name', async () => {
		const serve = await startServe(world.env);
		try {
			for (const path of ['org/missing', 'org/skills@no-such-ref#skills/alpha']) {
				const response = await callRest(serve.url, InstallSkill, { name: at(path), clients: ['opencode'] });
				expect(response.status, path).toBe(502);
			}
			const named = await createRepo(reposRoot, 'org', 'rest-named', { 'skills/dir-name/SKILL.md': skillMd('declared-name') });
			const response = await callRest(serve.url, InstallSkill, { name: `git+file://${named.bare}#skills/dir-name`, clients: ['opencode'] });
			expect(response).toMatchObject({ status: 201, body: { skill: { metadata: { name: 'declared-name' } } } });
			expect(response.headers.get('location')).toBe('/api/v1beta/skills/declared-name');
		} finally {
			await serve.stop();
		}
	});
});

describe('failures', () => {
	it.each([
		// ToolHive answers a git source it cannot resolve with 502.
		['a repository that does not exist', 'org/missing#skills/alpha', 502],
		['a ref that does not exist', 'org/skills@v9#skills/alpha', 502],
		['a path that does not exist', 'org/skills@main#skills/gamma', 502],
		['a folder without SKILL.md', 'org/skills@main#skills/nameless', 422],
	])('%s', async (_label, path, status) => {
		expect(await failure(daemon.client.request(GetSkillContent, { ref: at(path) }))).toMatchObject({ status });
		expect(await failure(daemon.client.request(InstallSkill, { name: at(path), clients: ['cline'] }))).toMatchObject({ status });
		expect(await exists(join(world.userHome, '.cline'))).toBe(false);
	});

	it('a skill folder holding a symlink is refused', async () => {
		const linked = await createRepo(reposRoot, 'org', 'linked', { 'SKILL.md': skillMd('linked') });
		await symlink('/etc/passwd', join(linked.work, 'passwd'));
		git(linked.work, 'add', 'passwd');
		git(linked.work, 'commit', '-q', '-m', 'link');
		git(linked.work, 'push', '-q', 'origin', 'HEAD');
		expect(await failure(daemon.client.request(InstallSkill, { name: at('org/linked'), clients: ['cline'] }))).toMatchObject({ status: 422, message: expect.stringMatching(/symlink/) });
	});

	it.each([
		['a ref with ..', 'git://example.com/org/repo@../x'],
		['a path with ..', 'git://example.com/org/repo#../x'],
		['no owner/repo', 'git://example.com/repo'],
		['an absolute path', 'git://example.com/org/repo#/etc'],
	])('400 for %s', async (_label, ref) => {
		expect(await failure(daemon.client.request(GetSkillContent, { ref }))).toMatchObject({ status: 400, code: 'invalid_reference' });
	});

	it('loopback and private hosts, and local repositories, are refused outside development mode', async () => {
		const { HANGAR_DEV: _dev, ...env } = world.env;
		const strict = await runHangar(['skill', 'content', at('org/skills#skills/alpha')], env);
		expect(strict.code).toBe(2);
		expect(strict.stderr).toMatch(/resolves to the private or loopback address 127\.0\.0\.1; set HANGAR_DEV=1/);
		const local = await runHangar(['skill', 'content', `git+file://${repo.bare}`], env);
		expect(local.stderr).toMatch(/only allowed in development mode/);
		const before = server.requests.length;
		await runHangar(['skill', 'content', 'git://10.1.2.3/org/skills'], env);
		expect(server.requests.length).toBe(before);
	});
});

describe('redirects', () => {
	it('a git host that redirects the first request elsewhere is not followed there (the address check would be skipped)', async () => {
		const redirector = await startGitServer(reposRoot, { redirectTo: server.host });
		try {
			const before = server.requests.length;
			const refused = await failure(daemon.client.request(GetSkillContent, { ref: `git://${redirector.host}/org/skills#skills/alpha` }));
			expect(refused).toMatchObject({ status: 502, code: 'git_redirect', message: expect.stringContaining(`redirected`) });
			expect(redirector.requests.length).toBeGreaterThan(0);
			expect(server.requests.length).toBe(before);
		} finally {
			await redirector.stop();
		}
	});
});

describe('tokens', () => {
	const guardedRef = () => `git://${guarded.host}/org/skills@v1#skills/beta`;

	it('GIT_TOKEN is sent to any host', async () => {
		const result = await runHangar(['skill', 'content', guardedRef(), '--json'], { ...world.env, GIT_TOKEN: 'tok123' });
		expect(result.stderr).not.toMatch(/hangar:/);
		expect(JSON.parse(result.stdout)).toMatchObject({ name: 'beta' });
		expect(guarded.requests.some((request) => request.headers.authorization?.startsWith('Basic '))).toBe(true);
	});

	it('GITHUB_TOKEN and GITLAB_TOKEN go only to their own hosts: elsewhere the fetch is a 401', async () => {
		const before = guarded.requests.length;
		const result = await runHangar(['skill', 'content', guardedRef()], { ...world.env, GITHUB_TOKEN: 'tok123', GITLAB_TOKEN: 'tok123' });
		expect(result.code).toBe(1);
		expect(result.stderr).toMatch(/refused access.*GITHUB_TOKEN, GITLAB_TOKEN or GIT_TOKEN/);
		expect(guarded.requests.slice(before).every((request) => request.headers.authorization === undefined)).toBe(true);
	});

	it('a wrong token is a 401, and the token never shows in the answer', async () => {
		const result = await runHangar(['skill', 'content', guardedRef()], { ...world.env, GIT_TOKEN: 'wrong-secret' });
		expect(result.code).toBe(1);
		expect(result.stderr).toMatch(/refused access/);
		expect(result.stderr).not.toContain('wrong-secret');
	});
});

describe('records', () => {
	it('details show the git reference, the commit and the clients', async () => {
		await daemon.client.request(InstallSkill, { name: at(`org/skills@${v1}#skills/alpha`), clients: ['claude-code'] });
		const info = await daemon.client.request(GetSkill, { name: 'alpha' });
		expect(info.installed_skill).toMatchObject({ reference: at(`org/skills@${v1}#skills/alpha`), digest: v1, clients: ['claude-code'] });
	});
});

describe('reference grammar', () => {
	it('parses git:// references and GitHub tree URLs', () => {
		expect(parseGitReference('git://github.com/org/repo@v1.0.0#skills/my-skill')).toEqual({ host: 'github.com', repository: 'org/repo', ref: 'v1.0.0', path: 'skills/my-skill' });
		expect(parseGitReference('git://gitlab.com/group/sub/repo')).toEqual({ host: 'gitlab.com', repository: 'group/sub/repo' });
		expect(parseGitReference('https://github.com/anthropics/skills/tree/main/skills/pdf')).toEqual({ host: 'github.com', repository: 'anthropics/skills', ref: 'main', path: 'skills/pdf' });
		expect(parseGitReference('https://github.com/org/repo')).toEqual({ host: 'github.com', repository: 'org/repo' });
		expect(() => parseGitReference('git://github.com/org/repo@-upload-pack=x')).toThrow(/invalid ref/);
	});
});
