/**
 * Local builds over REST and the CLI: build (reproducible), list, install and read by tag or
 * name, push to a real registry (open and token-protected), delete — with their statuses —
 * and the `hangar skill` commands as users type them.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildSkill, DeleteSkillBuild, GetSkillContent, InstallSkill, ListSkillBuilds, PushSkill } from '../protocol/index.js';
import { runHangar, startServe, type ServeProcess } from './support/processes.js';
import { startRegistry, type Registry } from './support/registry.js';
import { callRest } from './support/rest.js';
import { createProject, createSkillsWorld, exists, snapshot, type SkillsWorld } from './support/skills-world.js';
import { writeSkill } from './support/skills.js';

let world: SkillsWorld;
let registry: Registry;
let secured: Registry;
let serve: ServeProcess;
let folder: string;

beforeAll(async () => {
	[world, registry, secured] = await Promise.all([createSkillsWorld(), startRegistry(), startRegistry({ token: { users: { ci: 'pw' } } })]);
	folder = await writeSkill(join(world.work, 'src'), 'packed', { frontmatter: { version: '0.9.0' }, files: { 'scripts/x.sh': 'echo x\n' } });
	serve = await startServe(world.env);
});

afterAll(async () => {
	await serve?.stop();
	await Promise.all([registry?.stop(), secured?.stop()]);
	await world?.dispose();
});

const hangar = (...args: string[]) => runHangar(args, world.env);
const published = () => `${registry.host}/skills/packed:0.9.0`;

describe('REST', () => {
	// The builds that content, install and push read: `packed` and its registry tag.
	beforeAll(async () => {
		for (const tag of [undefined, published()]) expect((await callRest(serve.url, BuildSkill, { path: folder, tag })).status).toBe(200);
	});

	it('build answers the tag; the same folder builds to the same digest', async () => {
		const first = await callRest(serve.url, BuildSkill, { path: folder });
		expect(first).toMatchObject({ status: 200, body: { reference: 'packed' } });
		const reproduced = `${registry.host}/skills/packed:reproduced`;
		const tagged = await callRest(serve.url, BuildSkill, { path: folder, tag: reproduced });
		expect(tagged.body).toEqual({ reference: reproduced });
		const { body } = await callRest(serve.url, ListSkillBuilds, {});
		// Other tests build more of their own; this one looks at its two.
		const builds = (body as { builds: { tag: string; digest: string; name: string; version: string }[] }).builds.filter((build) => [reproduced, 'packed'].includes(build.tag));
		expect(builds.map((build) => build.tag)).toEqual([reproduced, 'packed']);
		expect(builds[0]!.digest).toBe(builds[1]!.digest);
		expect(builds[0]).toMatchObject({ name: 'packed', version: '0.9.0' });
	});

	it('build: 404 for a missing folder, 400 for an invalid skill or tag', async () => {
		expect((await callRest(serve.url, BuildSkill, { path: join(world.work, 'nowhere') })).status).toBe(404);
		const invalid = join(world.work, 'invalid', 'Bad');
		await mkdir(invalid, { recursive: true });
		await writeFile(join(invalid, 'SKILL.md'), '---\nname: Bad\n---\n');
		expect(await callRest(serve.url, BuildSkill, { path: invalid })).toMatchObject({ status: 400, body: { code: 'invalid_skill', message: expect.stringContaining('description is required') } });
		expect((await callRest(serve.url, BuildSkill, { path: folder, tag: 'Not A Tag' })).status).toBe(400);
	});

	it('content and install by local tag or skill name, with no registry involved', async () => {
		expect((await callRest(serve.url, GetSkillContent, { ref: 'packed' })).body).toMatchObject({ name: 'packed', version: '0.9.0', files: [{ path: 'SKILL.md' }, { path: 'scripts/x.sh', size: 7 }] });
		const installed = await callRest(serve.url, InstallSkill, { name: 'packed', clients: ['kiro'] });
		expect(installed).toMatchObject({ status: 201, body: { skill: { reference: 'packed' } } });
		expect(await readFile(join(world.userHome, '.kiro/skills/packed/scripts/x.sh'), 'utf8')).toBe('echo x\n');
	});

	it('several builds of one name are a 409 unless a tag equals the name', async () => {
		const other = await writeSkill(join(world.work, 'twin'), 'twin');
		await callRest(serve.url, BuildSkill, { path: other, tag: 'twin:1' });
		await callRest(serve.url, BuildSkill, { path: other, tag: 'twin:2' });
		expect(await callRest(serve.url, InstallSkill, { name: 'twin', clients: ['kiro'] })).toMatchObject({ status: 409, body: { code: 'ambiguous_build' } });
		expect((await callRest(serve.url, InstallSkill, { name: 'twin:2', clients: ['kiro'] })).status).toBe(201);
	});

	it('push: 204; then the registry serves it. 404 for an unknown build, 400 when asked to sign', async () => {
		const reference = published();
		expect(await callRest(serve.url, PushSkill, { reference, no_sign: true })).toMatchObject({ status: 204, body: undefined });
		const manifest = await fetch(`${registry.url}/v2/skills/packed/manifests/0.9.0`, { headers: { Accept: 'application/vnd.oci.image.index.v1+json' } });
		expect(manifest.status).toBe(200);
		expect((await callRest(serve.url, PushSkill, { reference: `${registry.host}/skills/absent:1`, no_sign: true })).status).toBe(404);
		expect(await callRest(serve.url, PushSkill, { reference, key: '/tmp/cosign.key' })).toMatchObject({ status: 400, body: { code: 'signing_unsupported' } });
	});

	it('push to a token registry: 401 without credentials, 204 with docker login\'s config', async () => {
		const reference = `${secured.host}/team/packed:1`;
		await callRest(serve.url, BuildSkill, { path: folder, tag: reference });
		expect(await callRest(serve.url, PushSkill, { reference, no_sign: true })).toMatchObject({ status: 401, body: { code: 'registry_unauthorized' } });
		await writeFile(join(world.env.DOCKER_CONFIG!, 'config.json'), JSON.stringify({ auths: { [secured.host]: { auth: Buffer.from('ci:pw').toString('base64') } } }));
		const pushed = await runHangar(['skill', 'push', reference], world.env);
		expect(pushed).toMatchObject({ code: 0, stdout: `Pushed ${reference}.\n` });
	});

	it('delete: 204, then 404', async () => {
		await callRest(serve.url, BuildSkill, { path: folder, tag: 'doomed:1' });
		expect((await callRest(serve.url, DeleteSkillBuild, { tag: 'doomed:1' })).status).toBe(204);
		expect((await callRest(serve.url, DeleteSkillBuild, { tag: 'doomed:1' })).status).toBe(404);
	});
});

describe('CLI', () => {
	it('validate: exit 0 for a valid skill, 1 with the errors for an invalid one', async () => {
		expect(await hangar('skill', 'validate', folder)).toMatchObject({ code: 0, stdout: 'Valid skill.\n' });
		const invalid = await writeSkill(join(world.work, 'cli'), 'cli-bad', { frontmatter: { name: 'other' } });
		const result = await hangar('skill', 'validate', invalid);
		expect(result).toMatchObject({ code: 1, stdout: '', stderr: 'hangar: invalid skill: skill name "other" must match directory name "cli-bad"\n' });
	});

	it('build, builds, install, ls, info, rm', async () => {
		const source = await writeSkill(join(world.work, 'cli'), 'cli-skill', { frontmatter: { version: '3.1.0' } });
		expect(await hangar('skill', 'build', source)).toMatchObject({ code: 0, stdout: 'cli-skill\n' });
		const builds = JSON.parse((await hangar('skill', 'builds', '--json')).stdout) as { tag: string }[];
		expect(builds.map((build) => build.tag)).toContain('cli-skill');
		const installed = await hangar('skill', 'install', 'cli-skill', '-c', 'cursor', '-c', 'codex');
		expect(installed.code).toBe(0);
		expect(installed.stdout).toMatch(/^Installed cli-skill \(sha256:[0-9a-f]{12}\) for cursor, codex\.\n$/);
		expect(installed.stderr).toMatch(/Installing cli-skill/);
		const table = await hangar('skill', 'ls');
		expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+VERSION\s+SCOPE\s+CLIENTS\s+REFERENCE$/);
		expect(table.stdout).toMatch(/^cli-skill\s+3\.1\.0\s+user\s+cursor,codex\s+cli-skill$/m);
		expect(JSON.parse((await hangar('skill', 'ls', '--json', '--client', 'codex')).stdout)).toEqual([expect.objectContaining({ metadata: expect.objectContaining({ name: 'cli-skill' }) })]);
		expect((await hangar('skill', 'info', 'cli-skill')).stdout).toMatch(/^version\s+3\.1\.0$/m);
		expect(await hangar('skill', 'rm', 'cli-skill')).toMatchObject({ code: 0, stdout: 'Uninstalled cli-skill.\n' });
		expect(await snapshot(join(world.userHome, '.cursor/skills/cli-skill'))).toEqual({});
	});

	it('project scope with --project-root', async () => {
		const source = await writeSkill(join(world.work, 'cli'), 'proj-cli');
		await hangar('skill', 'build', source);
		const root = await createProject(world.work, 'cli-project');
		const result = await runHangar(['skill', 'install', 'proj-cli', '--project-root', root, '-c', 'claude-code'], world.env);
		expect(result.code, result.stderr).toBe(0);
		expect(await exists(join(root, '.claude/skills/proj-cli/SKILL.md'))).toBe(true);
		expect(await exists(join(root, 'hangar.lock.yaml'))).toBe(true);
	});

	it('failures are one line with what to do next', async () => {
		const missing = await hangar('skill', 'install', 'never-built-anywhere', '-c', 'cursor');
		expect(missing.code).toBe(1);
		expect(missing.stderr.trim().split('\n').at(-1)).toMatch(/^hangar: skill "never-built-anywhere" not found .*install by OCI reference/);
		const invalid = await hangar('skill', 'install', 'x', '-c', 'notepad');
		expect(invalid.code).toBe(2);
		expect(invalid.stderr).toMatch(/unsupported client type: notepad/);
	});
});
