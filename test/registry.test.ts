/**
 * Registries over REST (a spawned `hangar serve`) against real sources: the embedded catalog,
 * registry files on disk, and registry files and MCP-Registry-API upstreams served over HTTP
 * on 127.0.0.1. Every status the update operation lists, conversion to the legacy shapes,
 * policy, caching, and named registries with precedence.
 */
import { readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar, spawnDaemon, startServe, type ServeProcess } from './support/processes.js';
import {
	apiServers,
	apiSkills,
	embeddedRegistry,
	fixture,
	fixturePath,
	generatedServers,
	json,
	silence,
	startUpstream,
	type Upstream,
} from './fixtures/registry/upstream.js';
import { GetRegistry, ListCatalogServers } from '../protocol/index.js';
import { DEFAULT_REGISTRY_PRIORITY } from '../server/registry/config.js';

let home: TestHome;
let serve: ServeProcess;
let upstream: Upstream;

const TIMEOUT_MS = 1_500;
const embedded = embeddedRegistry();

interface Answer {
	status: number;
	body: any;
	headers: Headers;
}

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
	const init: RequestInit = { method };
	if (body !== undefined) {
		init.headers = { 'Content-Type': 'application/json' };
		init.body = typeof body === 'string' ? body : JSON.stringify(body);
	}
	const response = await fetch(`${serve.url}${path}`, init);
	const text = await response.text();
	return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

const get = (path: string) => call('GET', path);
const put = (body: unknown, name = 'default') => call('PUT', `/api/v1beta/registry/${name}`, body);
const reset = () => put({});

/** Every test starts from the embedded `default` at its default priority, with no named registry and no policy. */
async function startFromEmbedded(): Promise<void> {
	await rm(join(home.path, 'config', 'registry_policy.json'), { force: true });
	const { body } = await get('/api/v1beta/registry');
	for (const { name } of body.registries as { name: string }[]) {
		if (name !== 'default') expect((await call('DELETE', `/api/v1beta/registry/${name}`)).status).toBe(204);
	}
	expect((await put({ priority: DEFAULT_REGISTRY_PRIORITY })).status).toBe(200);
}

beforeAll(async () => {
	home = await createTestHome();
	upstream = await startUpstream();
	serve = await startServe({ ...home.env, HANGAR_REGISTRY_TIMEOUT_MS: String(TIMEOUT_MS) });
});

beforeEach(startFromEmbedded);

afterAll(async () => {
	await serve?.stop();
	await upstream?.close();
	await home?.dispose();
});

describe('the embedded registry', () => {
	it('holds at least 40 real servers and 15 skills in the upstream format', () => {
		const { servers, skills } = embedded.data;
		expect(servers.length).toBeGreaterThanOrEqual(40);
		expect(skills.length).toBeGreaterThanOrEqual(15);
		for (const server of servers) {
			expect(server.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
			expect(server.description.length, server.name).toBeLessThanOrEqual(100);
			expect(Boolean(server.packages?.length) !== Boolean(server.remotes?.length), server.name).toBe(true);
		}
		for (const skill of skills) {
			expect(skill.namespace).toMatch(/^[a-z0-9.-]+$/);
			expect(skill.packages.every((pkg: { registryType: string }) => ['oci', 'git'].includes(pkg.registryType))).toBe(true);
		}
		expect(servers.filter((server) => server.remotes).length).toBeGreaterThanOrEqual(10);
	});

	it('is the default registry, with counts that match its content', async () => {
		const { status, body } = await get('/api/v1beta/registry');
		expect(status).toBe(200);
		const packaged = embedded.data.servers.filter((server) => server.packages).length;
		expect(body.registries).toEqual([
			expect.objectContaining({
				name: 'default',
				type: 'default',
				source: '',
				server_count: packaged,
				remote_server_count: embedded.data.servers.length - packaged,
				skill_count: embedded.data.skills.length,
				auth_status: 'none',
				auth_type: '',
			}),
		]);
	});

	it('answers image and remote servers in the legacy shape, by full or short name', async () => {
		const fetchServer = await get('/api/v1beta/registry/default/servers/fetch');
		expect(fetchServer.status).toBe(200);
		expect(fetchServer.body).toEqual({
			is_remote: false,
			server: expect.objectContaining({
				name: 'io.github.stacklok/fetch',
				image: expect.stringMatching(/^ghcr\.io\/stackloklabs\/gofetch\/server:/),
				transport: 'streamable-http',
				target_port: 8080,
				tier: 'Community',
				tools: ['fetch'],
			}),
		});
		const remote = await get(`/api/v1beta/registry/default/servers/${encodeURIComponent('io.github.stacklok/github-remote')}`);
		expect(remote.body).toMatchObject({ is_remote: true, remote_server: { url: 'https://api.githubcopilot.com/mcp', transport: 'streamable-http' } });
		const npm = await get('/api/v1beta/registry/default/servers/context7');
		expect(npm.body.server.image).toBe('npx://@upstash/context7-mcp@2.1.0');
		const github = await get('/api/v1beta/registry/default/servers/github');
		expect(github.body.server.env_vars).toContainEqual(expect.objectContaining({ name: 'GITHUB_PERSONAL_ACCESS_TOKEN', required: true, secret: true }));
	});

	it('lists its servers and 404s unknown names', async () => {
		const { body } = await get('/api/v1beta/registry/default/servers');
		expect(body.servers.length + body.remote_servers.length).toBe(embedded.data.servers.length);
		expect((await get('/api/v1beta/registry/default/servers/no-such-server')).status).toBe(404);
		expect((await get('/api/v1beta/registry/nowhere')).status).toBe(404);
		expect((await get('/api/v1beta/registry/nowhere/servers')).status).toBe(404);
	});
});

describe('pointing default at a registry file', () => {
	it('converts packages, remotes and groups to the legacy shapes', async () => {
		expect(await put({ local_path: fixturePath('team-registry.json') })).toMatchObject({ status: 200, body: { type: 'file' } });
		const { body } = await get('/api/v1beta/registry/default');
		expect(body).toMatchObject({ name: 'default', type: 'file', source: fixturePath('team-registry.json'), version: '2.1.0', server_count: 3 });
		const { servers, remote_servers, groups } = body.registry;
		expect(servers['io.example.team/oci-http']).toEqual({
			name: 'io.example.team/oci-http',
			title: 'Team HTTP server',
			description: 'An OCI image speaking streamable HTTP on port 9000',
			repository_url: 'https://github.com/example/oci-http',
			status: 'Active',
			tier: 'Community',
			tools: ['lookup', 'update'],
			tags: ['team', 'http'],
			transport: 'streamable-http',
			image: 'ghcr.io/example/oci-http:1.2.3',
			target_port: 9000,
			args: ['--port', '9000'],
			env_vars: [
				{ name: 'TEAM_API_KEY', description: 'API key', required: true, secret: true },
				{ name: 'TEAM_REGION', description: 'Region', default: 'eu-west-1' },
				{ name: 'TEAM_TOKEN', description: 'Session token', required: true, secret: true },
			],
			permissions: { network: { outbound: { allow_host: ['api.example.com'], allow_port: [443] } } },
		});
		expect(servers['io.example.team/node-tool']).toMatchObject({ image: 'npx://@example/node-tool@2.0.0', transport: 'stdio' });
		expect(servers['io.example.team/py-tool']).toMatchObject({ image: 'uvx://example-py-tool@0.4.1' });
		expect(servers['io.example.team/dotnet-only']).toBeUndefined();
		expect(remote_servers['io.example.team/hosted']).toEqual({
			name: 'io.example.team/hosted',
			title: 'Hosted team server',
			description: 'A remote server behind OAuth',
			status: 'Active',
			tier: 'Official',
			transport: 'sse',
			url: 'https://mcp.example.com/sse',
			headers: [{ name: 'X-API-Key', description: 'API key', required: true, secret: true }],
			oauth_config: { issuer: 'https://auth.example.com', client_id: 'team-client', scopes: ['openid'] },
		});
		expect(groups).toEqual([
			{
				name: 'core',
				description: 'The servers every team member runs',
				servers: { 'io.example.team/grouped': expect.objectContaining({ image: 'ghcr.io/example/grouped:1.0.0' }) },
				remote_servers: {},
			},
		]);
	});

	it('resolves unique short names and refuses ambiguous ones', async () => {
		await put({ local_path: fixturePath('team-registry.json') });
		expect((await get('/api/v1beta/registry/default/servers/py-tool')).body.server.name).toBe('io.example.team/py-tool');
		const ambiguous = await get('/api/v1beta/registry/default/servers/hosted');
		expect(ambiguous.status).toBe(409);
		expect(ambiguous.body.message).toContain('io.example.other/hosted');
	});

	it('takes effect for every process and survives restarts', async () => {
		await put({ local_path: fixturePath('team-registry.json') });
		const daemon = spawnDaemon(home.env);
		try {
			await daemon.client.initialize('registry-test');
			const detail = await daemon.client.request(GetRegistry, { name: 'default' });
			expect(detail).toMatchObject({ type: 'file', server_count: 3 });
		} finally {
			await daemon.stop();
		}
		const cli = await runHangar(['registry', 'ls', '--json'], home.env);
		expect(JSON.parse(cli.stdout)).toEqual([expect.objectContaining({ name: 'default', type: 'file', server_count: 3 })]);
	});

	it('an empty body resets to the embedded registry', async () => {
		await put({ local_path: fixturePath('team-registry.json') });
		expect(await reset()).toMatchObject({ status: 200, body: { type: 'default' } });
		expect((await get('/api/v1beta/registry')).body.registries[0]).toMatchObject({ type: 'default', source: '' });
		expect((await get('/api/v1beta/registry/default/servers/fetch')).status).toBe(200);
	});

	it('re-reads a file that changed', async () => {
		const path = join(home.path, 'editable.json');
		await writeFile(path, readFileSync(fixturePath('second-registry.json')));
		await put({ local_path: path });
		expect((await get('/registry/default/v0.1/servers')).body.metadata.total).toBe(2);
		const grown = fixture('second-registry.json') as { data: { servers: object[] } };
		grown.data.servers.push(...generatedServers(3));
		await writeFile(path, JSON.stringify(grown));
		expect((await get('/registry/default/v0.1/servers')).body.metadata.total).toBe(5);
	});
});

describe('update statuses', () => {
	it('400: more than one source, missing or relative files, bad JSON, incomplete auth', async () => {
		const both = await put({ url: 'https://example.com/r.json', local_path: '/tmp/r.json' });
		expect(both.status).toBe(400);
		expect(both.body.message).toContain('cannot specify more than one registry type');
		const missing = await put({ local_path: join(home.path, 'missing.json') });
		expect(missing).toMatchObject({ status: 400, body: { code: 'registry_file_not_found' } });
		expect((await put({ local_path: 'relative/registry.json' })).status).toBe(400);
		expect((await put({ local_path: 'https://example.com/registry.json' })).status).toBe(400);
		expect((await put('{"url": ')).status).toBe(400);
		const auth = await put({ local_path: fixturePath('team-registry.json'), auth: { issuer: 'https://idp.example.com' } });
		expect(auth.status).toBe(400);
		expect(auth.body.message).toContain('auth.issuer and auth.client_id are required');
		expect((await get('/api/v1beta/registry')).body.registries[0].type).toBe('default');
	});

	it('400: plain http and private addresses are refused unless allow_private_ip', async () => {
		upstream.route('/guarded.json', json(fixture('second-registry.json')));
		const plain = await put({ url: `${upstream.url}/guarded.json` });
		expect(plain).toMatchObject({ status: 400, body: { code: 'registry_address_refused' } });
		const loopbackLiteral = await put({ url: 'https://127.0.0.1:1/guarded.json' });
		expect(loopbackLiteral).toMatchObject({ status: 400, body: { code: 'registry_address_refused' } });
		const privateLiteral = await put({ url: 'https://10.1.2.3/guarded.json' });
		expect(privateLiteral).toMatchObject({ status: 400, body: { code: 'registry_address_refused' } });
		// A name is checked where it resolves: localhost is loopback.
		const loopbackName = await put({ url: 'https://localhost:1/guarded.json' });
		expect(loopbackName).toMatchObject({ status: 400, body: { code: 'registry_address_refused' } });
		expect(loopbackName.body.message).toContain('allow_private_ip');
		expect(upstream.requests).not.toContain('/guarded.json');
		expect(await put({ url: `${upstream.url}/guarded.json`, allow_private_ip: true })).toMatchObject({ status: 200, body: { type: 'url' } });
	});

	it('403: a policy that locks registries or limits their sources', async () => {
		const policy = join(home.path, 'config', 'registry_policy.json');
		await mkdir(join(home.path, 'config'), { recursive: true });
		await writeFile(policy, JSON.stringify({ locked: true, message: 'managed by IT' }));
		const locked = await put({ local_path: fixturePath('team-registry.json') });
		expect(locked).toMatchObject({ status: 403, body: { code: 'registry_policy' } });
		expect(locked.body.message).toContain('managed by IT');
		expect((await reset()).status).toBe(403);
		expect((await call('POST', '/api/v1beta/registry', { name: 'team', source: fixturePath('team-registry.json') })).status).toBe(403);

		await writeFile(policy, JSON.stringify({ allowed_sources: [fixturePath('team-registry.json')] }));
		expect((await put({ local_path: fixturePath('second-registry.json') })).status).toBe(403);
		expect((await put({ local_path: fixturePath('team-registry.json') })).status).toBe(200);

		// URLs are compared as they would be stored, and refused before any request is made.
		upstream.route('/allowed/team.json', json(fixture('team-registry.json')));
		upstream.route('/refused/team.json', json(fixture('team-registry.json')));
		await writeFile(policy, JSON.stringify({ allowed_sources: [`${upstream.url}/allowed/`] }));
		upstream.requests.length = 0;
		const refused = await put({ url: `${upstream.url.toUpperCase()}/refused/team.json`, allow_private_ip: true });
		expect(refused).toMatchObject({ status: 403, body: { code: 'registry_policy' } });
		expect(upstream.requests).toEqual([]);
		expect((await put({ url: `${upstream.url.toUpperCase()}/allowed/team.json`, allow_private_ip: true })).status).toBe(200);

		await writeFile(policy, '{ not json');
		expect((await reset()).status).toBe(403);
		await rm(policy);
		expect((await reset()).status).toBe(200);
	});

	it('404: only existing registries can be updated', async () => {
		const other = await put({ local_path: fixturePath('team-registry.json') }, 'other');
		expect(other).toMatchObject({ status: 404, body: { code: 'registry_not_found' } });
	});

	it('502: the source answers with something that is not a registry', async () => {
		upstream.route('/broken.json', json('{"data": [1, 2', 200));
		upstream.route('/html.json', (_request, response) => response.writeHead(200, { 'Content-Type': 'text/html' }).end('<html></html>'));
		upstream.route('/missing.json', json({ error: 'gone' }, 404));
		upstream.route('/empty.json', json({ version: '1', data: { servers: [] } }));
		upstream.route('/bad-name.json', json({ data: { servers: [{ name: 'no slash here' }] } }));
		for (const path of ['/broken.json', '/html.json', '/missing.json', '/empty.json', '/bad-name.json']) {
			const answer = await put({ url: `${upstream.url}${path}`, allow_private_ip: true });
			expect(answer.status, path).toBe(502);
			expect(answer.body.code, path).toBe('registry_invalid');
		}
		const badName = await put({ url: `${upstream.url}/bad-name.json`, allow_private_ip: true });
		expect(badName.body.message).toContain('data.servers[0].name');
		expect((await get('/api/v1beta/registry')).body.registries[0].type).toBe('default');
	});

	it('502: the legacy ToolHive format is recognised and named', async () => {
		upstream.route('/legacy.json', json(fixture('legacy-registry.json')));
		for (const body of [{ url: `${upstream.url}/legacy.json`, allow_private_ip: true }, { local_path: fixturePath('legacy-registry.json') }]) {
			const answer = await put(body);
			expect(answer.status).toBe(502);
			expect(answer.body.code).toBe('registry_legacy_format');
			expect(answer.body.message).toMatch(/legacy ToolHive registry format/);
		}
	});

	it('504: the source is unreachable or does not answer in time', async () => {
		const closed = await put({ url: 'http://127.0.0.1:1/registry.json', allow_private_ip: true });
		expect(closed).toMatchObject({ status: 504, body: { code: 'registry_unreachable' } });
		upstream.route('/slow.json', silence);
		const slow = await put({ url: `${upstream.url}/slow.json`, allow_private_ip: true });
		// Told apart from the closed port above: the source answered the connection, then nothing in time.
		expect(slow).toMatchObject({ status: 504, body: { code: 'registry_unreachable', message: expect.stringContaining('did not answer in time') } });
		const probe = await put({ api_url: 'http://127.0.0.1:1', allow_private_ip: true });
		expect(probe.status).toBe(504);
	});
});

describe('remote sources', () => {
	it('detects a registry file by its .json path and an API by probing', async () => {
		upstream.route('/team.json', json(fixture('team-registry.json')));
		expect((await put({ url: `${upstream.url}/team.json`, allow_private_ip: true })).body).toEqual({ type: 'url' });
		expect((await get('/api/v1beta/registry')).body.registries[0]).toMatchObject({ type: 'url', source: `${upstream.url}/team.json` });

		upstream.route('/probe-api/v0.1/servers', apiServers(generatedServers(3)));
		expect((await put({ api_url: `${upstream.url}/probe-api`, allow_private_ip: true })).body).toEqual({ type: 'api' });
		// `url` and `api_url` are detected alike; a URL that is not an API is read as a registry file.
		upstream.route('/plain', json(fixture('second-registry.json')));
		expect((await put({ url: `${upstream.url}/plain`, allow_private_ip: true })).body).toEqual({ type: 'url' });
	});

	it('follows API cursors (either spelling), skips deleted servers and reads skills', async () => {
		const servers = generatedServers(25, 'io.example.paged');
		upstream.route('/paged/v0.1/servers', apiServers(servers, { pageSize: 7, snakeCase: true, deleted: ['io.example.paged/server-00003'] }));
		upstream.route('/paged/v0.1/x/dev.toolhive/skills', apiSkills((fixture('team-registry.json') as any).data.skills, { pageSize: 2 }));
		upstream.requests.length = 0;
		expect((await put({ api_url: `${upstream.url}/paged`, allow_private_ip: true })).body).toEqual({ type: 'api' });
		const pages = upstream.requests.filter((path) => path.startsWith('/paged/v0.1/servers') && path.includes('cursor='));
		expect(pages.length).toBe(3);
		const { body } = await get('/registry/default/v0.1/servers?limit=200');
		expect(body.metadata.total).toBe(24);
		expect(body.servers.map((server: { name: string }) => server.name)).not.toContain('io.example.paged/server-00003');
		expect((await get('/registry/default/v0.1/x/dev.toolhive/skills')).body.metadata.total).toBe(3);
	});

	it('serves the cached copy until refreshed, then the new content', async () => {
		const servers = generatedServers(4, 'io.example.cached');
		upstream.route('/cached/v0.1/servers', apiServers(servers));
		await put({ api_url: `${upstream.url}/cached`, allow_private_ip: true });
		servers.push(...generatedServers(2, 'io.example.fresh'));
		expect((await get('/registry/default/v0.1/servers')).body.metadata.total).toBe(4);
		expect(await call('POST', '/api/v1beta/registry/default/refresh')).toMatchObject({ status: 200, body: { status: 'refreshed' } });
		expect((await get('/registry/default/v0.1/servers')).body.metadata.total).toBe(6);
	});

	it('a search finds what a refresh brought in: each load has its own search index', async () => {
		const servers = generatedServers(20, 'io.example.indexed');
		upstream.route('/indexed/v0.1/servers', apiServers(servers));
		await put({ api_url: `${upstream.url}/indexed`, allow_private_ip: true });
		const zebras = async (registry: string) =>
			(await get(`/registry/${registry}/v0.1/servers?q=zebra&limit=200`)).body.servers.map((server: { name: string }) => server.name);
		// Searched once before the refresh, in one registry and in all of them: both indexes exist.
		expect(await zebras('default')).toEqual(['io.example.indexed/server-00000', 'io.example.indexed/server-00010']);
		expect(await zebras('all')).not.toContain('io.example.indexed/zebra-crossing');
		servers.push({ ...generatedServers(1)[0], name: 'io.example.indexed/zebra-crossing', description: 'Added upstream after the first search' });
		expect(await call('POST', '/api/v1beta/registry/default/refresh')).toMatchObject({ status: 200 });
		// A name segment ranks before a description match.
		expect(await zebras('default')).toEqual(['io.example.indexed/zebra-crossing', 'io.example.indexed/server-00000', 'io.example.indexed/server-00010']);
		expect(await zebras('all')).toContain('io.example.indexed/zebra-crossing');
	});

	it('fetches again once the cache expires, and serves a stale copy while the upstream is down', async () => {
		const servers = generatedServers(2, 'io.example.ttl');
		const ttlUpstream = await startUpstream();
		ttlUpstream.route('/v0.1/servers', apiServers(servers));
		const ttlHome = await createTestHome();
		const ttlServe = await startServe({ ...ttlHome.env, HANGAR_REGISTRY_CACHE_TTL_MS: '300', HANGAR_REGISTRY_TIMEOUT_MS: '1000' });
		try {
			const base = ttlServe.url;
			const update = await fetch(`${base}/api/v1beta/registry/default`, {
				method: 'PUT',
				headers: { 'Content-Type': 'application/json' },
				body: JSON.stringify({ api_url: ttlUpstream.url, allow_private_ip: true }),
			});
			expect(update.status).toBe(200);
			servers.push(...generatedServers(1, 'io.example.later'));
			await new Promise((resolve) => setTimeout(resolve, 400));
			const total = async () => ((await (await fetch(`${base}/registry/default/v0.1/servers`)).json()) as any).metadata.total;
			expect(await total()).toBe(3);
			await ttlUpstream.close();
			await new Promise((resolve) => setTimeout(resolve, 400));
			expect(await total()).toBe(3);
		} finally {
			await ttlServe.stop();
			await ttlHome.dispose();
		}
	});

	it('an API that requires credentials is a 502 to configure', async () => {
		upstream.route('/private-api/v0.1/servers', json({ error: 'unauthorized' }, 401));
		const answer = await put({ api_url: `${upstream.url}/private-api`, allow_private_ip: true });
		expect(answer).toMatchObject({ status: 502, body: { code: 'registry_auth_required' } });
	});

	it('503 registry_unavailable when a configured upstream cannot be reached and nothing is cached', async () => {
		const gone = await startUpstream();
		gone.route('/v0.1/servers', apiServers(generatedServers(2, 'io.example.gone')));
		await put({ api_url: gone.url, allow_private_ip: true });
		await gone.close();
		const freshHome = await createTestHome();
		await mkdir(join(freshHome.path, 'config'), { recursive: true });
		await writeFile(join(freshHome.path, 'config', 'registries.json'), readFileSync(join(home.path, 'config', 'registries.json')));
		const freshServe = await startServe(freshHome.env);
		try {
			for (const path of ['/registry/default/v0.1/servers', '/api/v1beta/registry/default', '/registry/default/v0.1/servers/x/versions/latest']) {
				const response = await fetch(`${freshServe.url}${path}`);
				expect(response.status, path).toBe(503);
				expect(await response.json()).toMatchObject({ code: 'registry_unavailable' });
			}
			const list = (await (await fetch(`${freshServe.url}/api/v1beta/registry`)).json()) as any;
			expect(list.registries[0]).toMatchObject({ name: 'default', error: expect.stringContaining('unreachable') });
			const refresh = await fetch(`${freshServe.url}/api/v1beta/registry/default/refresh`, { method: 'POST' });
			expect(refresh.status).toBe(504);
		} finally {
			await freshServe.stop();
			await freshHome.dispose();
		}
	});
});

describe('named registries', () => {
	/** Adds `second` (a registry file) and `team` (a URL, priority 200): what every test here starts with. */
	async function addNamedRegistries(): Promise<[Answer, Answer]> {
		const second = await call('POST', '/api/v1beta/registry', { name: 'second', source: fixturePath('second-registry.json') });
		upstream.route('/team-named.json', json(fixture('team-registry.json')));
		const team = await call('POST', '/api/v1beta/registry', { name: 'team', source: `${upstream.url}/team-named.json`, allow_private_ip: true, priority: 200 });
		return [second, team];
	}

	it('adds registries with a precedence order', async () => {
		const [added, team] = await addNamedRegistries();
		expect(added.status).toBe(201);
		expect(added.headers.get('location')).toBe('/api/v1beta/registry/second');
		expect(added.body).toMatchObject({ name: 'second', type: 'file', server_count: 2, skill_count: 1, priority: 100 });
		expect(team.status).toBe(201);
		const { body } = await get('/api/v1beta/registry');
		expect(body.registries.map((entry: { name: string }) => entry.name)).toEqual(['second', 'team', 'default']);
		expect(body.registries[1]).toMatchObject({ type: 'url', server_count: 3, remote_server_count: 2, skill_count: 3 });
	});

	it('refuses duplicate, reserved, invalid and unusable names', async () => {
		await addNamedRegistries();
		expect((await call('POST', '/api/v1beta/registry', { name: 'second', source: fixturePath('team-registry.json') })).status).toBe(409);
		expect((await call('POST', '/api/v1beta/registry', { name: 'default', source: fixturePath('team-registry.json') })).status).toBe(409);
		expect((await call('POST', '/api/v1beta/registry', { name: 'all', source: fixturePath('team-registry.json') })).status).toBe(400);
		expect((await call('POST', '/api/v1beta/registry', { name: 'Bad Name', source: fixturePath('team-registry.json') })).status).toBe(400);
		expect((await call('POST', '/api/v1beta/registry', { name: 'legacy', source: fixturePath('legacy-registry.json') })).status).toBe(502);
		expect((await get('/api/v1beta/registry')).body.registries).toHaveLength(3);
	});

	it('searches all registries, naming the source; the first registry shadows later ones', async () => {
		await addNamedRegistries();
		const { body } = await get('/registry/all/v0.1/servers?q=time&limit=200');
		const time = body.servers.filter((server: { name: string }) => server.name === 'io.github.stacklok/time');
		expect(time).toHaveLength(1);
		expect(time[0]._meta['dev.hangar']).toEqual({ registry: 'second' });
		const fetchers = (await get('/registry/all/v0.1/servers?q=fetch')).body.servers;
		expect(fetchers.map((server: any) => [server.name, server._meta['dev.hangar'].registry])).toEqual(
			expect.arrayContaining([
				['io.example.second/fetch', 'second'],
				['io.github.stacklok/fetch', 'default'],
			]),
		);
		const skills = (await get('/registry/all/v0.1/x/dev.toolhive/skills?q=mcp-builder')).body.skills;
		expect(skills.map((skill: any) => `${skill.namespace}/${skill.name}@${skill._meta['dev.hangar'].registry}`)).toEqual([
			'io.example.second/mcp-builder@second',
			'io.github.anthropics/mcp-builder@default',
		]);
	});

	it('{registryName} selects one registry; unknown names are 404', async () => {
		await addNamedRegistries();
		const second = (await get('/registry/second/v0.1/servers')).body;
		expect(second.metadata.total).toBe(2);
		expect(second.servers[0]._meta).toBeUndefined();
		expect((await get('/registry/team/v0.1/servers?q=hosted')).body.metadata.total).toBe(2);
		expect((await get('/registry/nowhere/v0.1/servers')).status).toBe(404);
		expect((await get('/registry/nowhere/v0.1/x/dev.toolhive/skills')).status).toBe(404);
		expect((await get(`/registry/nowhere/v0.1/servers/${encodeURIComponent('io.github.stacklok/fetch')}/versions/latest`)).status).toBe(404);
	});

	it('resolves names in precedence order, and a priority change reorders them', async () => {
		await addNamedRegistries();
		// `io.github.stacklok/time` is in `second` and in the built-in catalog.
		const time = `/registry/all/v0.1/servers/${encodeURIComponent('io.github.stacklok/time')}/versions/latest`;
		expect((await get(time)).body).toMatchObject({ _meta: { 'dev.hangar': { registry: 'second' } } });
		// A short name naming different servers in two registries is refused with both.
		const ambiguous = await get('/registry/all/v0.1/servers/fetch/versions/latest');
		expect(ambiguous.status).toBe(409);
		expect(ambiguous.body.message).toContain("io.example.second/fetch (registry 'second'), io.github.stacklok/fetch (registry 'default')");
		expect((await put({ priority: 1 })).status).toBe(200);
		expect((await get('/api/v1beta/registry')).body.registries[0]).toMatchObject({ name: 'default', type: 'default', priority: 1 });
		expect((await get(time)).body).toMatchObject({ _meta: { 'dev.hangar': { registry: 'default' } } });
		// An update without `priority` keeps the one set; setting it back restores the order.
		await put({});
		expect((await get('/api/v1beta/registry')).body.registries[0].name).toBe('default');
		await put({ priority: 1000 });
		expect((await get('/api/v1beta/registry')).body.registries.at(-1).name).toBe('default');
	});

	it('updates a named registry in place and removes it', async () => {
		await addNamedRegistries();
		expect(await put({ local_path: fixturePath('team-registry.json') }, 'second')).toMatchObject({ status: 200, body: { type: 'file' } });
		expect((await get('/registry/second/v0.1/servers')).body.metadata.total).toBe(6);
		expect((await call('DELETE', '/api/v1beta/registry/second')).status).toBe(204);
		expect((await call('DELETE', '/api/v1beta/registry/second')).status).toBe(404);
		expect((await call('DELETE', '/api/v1beta/registry/default')).status).toBe(400);
		expect((await call('POST', '/api/v1beta/registry/second/refresh')).status).toBe(404);
		expect((await get('/api/v1beta/registry')).body.registries.map((entry: { name: string }) => entry.name)).toEqual(['team', 'default']);
	});

	// A dozen `hangar` processes in turn: generous on a busy machine.
	it('the CLI lists, searches and manages them', { timeout: 180_000 }, async () => {
		await addNamedRegistries();
		const hangar = (...args: string[]) => runHangar(args, home.env);
		const table = await hangar('registry', 'ls');
		expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+TYPE\s+SOURCE\s+SERVERS/);
		expect(table.stdout).toMatch(/^team\s+url\s/m);
		expect(await hangar('registry', 'add', 'cli', fixturePath('second-registry.json'), '--priority', '5')).toMatchObject({
			code: 0,
			stdout: 'Registry cli added: 2 servers, 0 remote servers, 1 skills.\n',
		});
		const servers = await hangar('registry', 'servers', 'fetch', '--json');
		expect(JSON.parse(servers.stdout)[0]).toMatchObject({ name: 'io.example.second/fetch', _meta: { 'dev.hangar': { registry: 'cli' } } });
		const search = await hangar('registry', 'servers', 'fetch');
		expect(search.stdout).toMatch(/^io\.example\.second\/fetch\s+cli\s+oci\s+stdio\s/m);
		const shown = await hangar('registry', 'server', 'io.github.stacklok/github', '--registry', 'default');
		expect(shown.stdout).toMatch(/^env:\s+GITHUB_PERSONAL_ACCESS_TOKEN \(required\) \(secret\)/m);
		expect((await hangar('registry', 'skills', 'review', '--json')).stdout).toContain('io.example.team');
		expect(await hangar('registry', 'rm', 'cli')).toMatchObject({ code: 0, stdout: 'Registry cli removed.\n' });
		expect(await hangar('registry', 'rm', 'cli')).toMatchObject({ code: 1, stderr: "hangar: registry 'cli' not found\n" });
		expect((await hangar('registry', 'set', fixturePath('team-registry.json'))).stdout).toMatch(/^Registry default now reads the registry file/);
		expect((await hangar('registry', 'info', '--json')).stdout).toContain('"io.example.team/oci-http"');
		expect((await hangar('registry', 'reset')).code).toBe(0);
		expect((await hangar('registry', 'refresh', 'team')).stdout).toBe('Registry team refreshed.\n');
	});

	it('the RPC door sees the same registries', async () => {
		await addNamedRegistries();
		const daemon = spawnDaemon(home.env);
		try {
			await daemon.client.initialize('registry-test');
			const page = await daemon.client.request(ListCatalogServers, { registryName: 'team', q: 'TOOL' });
			expect(page.servers.map((server) => server.name).sort()).toEqual(['io.example.team/node-tool', 'io.example.team/py-tool']);
		} finally {
			await daemon.stop();
		}
	});
});

describe('ToolHive API cases: registry files with plain server names', () => {
	it('PUT a registry file whose servers are named test-server and custom-server: 200, both served', async () => {
		const path = join(home.path, 'plain-names.json');
		const server = (name: string) => ({
			name,
			description: `${name} for the test`,
			version: '1.0.0',
			packages: [{ registryType: 'oci', identifier: `ghcr.io/example/${name}:1.0.0`, transport: { type: 'stdio' } }],
		});
		await writeFile(path, JSON.stringify({ version: '1.0.0', meta: { last_updated: '2026-01-01T00:00:00Z' }, data: { servers: [server('test-server'), server('custom-server')] } }));
		const updated = await put({ local_path: path });
		expect(updated.status).toBe(200);
		const listed = await get('/registry/default/v0.1/servers');
		expect(listed.body.servers.map((entry: { name: string }) => entry.name)).toEqual(['test-server', 'custom-server']);
		expect((await get('/registry/default/v0.1/servers/test-server/versions/latest')).status).toBe(200);
		await expect.poll(() => serve.stderr()).toMatch(/not reverse-DNS names.*'test-server', 'custom-server'/);
	});

	it('still refuses what is structurally invalid: a server without a name, or a name with spaces', async () => {
		const path = join(home.path, 'broken-names.json');
		for (const servers of [[{ description: 'no name' }], [{ name: 'has spaces in it' }]]) {
			await writeFile(path, JSON.stringify({ version: '1.0.0', data: { servers } }));
			const refused = await put({ local_path: path });
			expect(refused.status).toBe(502);
			expect(refused.body.message).toMatch(/data\.servers\[0\]\.name/);
		}
	});
});

describe('search ranks names and titles', () => {
	const hangar = (...args: string[]) => runHangar(args, home.env);
	const names = (stdout: string) => (JSON.parse(stdout) as Array<{ name: string }>).map((entry) => entry.name);

	it('registry servers github finds the GitHub servers, not every io.github.* server', async () => {
		const found = names((await hangar('registry', 'servers', 'github', '--json', '--registry', 'default')).stdout);
		expect(found[0]).toBe('io.github.stacklok/github');
		expect(found.length).toBeLessThan(10);
		expect(found.every((name) => name.startsWith('io.github.'))).toBe(true);
	});

	it('a short-name match ranks before a description match', async () => {
		const found = names((await hangar('registry', 'servers', 'fetch', '--json', '--registry', 'default')).stdout);
		expect(found[0]).toBe('io.github.stacklok/fetch');
	});

	it('skills are found by name segment: registry skills test', async () => {
		const found = names((await hangar('registry', 'skills', 'test', '--json', '--registry', 'default')).stdout);
		expect(found).toEqual(expect.arrayContaining(['test-driven-development', 'webapp-testing']));
		expect(found[0]).toBe('test-driven-development');
	});

	it('a query naming a namespace still finds its servers', async () => {
		const found = names((await hangar('registry', 'servers', 'io.github.stacklok/', '--json', '--registry', 'default')).stdout);
		expect(found.length).toBeGreaterThan(10);
	});
});
