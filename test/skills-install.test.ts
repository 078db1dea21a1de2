/**
 * Installing skills from a real OCI registry through a real daemon and `hangar serve`:
 * per-client folders and scopes, re-install and upgrade, unmanaged folders, dependencies,
 * uninstall, groups, project lock file, hostile artifacts, concurrent installs, every status
 * of the skill rows for its real cause, and ToolHive-format interop.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
	CreateGroup,
	GetSkill,
	GetSkillContent,
	HangarError,
	InstallSkill,
	ListSkills,
	UninstallSkill,
	type OperationDefinition,
} from '../protocol/index.js';
import { RegistryClient, sha256 } from '../server/oci/client.js';
import { canonicalJson, MEDIA_TYPES } from '../server/oci/media.js';
import { declaredGiant, gzipBomb, SKILL_MD, targz } from './support/archives.js';
import { startFaultProxy, type FaultProxy } from './support/faults.js';
import { runHangar, spawnDaemon, startServe, type DaemonProcess, type ServeProcess } from './support/processes.js';
import { startRegistry, type Registry } from './support/registry.js';
import { callRest } from './support/rest.js';
import { createProject, createSkillsWorld, exists, publishSkill, snapshot, type SkillsWorld } from './support/skills-world.js';

const run = promisify(execFile);
const never = new AbortController().signal;

let world: SkillsWorld;
let registry: Registry;
let daemon: DaemonProcess;
let serve: ServeProcess;

beforeAll(async () => {
	[world, registry] = await Promise.all([createSkillsWorld(), startRegistry()]);
	daemon = spawnDaemon(world.env);
	await daemon.client.initialize('skills-install-test');
	serve = await startServe(world.env);
});

afterAll(async () => {
	await Promise.all([daemon?.stop(), serve?.stop()]);
	await registry?.stop();
	await world?.dispose();
});

const ref = (name: string, tag = '1.0.0') => `${registry.host}/skills/${name}:${tag}`;
const call = <O extends OperationDefinition>(row: O, params: Parameters<typeof daemon.client.request<O>>[1]) => daemon.client.request(row, params);
const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as HangarError);
const userSkills = (dir: string, name: string) => join(world.userHome, dir, 'skills', name);

describe('install into client folders', () => {
	it('REST: 201 with the installed skill and a Location header; the files land in the client folder', async () => {
		const digest = await publishSkill(world.work, ref('alpha'), 'alpha', { frontmatter: { version: '1.0.0' }, files: { 'docs/usage.md': 'use it\n' } });
		const response = await callRest(serve.url, InstallSkill, { name: ref('alpha'), clients: ['claude-code'] });
		expect(response.status).toBe(201);
		expect(response.headers.get('location')).toBe('/api/v1beta/skills/alpha');
		expect(response.body).toMatchObject({
			skill: {
				status: 'installed',
				scope: 'user',
				digest,
				reference: ref('alpha'),
				tag: '1.0.0',
				clients: ['claude-code'],
				metadata: { name: 'alpha', version: '1.0.0' },
			},
		});
		expect(Object.keys(await snapshot(userSkills('.claude', 'alpha'))).sort()).toEqual(['SKILL.md', 'docs/usage.md']);
		expect(await readFile(join(userSkills('.claude', 'alpha'), 'docs/usage.md'), 'utf8')).toBe('use it\n');
		expect(await exists(join(world.userHome, '.claude', 'skills', '.hangar'))).toBe(false);

		const info = await call(GetSkill, { name: 'alpha' });
		expect(info).toMatchObject({ metadata: { name: 'alpha', version: '1.0.0' }, installed_skill: { digest, clients: ['claude-code'] } });
		const listed = await callRest(serve.url, ListSkills, {});
		// Other tests install their own skills: this one looks for its own.
		expect(listed.body).toMatchObject({ skills: expect.arrayContaining([expect.objectContaining({ reference: ref('alpha') })]) });
	});

	it('re-installing the same digest is a no-op; a new digest upgrades in place', async () => {
		await publishSkill(world.work, ref('again'), 'again', { frontmatter: { version: '1.0.0' }, files: { 'docs/usage.md': 'use it\n' } });
		const first = await call(InstallSkill, { name: ref('again'), clients: ['claude-code'] });
		const skillFile = join(userSkills('.claude', 'again'), 'SKILL.md');
		const mtime = (await stat(skillFile)).mtimeMs;
		const again = await call(InstallSkill, { name: ref('again'), clients: ['claude-code'] });
		expect(again.skill.installed_at).toBe(first.skill.installed_at);
		expect((await stat(skillFile)).mtimeMs).toBe(mtime);

		const newer = await publishSkill(world.work, ref('again'), 'again', { frontmatter: { version: '1.1.0' }, files: { 'docs/other.md': 'other\n' } });
		const upgraded = await call(InstallSkill, { name: ref('again'), clients: ['claude-code'] });
		expect(upgraded.skill.digest).toBe(newer);
		expect(upgraded.skill.metadata?.version).toBe('1.1.0');
		expect(Object.keys(await snapshot(userSkills('.claude', 'again'))).sort()).toEqual(['SKILL.md', 'docs/other.md']);
	});

	it('clients sharing a folder get it written once; adding a client later writes only its folder', async () => {
		await publishSkill(world.work, ref('shared'), 'shared');
		const { skill } = await call(InstallSkill, { name: ref('shared'), clients: ['codex', 'goose', 'gemini-cli'] });
		expect(skill.clients?.sort()).toEqual(['codex', 'gemini-cli', 'goose']);
		expect(Object.keys(await snapshot(userSkills('.agents', 'shared')))).toEqual(['SKILL.md']);
		const codexFile = join(userSkills('.agents', 'shared'), 'SKILL.md');
		const mtime = (await stat(codexFile)).mtimeMs;
		const more = await call(InstallSkill, { name: ref('shared'), clients: ['cursor'] });
		expect(more.skill.clients?.sort()).toEqual(['codex', 'cursor', 'gemini-cli', 'goose']);
		expect(await exists(join(userSkills('.cursor', 'shared'), 'SKILL.md'))).toBe(true);
		expect((await stat(codexFile)).mtimeMs).toBe(mtime);
	});

	it('without clients, every installed skill-capable client; none detected is a 400', async () => {
		await publishSkill(world.work, ref('detected'), 'detected');
		const fresh = await createSkillsWorld();
		try {
			const none = await runHangar(['skill', 'install', ref('detected')], fresh.env);
			expect(none.code).toBe(2);
			expect(none.stderr).toMatch(/no supported clients detected/);
			await writeFile(join(fresh.userHome, '.claude.json'), '{}');
			await mkdir(join(fresh.userHome, '.kiro', 'settings'), { recursive: true });
			const all = await runHangar(['skill', 'install', ref('detected'), '--json'], fresh.env);
			expect(JSON.parse(all.stdout).clients.sort()).toEqual(['claude-code', 'kiro']);
			expect(await exists(join(fresh.userHome, '.kiro/skills/detected/SKILL.md'))).toBe(true);
		} finally {
			await fresh.dispose();
		}
	});

	it('a folder Hangar did not write is a 409 unless force; force replaces it', async () => {
		await publishSkill(world.work, ref('taken'), 'taken');
		const folder = userSkills('.cursor', 'taken');
		await mkdir(folder, { recursive: true });
		await writeFile(join(folder, 'mine.md'), 'my own work');
		const error = await failure(call(InstallSkill, { name: ref('taken'), clients: ['cursor'] }));
		expect(error).toMatchObject({ status: 409, code: 'unmanaged_directory' });
		expect(await snapshot(folder)).toEqual({ 'mine.md': 'my own work' });
		const rest = await callRest(serve.url, InstallSkill, { name: ref('taken'), clients: ['cursor'] });
		expect(rest).toMatchObject({ status: 409, body: { code: 'unmanaged_directory', message: expect.stringContaining('--force') } });
		await call(InstallSkill, { name: ref('taken'), clients: ['cursor'], force: true });
		expect(Object.keys(await snapshot(folder))).toEqual(['SKILL.md']);
	});

	it('uninstall removes exactly the files it wrote, from every folder; 204 over REST, then 404', async () => {
		await publishSkill(world.work, ref('leaving'), 'leaving', { files: { 'a/b.md': 'b' } });
		await call(InstallSkill, { name: ref('leaving'), clients: ['claude-code', 'windsurf'] });
		await writeFile(join(userSkills('.claude', 'leaving'), 'user-notes.md'), 'keep me');
		const response = await callRest(serve.url, UninstallSkill, { name: 'leaving' });
		expect(response).toMatchObject({ status: 204, body: undefined });
		expect(await snapshot(userSkills('.claude', 'leaving'))).toEqual({ 'user-notes.md': 'keep me' });
		expect(await exists(userSkills('.codeium/windsurf', 'leaving'))).toBe(false);
		expect(await failure(call(GetSkill, { name: 'leaving' }))).toMatchObject({ status: 404 });
		expect(await failure(call(UninstallSkill, { name: 'leaving' }))).toMatchObject({ status: 404 });
		expect((await callRest(serve.url, UninstallSkill, { name: 'Bad_Name' })).status).toBe(400);
	});

	it('groups: unknown group is a 404 before anything is written; membership filters the list', async () => {
		await publishSkill(world.work, ref('grouped'), 'grouped');
		expect(await failure(call(InstallSkill, { name: ref('grouped'), clients: ['cline'], group: 'nope' }))).toMatchObject({ status: 404 });
		expect(await exists(userSkills('.cline', 'grouped'))).toBe(false);
		await call(CreateGroup, { name: 'team' });
		await call(InstallSkill, { name: ref('grouped'), clients: ['cline'], group: 'team' });
		expect((await call(ListSkills, { group: 'team' })).skills.map((s) => s.metadata?.name)).toEqual(['grouped']);
		expect((await call(ListSkills, { client: 'cline' })).skills.map((s) => s.metadata?.name)).toEqual(['grouped']);
		expect(await failure(call(ListSkills, { group: 'ghosts' }))).toMatchObject({ status: 404 });
	});
});

describe('project scope', () => {
	it('installs under the project for each client (a shared folder once), keeps hangar.lock.yaml current', async () => {
		const project = await createProject(world.work, 'project-a');
		const digest = await publishSkill(world.work, ref('proj'), 'proj', { frontmatter: { version: '2.0.0' } });
		const { skill } = await call(InstallSkill, { name: ref('proj'), project_root: project, clients: ['claude-code', 'vscode', 'vscode-insider'] });
		expect(skill).toMatchObject({ scope: 'project', project_root: project, managed: true });
		expect(await exists(join(project, '.claude/skills/proj/SKILL.md'))).toBe(true);
		expect(await exists(join(project, '.github/skills/proj/SKILL.md'))).toBe(true);
		expect(await exists(join(world.userHome, '.claude/skills/proj'))).toBe(false);
		const lock = await readFile(join(project, 'hangar.lock.yaml'), 'utf8');
		expect(lock).toContain(`resolvedReference: ${ref('proj')}`);
		expect(lock).toContain(`digest: ${digest}`);
		expect(lock).toMatch(/contentDigest: sha256:[0-9a-f]{64}/);
		expect(lock).toContain(`source: ${ref('proj')}`);

		expect((await call(ListSkills, { scope: 'project', project_root: project })).skills.map((s) => s.metadata?.name)).toEqual(['proj']);
		expect((await call(ListSkills, { scope: 'user' })).skills.map((s) => s.metadata?.name)).not.toContain('proj');
		expect(await failure(call(GetSkill, { name: 'proj' }))).toMatchObject({ status: 404 });
		expect(await call(GetSkill, { name: 'proj', project_root: project })).toMatchObject({ installed_skill: { digest } });

		await call(UninstallSkill, { name: 'proj', scope: 'project', project_root: project });
		expect(await exists(join(project, '.claude/skills/proj'))).toBe(false);
		expect(await readFile(join(project, 'hangar.lock.yaml'), 'utf8')).toContain('skills: []');
	});

	it('verifies no signatures: allow_unsigned is accepted and ignored, and a project install says unsigned as its lock entry does', async () => {
		const project = await createProject(world.work, 'project-unsigned');
		await publishSkill(world.work, ref('unsigned'), 'unsigned');
		for (const allow_unsigned of [false, true]) {
			const response = await callRest(serve.url, InstallSkill, { name: ref('unsigned'), project_root: project, clients: ['cursor'], allow_unsigned, force: true });
			expect(response).toMatchObject({ status: 201, body: { unsigned: true, skill: { scope: 'project' } } });
			expect(response.body).not.toHaveProperty('provenance');
		}
		expect(await readFile(join(project, 'hangar.lock.yaml'), 'utf8')).toContain('unsigned: true');
		expect(await call(GetSkill, { name: 'unsigned', project_root: project })).toMatchObject({ unsigned: true });
		const user = await callRest(serve.url, InstallSkill, { name: ref('unsigned'), clients: ['cursor'], allow_unsigned: false });
		expect(user.status).toBe(201);
		expect(user.body).not.toHaveProperty('unsigned');
	});

	it('rejects a project root that is missing, not a git work tree, a symlink, or paired with scope user', async () => {
		await publishSkill(world.work, ref('rooted'), 'rooted');
		const plain = join(world.work, 'not-a-repo');
		await mkdir(plain, { recursive: true });
		const project = await createProject(world.work, 'linked-target');
		const link = join(world.work, 'linked-project');
		await symlink(project, link);
		for (const [params, message] of [
			[{ project_root: join(world.work, 'missing') }, /not an existing folder/],
			[{ project_root: plain }, /not a git repository/],
			[{ project_root: link }, /may not contain symlinks/],
			[{ scope: 'user', project_root: project }, /only be given with scope "project"/],
			[{ scope: 'project' }, /project_root is required/],
			[{ project_root: 'relative/path' }, /must be absolute/],
		] as const) {
			const error = await failure(call(InstallSkill, { name: ref('rooted'), clients: ['cursor'], ...params }));
			expect(error, JSON.stringify(params)).toMatchObject({ status: 400, message: expect.stringMatching(message) });
		}
	});
});

describe('dependencies', () => {
	it('installs what a skill requires, records it, and removes orphans with the skill', async () => {
		await publishSkill(world.work, ref('base-lib'), 'base-lib');
		await publishSkill(world.work, ref('uses-base'), 'uses-base', { frontmatter: { 'toolhive.requires': ref('base-lib') } });
		const { skill } = await call(InstallSkill, { name: ref('uses-base'), clients: ['qoder'] });
		expect(skill.dependencies).toEqual([{ name: 'base-lib', reference: ref('base-lib'), digest: expect.stringMatching(/^sha256:/) }]);
		expect(await exists(join(userSkills('.qoder', 'base-lib'), 'SKILL.md'))).toBe(true);
		await call(UninstallSkill, { name: 'uses-base' });
		expect(await exists(userSkills('.qoder', 'base-lib'))).toBe(false);
		expect(await failure(call(GetSkill, { name: 'base-lib' }))).toMatchObject({ status: 404 });
	});

	it('a dependency cycle installs each skill once', async () => {
		await publishSkill(world.work, ref('cycle-a'), 'cycle-a', { frontmatter: { 'toolhive.requires': ref('cycle-b') } });
		await publishSkill(world.work, ref('cycle-b'), 'cycle-b', { frontmatter: { 'toolhive.requires': ref('cycle-a') } });
		const { skill } = await call(InstallSkill, { name: ref('cycle-a'), clients: ['factory'] });
		expect(skill.dependencies?.map((dependency) => dependency.name)).toEqual(['cycle-b']);
		const b = await call(GetSkill, { name: 'cycle-b' });
		expect(b.installed_skill?.dependencies?.map((dependency) => dependency.name)).toEqual(['cycle-a']);
	});

	it('a dependency that cannot be installed fails the install, leaving nothing', async () => {
		await publishSkill(world.work, ref('needs-ghost'), 'needs-ghost', { frontmatter: { 'toolhive.requires': `${ref('base-ok')} ${ref('ghost', '9')}` } });
		await publishSkill(world.work, ref('base-ok'), 'base-ok');
		expect(await failure(call(InstallSkill, { name: ref('needs-ghost'), clients: ['kimi-cli'] }))).toMatchObject({ status: 404 });
		expect(await exists(userSkills('.kimi', 'needs-ghost'))).toBe(false);
		expect(await exists(userSkills('.kimi', 'base-ok'))).toBe(false);
	});
});

describe('hostile artifacts are refused with nothing written', () => {
	/** Pushes a skill artifact whose one layer is `layer`, in ToolHive's format. */
	async function pushLayer(name: string, layer: Buffer): Promise<string> {
		const client = new RegistryClient();
		const repo = { registry: registry.host, repository: `skills/${name}` };
		const config = canonicalJson({ architecture: 'amd64', os: 'linux', config: { Labels: { 'dev.toolhive.skills.name': name } }, rootfs: { type: 'layers', diff_ids: [] } });
		await client.pushBlob(repo, layer, never);
		await client.pushBlob(repo, config, never);
		const manifest = canonicalJson({
			schemaVersion: 2,
			mediaType: MEDIA_TYPES.manifest,
			artifactType: 'dev.toolhive.skills.v1',
			config: { mediaType: MEDIA_TYPES.config, digest: sha256(config), size: config.length },
			layers: [{ mediaType: MEDIA_TYPES.layerTarGzip, digest: sha256(layer), size: layer.length }],
			annotations: { 'dev.toolhive.skills.name': name },
		});
		await client.putManifest(repo, '1.0.0', manifest, MEDIA_TYPES.manifest, never);
		return ref(name);
	}

	const cases: [string, (name: string) => Buffer | Promise<Buffer>][] = [
		['path traversal', (name) => targz([{ path: 'SKILL.md', content: SKILL_MD(name) }, { path: '../../escaped.md', content: 'x' }])],
		['an absolute path', (name) => targz([{ path: 'SKILL.md', content: SKILL_MD(name) }, { path: '/tmp/hangar-install-absolute', content: 'x' }])],
		['a symlink', (name) => targz([{ path: 'SKILL.md', content: SKILL_MD(name) }, { path: 'link', type: 'SymbolicLink', linkpath: '/etc/shadow' }])],
		['a hardlink', (name) => targz([{ path: 'SKILL.md', content: SKILL_MD(name) }, { path: 'hard', type: 'Link', linkpath: '/etc/shadow' }])],
		['a device', (name) => targz([{ path: 'SKILL.md', content: SKILL_MD(name) }, { path: 'dev', type: 'CharacterDevice' }])],
		['10,000 files', (name) => targz([{ path: 'SKILL.md', content: SKILL_MD(name) }, ...Array.from({ length: 10_000 }, (_, i) => ({ path: `many/${i}`, content: '' }))])],
		['a gzip bomb', (name) => gzipBomb(name, 700 * 1024 * 1024)],
		['a file of 1 GB', (name) => declaredGiant(name, 1024 * 1024 * 1024)],
		['60,000 empty folders', (name) => targz([{ path: 'SKILL.md', content: SKILL_MD(name) }, ...Array.from({ length: 60_000 }, (_, i) => ({ path: `d/${i}/`, type: 'Directory' as const }))])],
		['a path longer than the file system allows', (name) => targz([{ path: 'SKILL.md', content: SKILL_MD(name) }, { path: `${'x'.repeat(250)}/`.repeat(20) + 'deep.md', content: 'x' }])],
	];

	it.each(cases.map(([label, make], index) => [label, make, `hostile-${index}`] as const))('%s', async (_label, make, name) => {
		const reference = await pushLayer(name, await make(name));
		const error = await failure(call(InstallSkill, { name: reference, clients: ['claude-code', 'codex'] }));
		expect(error).toMatchObject({ status: 422, code: 'unsafe_archive' });
		for (const dir of ['.claude', '.agents']) {
			expect(await exists(userSkills(dir, name))).toBe(false);
			expect(await exists(join(world.userHome, dir, 'skills', '.hangar'))).toBe(false);
		}
		expect(await exists(join(world.userHome, 'escaped.md'))).toBe(false);
		expect(await exists('/tmp/hangar-install-absolute')).toBe(false);
		expect((await call(ListSkills, {})).skills.map((s) => s.metadata?.name)).not.toContain(name);
		expect(await snapshot(join(world.env.HANGAR_HOME!, 'cache', 'skills', 'staging'))).toEqual({});
	}, 60_000);

	it('an artifact whose skill name differs from its repository is a 422', async () => {
		const reference = await pushLayer('renamed', targz([{ path: 'SKILL.md', content: SKILL_MD('other-name') }]));
		expect(await failure(call(InstallSkill, { name: reference, clients: ['cursor'] }))).toMatchObject({ status: 422 });
		expect(await exists(userSkills('.cursor', 'renamed'))).toBe(false);
	});
});

describe('statuses for their real causes', () => {
	let front: FaultProxy;
	beforeAll(async () => {
		front = await startFaultProxy(registry.url);
		await publishSkill(world.work, ref('faulty'), 'faulty');
	});
	afterAll(() => front.stop());

	const viaFront = () => `${front.host}/skills/faulty:1.0.0`;

	it('400 for a malformed reference or a missing ref', async () => {
		expect(await failure(call(GetSkillContent, { ref: `${registry.host}/Skills/UPPER:1` }))).toMatchObject({ status: 400, message: expect.stringMatching(/invalid reference/) });
		const rest = await fetch(`${serve.url}/api/v1beta/skills/content`);
		expect(rest.status).toBe(400);
		expect(await rest.json()).toMatchObject({ message: expect.stringContaining('ref') });
	});

	it('404 for an unknown tag, repository or skill name', async () => {
		expect(await failure(call(GetSkillContent, { ref: ref('faulty', 'nope') }))).toMatchObject({ status: 404 });
		expect(await failure(call(GetSkillContent, { ref: ref('no-such-skill') }))).toMatchObject({ status: 404 });
		expect(await failure(call(InstallSkill, { name: 'unheard-of', clients: ['cursor'] }))).toMatchObject({ status: 404, code: 'skill_not_found' });
	});

	it('401 when the registry refuses, 429 when it rate-limits (with Retry-After), 502 when it fails', async () => {
		front.fault = () => ({ kind: 'status', status: 401, headers: { 'WWW-Authenticate': 'Basic realm="x"' } });
		expect(await failure(call(GetSkillContent, { ref: viaFront() }))).toMatchObject({ status: 401, code: 'registry_unauthorized' });
		front.fault = () => ({ kind: 'status', status: 429, headers: { 'Retry-After': '7' } });
		const limited = await callRest(serve.url, GetSkillContent, { ref: viaFront() });
		expect(limited.status).toBe(429);
		expect(limited.headers.get('retry-after')).toBe('7');
		expect(await failure(call(InstallSkill, { name: viaFront(), clients: ['cursor'] }))).toMatchObject({ status: 429 });
		front.fault = () => ({ kind: 'status', status: 500, body: '{"errors":[{"code":"UNKNOWN","message":"storage exploded"}]}' });
		expect(await failure(call(GetSkillContent, { ref: viaFront() }))).toMatchObject({ status: 502, message: expect.stringContaining('storage exploded') });
		front.fault = undefined;
		expect(await call(GetSkillContent, { ref: viaFront() })).toMatchObject({ name: 'faulty' });
	});

	it('502 when nothing answers', async () => {
		const stopped = await startRegistry();
		await stopped.stop();
		expect(await failure(call(GetSkillContent, { ref: `${stopped.host}/skills/gone:1` }))).toMatchObject({ status: 502, code: 'registry_unreachable' });
	});

	it('504 when the registry stops answering', async () => {
		const slowWorld = await createSkillsWorld({ HANGAR_OCI_TIMEOUT_MS: '500' });
		const slow = spawnDaemon(slowWorld.env);
		await slow.client.initialize('timeout-test');
		front.fault = () => ({ kind: 'hang' });
		try {
			const error = await failure(slow.client.request(GetSkillContent, { ref: viaFront() }));
			expect(error).toMatchObject({ status: 504, code: 'registry_timeout' });
		} finally {
			front.fault = undefined;
			await slow.stop();
			await slowWorld.dispose();
		}
	});
});

describe('interop', () => {
	it('installs an artifact assembled in ToolHive\'s format without Hangar\'s packer (tar, gzip, skopeo)', async () => {
		// Hand-made with standard tools: files in a folder, GNU tar, gzip, JSON by hand, pushed by skopeo.
		const layout = join(world.work, 'toolhive-layout');
		const source = join(world.work, 'toolhive-src', 'th-skill');
		await mkdir(join(source, 'references'), { recursive: true });
		await writeFile(join(source, 'SKILL.md'), '---\nname: th-skill\ndescription: Packed like ToolHive does\nversion: 0.3.0\n---\n# From ToolHive\n');
		await writeFile(join(source, 'references', 'api.md'), '# API\n');
		await run('sh', ['-c', `tar --sort=name --owner=0 --group=0 --mtime=@0 -C '${source}' -cf - SKILL.md references/api.md | gzip -n > '${world.work}/th-layer.tgz'`]);
		const layer = await readFile(join(world.work, 'th-layer.tgz'));
		const config = Buffer.from(JSON.stringify({
			architecture: 'amd64', os: 'linux', created: '1970-01-01T00:00:00Z',
			config: { Labels: { 'dev.toolhive.skills.name': 'th-skill', 'dev.toolhive.skills.version': '0.3.0', 'dev.toolhive.skills.files': '["SKILL.md","references/api.md"]' } },
			rootfs: { type: 'layers', diff_ids: [] }, history: [{ created: '1970-01-01T00:00:00Z', created_by: 'toolhive package' }],
		}));
		const annotations = { 'org.opencontainers.image.created': '1970-01-01T00:00:00Z', 'dev.toolhive.skills.name': 'th-skill', 'dev.toolhive.skills.description': 'Packed like ToolHive does', 'dev.toolhive.skills.version': '0.3.0' };
		const manifest = Buffer.from(JSON.stringify({
			schemaVersion: 2, mediaType: MEDIA_TYPES.manifest, artifactType: 'dev.toolhive.skills.v1',
			config: { mediaType: MEDIA_TYPES.config, digest: sha256(config), size: config.length },
			layers: [{ mediaType: MEDIA_TYPES.layerTarGzip, digest: sha256(layer), size: layer.length, annotations: { 'org.opencontainers.image.title': 'skill.tar.gz' } }],
			annotations,
		}));
		const platforms = ['amd64', 'arm64'].map((architecture) => ({ mediaType: MEDIA_TYPES.manifest, digest: sha256(manifest), size: manifest.length, platform: { architecture, os: 'linux' } }));
		const index = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA_TYPES.index, artifactType: 'dev.toolhive.skills.v1', manifests: platforms, annotations }));
		await mkdir(join(layout, 'blobs', 'sha256'), { recursive: true });
		for (const blob of [layer, config, manifest, index]) await writeFile(join(layout, 'blobs', 'sha256', sha256(blob).slice(7)), blob);
		await writeFile(join(layout, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
		await writeFile(join(layout, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [{ mediaType: MEDIA_TYPES.index, digest: sha256(index), size: index.length, annotations: { 'org.opencontainers.image.ref.name': '0.3.0' } }] }));
		await run('skopeo', ['copy', '--all', '--dest-tls-verify=false', `oci:${layout}:0.3.0`, `docker://${registry.host}/toolhive/th-skill:0.3.0`]);

		const { skill } = await call(InstallSkill, { name: `${registry.host}/toolhive/th-skill:0.3.0`, clients: ['opencode'] });
		expect(skill).toMatchObject({ digest: sha256(index), metadata: { name: 'th-skill', version: '0.3.0' } });
		expect(await snapshot(join(world.userHome, '.config/opencode/skills/th-skill'))).toEqual({
			'SKILL.md': '---\nname: th-skill\ndescription: Packed like ToolHive does\nversion: 0.3.0\n---\n# From ToolHive\n',
			'references/api.md': '# API\n',
		});
	});
});

describe('concurrency', () => {
	it('concurrent installs of one skill (daemon, REST, CLI at once) serialise to one consistent result', async () => {
		await publishSkill(world.work, ref('raced'), 'raced', { files: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}.md`, `${i}\n`])) });
		const params = { name: ref('raced'), clients: ['claude-code' as const] };
		const results = await Promise.allSettled([
			call(InstallSkill, params),
			call(InstallSkill, params),
			callRest(serve.url, InstallSkill, params),
			run(process.execPath, [join(process.cwd(), 'dist/server/cli/hangar.cjs'), 'skill', 'install', ref('raced'), '-c', 'claude-code'], { env: world.env }),
		]);
		// A failed install shows its reason, not just that it failed.
		expect(results.map((result) => (result.status === 'rejected' ? `rejected: ${(result.reason as Error)?.message ?? result.reason}` : result.status))).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
		expect((results[2] as PromiseFulfilledResult<{ status: number }>).value.status).toBe(201);
		expect(Object.keys(await snapshot(userSkills('.claude', 'raced')))).toHaveLength(31);
		expect(await exists(join(world.userHome, '.claude/skills/.hangar'))).toBe(false);
		expect((await call(ListSkills, {})).skills.filter((s) => s.metadata?.name === 'raced')).toHaveLength(1);
	});
});

describe('uninstall stays inside the skills folders', () => {
	it('a record pointing elsewhere is refused, and nothing outside is touched', async () => {
		await publishSkill(world.work, ref('tampered'), 'tampered');
		await call(InstallSkill, { name: ref('tampered'), clients: ['claude-code'] });
		const outside = join(world.work, 'precious');
		await mkdir(outside, { recursive: true });
		await writeFile(join(outside, 'SKILL.md'), 'do not delete');
		const recordFile = join(world.env.HANGAR_HOME!, 'state', 'skills', 'installed', `${encodeURIComponent('user/tampered')}.json`);
		const record = JSON.parse(await readFile(recordFile, 'utf8'));
		record.folders = [{ path: outside, clients: ['claude-code'] }];
		await writeFile(recordFile, JSON.stringify(record));
		await chmod(recordFile, 0o600);
		const error = await failure(call(UninstallSkill, { name: 'tampered' }));
		expect(error).toMatchObject({ status: 500, code: 'unsafe_path' });
		expect(await readFile(join(outside, 'SKILL.md'), 'utf8')).toBe('do not delete');
		await rm(recordFile);
	});
});
