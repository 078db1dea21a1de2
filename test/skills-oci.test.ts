/**
 * Hangar's OCI client and ToolHive's skill artifact format against a real registry (CNCF
 * distribution), with skopeo as an independent OCI client: reproducible builds, push and
 * pull, digest checks on tampered storage, token and Basic auth with Docker's config.json,
 * the token cache, redirects that must not leak credentials, and referrers by tag schema.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HangarError } from '../protocol/index.js';
import { RegistryAuth } from '../server/oci/auth.js';
import { RegistryClient, sha256 } from '../server/oci/client.js';
import { CredentialStore } from '../server/oci/credentials.js';
import { canonicalJson, MEDIA_TYPES } from '../server/oci/media.js';
import { parseReference } from '../server/oci/reference.js';
import { SKILL_ARTIFACT_TYPE } from '../server/skills/artifact.js';
import { SkillBuilds } from '../server/skills/builds.js';
import { OciSkillSource } from '../server/skills/oci-source.js';
import { resolvePaths } from '../server/store/paths.js';
import { startFaultProxy } from './support/faults.js';
import { listen, startRegistry, startTokenServer, type Registry } from './support/registry.js';
import { writeSkill } from './support/skills.js';

const run = promisify(execFile);
const never = new AbortController().signal;

let work: string;
let open: Registry;
let secured: Registry;

beforeAll(async () => {
	work = await mkdtemp(join(tmpdir(), 'hangar-oci-'));
	[open, secured] = await Promise.all([startRegistry(), startRegistry({ token: { users: { alice: 's3cret' }, anonymous: ['pull'] } })]);
});

afterAll(async () => {
	await Promise.all([open?.stop(), secured?.stop()]);
	await rm(work, { recursive: true, force: true });
});

async function buildsIn(name: string, env: NodeJS.ProcessEnv = {}): Promise<SkillBuilds> {
	return new SkillBuilds(resolvePaths({ HANGAR_HOME: join(work, 'homes', name) }), env);
}

async function skillFolder(name: string): Promise<string> {
	return writeSkill(join(work, 'src', name), name, {
		frontmatter: { version: '1.2.0', license: 'MIT', 'allowed-tools': 'Read Grep' },
		files: { 'scripts/run.sh': '#!/bin/sh\necho run\n', 'b.md': 'b\n', 'a/z.md': 'z\n', 'references/guide.md': '# guide\n', '.secret': 'hidden\n' },
	});
}

/** Builds `folder` tagged `reference` in a fresh home and pushes it. */
async function buildAndPush(folder: string, reference: string, client = new RegistryClient()): Promise<SkillBuilds> {
	const builds = await buildsIn(`push-${Math.random().toString(36).slice(2)}`);
	await builds.build(folder, reference);
	await builds.push(client, reference, never);
	return builds;
}

describe('the skill artifact', () => {
	it('is reproducible: the same folder gives the same digest; SOURCE_DATE_EPOCH changes it', async () => {
		const folder = await skillFolder('repro-skill');
		const [first, second, dated] = [await buildsIn('repro-1'), await buildsIn('repro-2'), await buildsIn('repro-3', { SOURCE_DATE_EPOCH: '1700000000' })];
		for (const builds of [first, second, dated]) await builds.build(folder);
		const digest = async (builds: SkillBuilds) => (await builds.list())[0]!.digest;
		expect(await digest(first)).toBe(await digest(second));
		expect(await digest(dated)).not.toBe(await digest(first));
		expect(await first.list()).toEqual([{ tag: 'repro-skill', digest: await digest(first), name: 'repro-skill', description: 'The repro-skill skill, written by a test.', version: '1.2.0' }]);
	});

	it('has ToolHive\'s layout, and skopeo pulls what Hangar pushed', async () => {
		const folder = await skillFolder('layout-skill');
		const reference = `${open.host}/skills/layout-skill:1.2.0`;
		await buildAndPush(folder, reference);

		const { stdout: raw } = await run('skopeo', ['inspect', '--tls-verify=false', '--raw', `docker://${reference}`]);
		const index = JSON.parse(raw);
		expect(index).toMatchObject({ mediaType: MEDIA_TYPES.index, artifactType: SKILL_ARTIFACT_TYPE });
		expect(index.manifests.map((entry: { platform: object }) => entry.platform)).toEqual([
			{ os: 'linux', architecture: 'amd64' },
			{ os: 'linux', architecture: 'arm64' },
		]);
		expect(index.annotations).toMatchObject({
			'dev.toolhive.skills.name': 'layout-skill',
			'dev.toolhive.skills.version': '1.2.0',
			'org.opencontainers.image.created': '1970-01-01T00:00:00Z',
		});

		const copy = join(work, 'skopeo-copy');
		await run('skopeo', ['copy', '--src-tls-verify=false', `docker://${reference}`, `oci:${copy}`]);
		const [entry] = JSON.parse(await readFile(join(copy, 'index.json'), 'utf8')).manifests;
		const manifest = JSON.parse(await readFile(join(copy, 'blobs', 'sha256', entry.digest.slice(7)), 'utf8'));
		expect(manifest).toMatchObject({ artifactType: SKILL_ARTIFACT_TYPE, config: { mediaType: MEDIA_TYPES.config } });
		expect(manifest.layers).toHaveLength(1);
		expect(manifest.layers[0]).toMatchObject({ mediaType: MEDIA_TYPES.layerTarGzip, annotations: { 'org.opencontainers.image.title': 'skill.tar.gz' } });
		const config = JSON.parse(await readFile(join(copy, 'blobs', 'sha256', manifest.config.digest.slice(7)), 'utf8'));
		expect(config.config.Labels).toMatchObject({
			'dev.toolhive.skills.name': 'layout-skill',
			'dev.toolhive.skills.allowedTools': '["Read","Grep"]',
			'dev.toolhive.skills.license': 'MIT',
			'dev.toolhive.skills.files': JSON.stringify(['SKILL.md', 'a/z.md', 'b.md', 'references/guide.md', 'scripts/run.sh']),
		});
		const layer = join(copy, 'blobs', 'sha256', manifest.layers[0].digest.slice(7));
		const { stdout: listing } = await run('tar', ['-tvzf', layer]);
		const lines = listing.trim().split('\n');
		expect(lines.map((line) => line.split(/\s+/).at(-1))).toEqual(['SKILL.md', 'a/z.md', 'b.md', 'references/guide.md', 'scripts/run.sh']);
		expect(lines.every((line) => line.startsWith('-rw-r--r-- 0/0'))).toBe(true);
		const diffId = createHash('sha256').update(await promisify(execFile)('gzip', ['-dc', layer], { encoding: 'buffer' }).then((result) => result.stdout)).digest('hex');
		expect(config.rootfs.diff_ids).toEqual([`sha256:${diffId}`]);
	});

	it('pulls through the index to the layer, checks it, and extracts exactly the files', async () => {
		const folder = await skillFolder('pull-skill');
		const reference = `${open.host}/skills/pull-skill:1.2.0`;
		await buildAndPush(folder, reference);
		const source = new OciSkillSource(new RegistryClient(), resolvePaths({ HANGAR_HOME: join(work, 'homes', 'puller') }));
		const artifact = await source.resolve(parseReference(reference), never);
		expect(artifact.annotations['dev.toolhive.skills.name']).toBe('pull-skill');
		const into = join(work, 'pulled');
		const files = await source.extract(artifact, into, never);
		expect(files.map((file) => file.path)).toEqual(['SKILL.md', 'a/z.md', 'b.md', 'references/guide.md', 'scripts/run.sh']);
		expect(await readFile(join(into, 'scripts/run.sh'), 'utf8')).toBe('#!/bin/sh\necho run\n');
		expect(await readdir(into)).not.toContain('.secret');
		expect(await source.cache.hasBlob(artifact.layer.digest)).toBe(true);
	});
});

describe('integrity', () => {
	/** Overwrites a blob in the registry's own storage, as a corrupted disk or a hostile mirror would. */
	async function tamper(registry: Registry, digest: string, bytes: Buffer): Promise<void> {
		const hex = digest.slice(7);
		await writeFile(join(registry.storage, 'docker/registry/v2/blobs/sha256', hex.slice(0, 2), hex, 'data'), bytes);
	}

	it('a layer whose bytes do not match its digest is refused, and nothing is cached or extracted', async () => {
		const reference = `${open.host}/skills/tampered-layer:1`;
		const builds = await buildAndPush(await skillFolder('tampered-layer'), reference);
		const build = (await builds.find(reference))!;
		const layer = await builds.layerOf(build);
		await tamper(open, layer.digest, Buffer.alloc(layer.size, 1));
		const source = new OciSkillSource(new RegistryClient(), resolvePaths({ HANGAR_HOME: join(work, 'homes', 'tamper') }));
		const artifact = await source.resolve(parseReference(reference), never);
		const into = join(work, 'tampered-out');
		const error = await source.extract(artifact, into, never).catch((e: unknown) => e);
		expect(error).toMatchObject({ status: 502, code: 'digest_mismatch' });
		expect(await source.cache.hasBlob(layer.digest)).toBe(false);
		await expect(readdir(into)).rejects.toThrow(/ENOENT/);
	});

	it('a manifest whose bytes do not match the digest the registry announces is refused', async () => {
		const reference = `${open.host}/skills/tampered-manifest:1`;
		const builds = await buildAndPush(await skillFolder('tampered-manifest'), reference);
		const { digest } = (await builds.find(reference))!.descriptor;
		const original = (await builds.layout.readBlob(digest))!;
		await tamper(open, digest, Buffer.from(original.toString().replace('tampered-manifest', 'tampered-manifesx')));
		const error = await new RegistryClient().getManifest(parseReference(reference), '1', never).catch((e: unknown) => e);
		expect(error).toMatchObject({ status: 502, code: 'digest_mismatch' });
		const byDigest = await new RegistryClient().getManifest(parseReference(reference), digest, never).catch((e: unknown) => e);
		expect(byDigest).toMatchObject({ status: 502, code: 'digest_mismatch' });
	});

	it('unknown tags and repositories are 404', async () => {
		const client = new RegistryClient();
		await expect(client.getManifest({ registry: open.host, repository: 'skills/nothing' }, 'v1', never)).rejects.toMatchObject({ status: 404 });
		const error = (await client.getManifest({ registry: open.host, repository: 'skills/pull-skill' }, 'v9', never).catch((e: unknown) => e)) as HangarError;
		expect(error.status).toBe(404);
		expect(error.message).toContain('skills/pull-skill:v9');
	});
});

describe('token auth', () => {
	const dockerConfig = async (name: string, auths: Record<string, object>) => {
		const folder = join(work, 'docker', name);
		await mkdir(folder, { recursive: true });
		await writeFile(join(folder, 'config.json'), JSON.stringify({ auths }));
		return { DOCKER_CONFIG: folder, HOME: folder };
	};
	const basic = (user: string, password: string) => Buffer.from(`${user}:${password}`).toString('base64');

	it('pushes with credentials from Docker\'s config.json, and pulls anonymously with one token per scope', async () => {
		const env = await dockerConfig('alice', { [`http://${secured.host}`]: { auth: basic('alice', 's3cret') } });
		const reference = `${secured.host}/team/token-skill:1`;
		await buildAndPush(await skillFolder('token-skill'), reference, new RegistryClient({ env }));
		expect(secured.token!.requests.filter((request) => request.scope === 'repository:team/token-skill:pull,push')).toEqual([
			expect.objectContaining({ user: 'alice' }),
		]);

		const anonymous = new RegistryClient({ env: await dockerConfig('nobody', {}) });
		const before = secured.token!.requests.length;
		await anonymous.getManifest(parseReference(reference), '1', never);
		await anonymous.getManifest(parseReference(reference), '1', never);
		await anonymous.resolve(parseReference(reference), '1', never);
		const pulls = secured.token!.requests.slice(before);
		expect(pulls).toEqual([{ scope: 'repository:team/token-skill:pull', service: secured.token!.service }]);
	});

	it('a push without credentials, or with a wrong password, is a 401 that says what to do', async () => {
		const folder = await skillFolder('denied-skill');
		const reference = `${secured.host}/team/denied-skill:1`;
		const anonymous = await buildAndPush(folder, reference, new RegistryClient({ env: await dockerConfig('anon', {}) })).catch((e: unknown) => e);
		expect(anonymous).toMatchObject({ status: 401, code: 'registry_unauthorized' });
		expect((anonymous as Error).message).toMatch(/docker login/);
		const wrong = await dockerConfig('wrong', { [secured.host]: { username: 'alice', password: 'nope' } });
		await expect(buildAndPush(folder, reference, new RegistryClient({ env: wrong }))).rejects.toMatchObject({ status: 401 });
	});

	it('follows redirects, keeping Authorization on the registry\'s origin only', async () => {
		const reference = `${secured.host}/team/redirect-skill:1`;
		const env = await dockerConfig('alice-redirect', { [secured.host]: { auth: basic('alice', 's3cret') } });
		const builds = await buildAndPush(await skillFolder('redirect-skill'), reference, new RegistryClient({ env }));
		const layer = await builds.layerOf((await builds.find(reference))!);
		const layerBytes = (await builds.layout.readBlob(layer.digest))!;

		const seen: Record<string, string | undefined>[] = [];
		const storage = createServer((request, response) => {
			seen.push({ path: request.url, authorization: request.headers.authorization });
			response.writeHead(200, { 'Content-Length': String(layerBytes.length) }).end(layerBytes);
		});
		const storagePort = await listen(storage);
		const front = await startFaultProxy(secured.url);
		front.fault = (request) => {
			if (request.path.startsWith('/v2/team/redirect-skill/blobs/') && !request.path.includes('hop')) {
				return { kind: 'redirect', status: 307, location: `${front.url}${request.path}?hop=1` };
			}
			if (request.path.includes('hop=1')) return { kind: 'redirect', status: 302, location: `http://localhost:${storagePort}/bucket/layer` };
			return undefined;
		};
		try {
			const source = new OciSkillSource(new RegistryClient({ env }), resolvePaths({ HANGAR_HOME: join(work, 'homes', 'redirect') }));
			const artifact = await source.resolve(parseReference(`${front.host}/team/redirect-skill:1`), never);
			const files = await source.extract(artifact, join(work, 'redirected'), never);
			expect(files.map((file) => file.path)).toContain('SKILL.md');
			const hop = front.requests.find((request) => request.path.includes('hop=1'))!;
			expect(hop.headers.authorization).toMatch(/^Bearer /);
			expect(seen).toEqual([{ path: '/bucket/layer', authorization: undefined }]);
		} finally {
			await front.stop();
			await new Promise((resolve) => storage.close(resolve));
		}
	});

	it('meets a Basic challenge with the stored username and password', async () => {
		const front = await startFaultProxy(open.url);
		const expected = `Basic ${basic('bob', 'pw')}`;
		front.fault = (request) =>
			request.headers.authorization === expected ? undefined : { kind: 'status', status: 401, headers: { 'WWW-Authenticate': 'Basic realm="registry"' } };
		try {
			const reference = `${open.host}/skills/basic-skill:1`;
			await buildAndPush(await skillFolder('basic-skill'), reference);
			const withCredentials = new RegistryClient({ env: await dockerConfig('bob', { [front.host]: { auth: basic('bob', 'pw') } }) });
			const pulled = await withCredentials.getManifest({ registry: front.host, repository: 'skills/basic-skill' }, '1', never);
			expect(pulled.document.kind).toBe('index');
			const without = new RegistryClient({ env: await dockerConfig('nobob', {}) });
			await expect(without.getManifest({ registry: front.host, repository: 'skills/basic-skill' }, '1', never)).rejects.toMatchObject({ status: 401 });
		} finally {
			await front.stop();
		}
	});
});

describe('referrers', () => {
	it('a manifest with a subject is found through the sha256-<hex> tag on a registry without the referrers API', async () => {
		const reference = `${open.host}/skills/referred-skill:1`;
		const builds = await buildAndPush(await skillFolder('referred-skill'), reference);
		const subject = (await builds.find(reference))!.descriptor;
		const client = new RegistryClient();
		const repo = { registry: open.host, repository: 'skills/referred-skill' };
		const empty = Buffer.from('{}');
		await client.pushBlob(repo, empty, never);
		const note = canonicalJson({
			schemaVersion: 2,
			mediaType: MEDIA_TYPES.manifest,
			artifactType: 'application/vnd.hangar.test.note',
			config: { mediaType: MEDIA_TYPES.empty, digest: sha256(empty), size: 2 },
			layers: [{ mediaType: MEDIA_TYPES.empty, digest: sha256(empty), size: 2 }],
			subject: { mediaType: subject.mediaType, digest: subject.digest, size: subject.size },
			annotations: { note: 'hello' },
		});
		const noteDigest = await client.putManifest(repo, sha256(note), note, MEDIA_TYPES.manifest, never);

		expect(await client.referrers(repo, subject.digest, never)).toEqual([
			expect.objectContaining({ digest: noteDigest, artifactType: 'application/vnd.hangar.test.note', annotations: { note: 'hello' } }),
		]);
		expect(await client.referrers(repo, subject.digest, never, 'application/other')).toEqual([]);
		const { stdout } = await run('skopeo', ['inspect', '--tls-verify=false', '--raw', `docker://${open.host}/skills/referred-skill:${subject.digest.replace(':', '-')}`]);
		expect(JSON.parse(stdout).manifests.map((entry: { digest: string }) => entry.digest)).toEqual([noteDigest]);
	});
});

describe('transport', () => {
	it('loopback registries use http; others https unless listed as insecure', () => {
		const client = new RegistryClient({ env: { HANGAR_INSECURE_REGISTRIES: 'registry.internal:5000' } });
		expect(client.baseUrl('127.0.0.1:5000')).toBe('http://127.0.0.1:5000');
		expect(client.baseUrl('localhost:5000')).toBe('http://localhost:5000');
		expect(client.baseUrl('[::1]:5000')).toBe('http://[::1]:5000');
		expect(client.baseUrl('ghcr.io')).toBe('https://ghcr.io');
		expect(client.baseUrl('docker.io')).toBe('https://registry-1.docker.io');
		expect(client.baseUrl('registry.internal:5000')).toBe('http://registry.internal:5000');
	});

	it('parses references the way Docker does', () => {
		expect(parseReference('ghcr.io/org/skill:1.0')).toEqual({ registry: 'ghcr.io', repository: 'org/skill', tag: '1.0' });
		expect(parseReference('skill')).toEqual({ registry: 'docker.io', repository: 'library/skill' });
		expect(parseReference('localhost:5000/a/b@sha256:' + 'a'.repeat(64))).toEqual({ registry: 'localhost:5000', repository: 'a/b', digest: `sha256:${'a'.repeat(64)}` });
		expect(() => parseReference('ghcr.io/Org/skill')).toThrow(/lowercase/);
		expect(() => parseReference('ghcr.io/org/skill:bad tag')).toThrow(/invalid tag/);
	});
});

describe('token realms go through the outbound address policy', () => {
	it('a registry elsewhere cannot send Hangar to a token service on this machine; a registry on this machine can', async () => {
		const tokens = await startTokenServer();
		try {
			const auth = new RegistryAuth(new CredentialStore({}));
			const challenge = { scheme: 'bearer', params: { realm: tokens.realm, service: tokens.service } };
			const signal = AbortSignal.timeout(20_000);
			// 203.0.113.7 is a public address (documentation range): no DNS, no connection needed.
			const refused = await auth.authorize('203.0.113.7', 'repository:x/y:pull', [challenge], signal).then(() => undefined, (error: HangarError) => error);
			expect(refused).toMatchObject({ status: 502, message: expect.stringContaining('loopback') });
			expect(tokens.requests).toEqual([]);
			expect(await auth.authorize('127.0.0.1:5000', 'repository:x/y:pull', [challenge], signal)).toMatch(/^Bearer /);
			expect(tokens.requests).toHaveLength(1);
		} finally {
			await tokens.stop();
		}
	});
});
