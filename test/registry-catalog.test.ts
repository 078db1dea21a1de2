/**
 * The v0.1 catalog routes (`/registry/{registryName}/v0.1/...`) over REST: paging edges, the
 * `q` filter, URL-encoded names, unknown registries, skills, and a 10,000-server registry read
 * both from a file and through a cursor-paged MCP Registry API on 127.0.0.1.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestHome, type TestHome } from './support/home.js';
import { startServe, type ServeProcess } from './support/processes.js';
import { apiServers, embeddedRegistry, generatedRegistry, generatedServers, startUpstream, type Upstream } from './fixtures/registry/upstream.js';

let home: TestHome;
let serve: ServeProcess;
let upstream: Upstream;

const embedded = embeddedRegistry();
const EMBEDDED_TOTAL = embedded.data.servers.length;

async function get(path: string): Promise<{ status: number; body: any }> {
	const response = await fetch(`${serve.url}${path}`);
	return { status: response.status, body: await response.json() };
}

async function configure(body: object, name = 'default'): Promise<void> {
	const response = await fetch(`${serve.url}/api/v1beta/registry/${name}`, {
		method: 'PUT',
		headers: { 'Content-Type': 'application/json' },
		body: JSON.stringify(body),
	});
	expect(response.status, JSON.stringify(await response.clone().json())).toBe(200);
}

beforeAll(async () => {
	home = await createTestHome();
	upstream = await startUpstream();
	serve = await startServe(home.env);
});

afterAll(async () => {
	await serve?.stop();
	await upstream?.close();
	await home?.dispose();
});

describe('paging', () => {
	it('defaults to page 1 of 50', async () => {
		const { body } = await get('/registry/default/v0.1/servers');
		expect(body.metadata).toEqual({ total: EMBEDDED_TOTAL, page: 1, limit: 50 });
		expect(body.servers).toHaveLength(Math.min(50, EMBEDDED_TOTAL));
		expect(body.servers[0]).toMatchObject({ name: expect.stringMatching(/\//), packages: expect.any(Array) });
	});

	it('treats page 0 and limit 0 as the defaults, and clamps limit to 200', async () => {
		expect((await get('/registry/default/v0.1/servers?page=0&limit=0')).body.metadata).toEqual({ total: EMBEDDED_TOTAL, page: 1, limit: 50 });
		expect((await get('/registry/default/v0.1/servers?page=-3&limit=-1')).body.metadata).toMatchObject({ page: 1, limit: 50 });
		const clamped = (await get('/registry/default/v0.1/servers?limit=500')).body;
		expect(clamped.metadata.limit).toBe(200);
		expect(clamped.servers).toHaveLength(EMBEDDED_TOTAL);
	});

	it('walks pages without gaps or repeats, and a page past the end is empty', async () => {
		const names: string[] = [];
		for (let page = 1; page <= Math.ceil(EMBEDDED_TOTAL / 7); page++) {
			names.push(...(await get(`/registry/default/v0.1/servers?limit=7&page=${page}`)).body.servers.map((server: { name: string }) => server.name));
		}
		expect(names).toEqual(embedded.data.servers.map((server) => server.name));
		const past = await get('/registry/default/v0.1/servers?limit=7&page=999999999999');
		expect(past).toMatchObject({ status: 200, body: { servers: [], metadata: { total: EMBEDDED_TOTAL, limit: 7 } } });
	});

	it('refuses page and limit values that are not integers', async () => {
		const bad = await get('/registry/default/v0.1/servers?page=two');
		expect(bad.status).toBe(400);
		expect(bad.body.message).toContain('page');
		expect((await get('/registry/default/v0.1/x/dev.toolhive/skills?limit=1.5')).status).toBe(400);
	});
});

describe('search', () => {
	it('q matches name and description, case-insensitively; total counts the matches', async () => {
		const expected = embedded.data.servers.filter((server) => `${server.name}\n${server.description}`.toLowerCase().includes('aws'));
		const { body } = await get('/registry/default/v0.1/servers?q=AWS&limit=2');
		expect(body.metadata).toEqual({ total: expected.length, page: 1, limit: 2 });
		expect(body.servers.map((server: { name: string }) => server.name)).toEqual(expected.slice(0, 2).map((server) => server.name));
		const byDescription = (await get(`/registry/default/v0.1/servers?q=${encodeURIComponent('IANA time zone')}`)).body;
		expect(byDescription.servers.map((server: { name: string }) => server.name)).toEqual(['io.github.stacklok/time']);
		expect((await get('/registry/default/v0.1/servers?q=no-such-thing-anywhere')).body).toEqual({
			servers: [],
			metadata: { total: 0, page: 1, limit: 50 },
		});
	});

	it('skills match on name, namespace and description', async () => {
		const byNamespace = (await get('/registry/default/v0.1/x/dev.toolhive/skills?q=io.github.OBRA')).body;
		expect(byNamespace.metadata.total).toBe(embedded.data.skills.filter((skill) => skill.namespace === 'io.github.obra').length);
		expect(byNamespace.metadata.total).toBeGreaterThan(0);
		const byDescription = (await get('/registry/default/v0.1/x/dev.toolhive/skills?q=playwright')).body;
		expect(byDescription.skills.map((skill: { name: string }) => skill.name)).toEqual(['webapp-testing']);
	});
});

describe('names', () => {
	it('server names are URL-encoded; a unique short name also resolves', async () => {
		const encoded = await get(`/registry/default/v0.1/servers/${encodeURIComponent('io.github.stacklok/fetch')}/versions/latest`);
		expect(encoded).toMatchObject({ status: 200, body: { name: 'io.github.stacklok/fetch', version: '1.0.0' } });
		expect((await get('/registry/default/v0.1/servers/fetch/versions/latest')).body.name).toBe('io.github.stacklok/fetch');
		expect((await get('/registry/default/v0.1/servers/io.github.stacklok/fetch/versions/latest')).status).toBe(404);
		expect((await get(`/registry/default/v0.1/servers/${encodeURIComponent('io.github.stacklok/nothing')}/versions/latest`)).body).toMatchObject({
			code: 'server_not_found',
		});
	});

	it('a malformed encoding is a 400', async () => {
		const bad = await get('/registry/default/v0.1/servers/io.github.stacklok%E0%A4%A/versions/latest');
		expect(bad).toMatchObject({ status: 400, body: { code: 'bad_request' } });
		expect((await get('/api/v1beta/registry/default/servers/%E0%A4%A')).status).toBe(400);
	});

	it('skills by namespace and name; unknown ones and unknown registries are 404', async () => {
		const skill = await get('/registry/default/v0.1/x/dev.toolhive/skills/io.github.anthropics/mcp-builder');
		expect(skill).toMatchObject({
			status: 200,
			body: { namespace: 'io.github.anthropics', name: 'mcp-builder', packages: [{ registryType: 'git', subfolder: 'skills/mcp-builder' }] },
		});
		expect((await get('/registry/default/v0.1/x/dev.toolhive/skills/io.github.nobody/mcp-builder')).status).toBe(404);
		expect((await get('/registry/elsewhere/v0.1/x/dev.toolhive/skills/io.github.anthropics/mcp-builder')).status).toBe(404);
		expect((await get('/registry/elsewhere/v0.1/servers')).body).toMatchObject({ code: 'registry_not_found' });
		expect((await get('/registry/all/v0.1/x/dev.toolhive/skills/io.github.anthropics/mcp-builder')).body._meta).toEqual({
			'dev.hangar': { registry: 'default' },
		});
	});
});

describe('a registry of 10,000 servers', () => {
	const COUNT = 10_000;

	// Each puts the default registry back (the embedded catalog), which the other tests read.
	afterEach(() => configure({}));

	it('from a file: totals, search and the last page', async () => {
		const path = join(home.path, 'bulk.json');
		await writeFile(path, JSON.stringify(generatedRegistry(COUNT)));
		await configure({ local_path: path });
		expect((await get('/registry/default/v0.1/servers?limit=1')).body.metadata.total).toBe(COUNT);
		const zebra = (await get('/registry/default/v0.1/servers?q=ZEBRA&limit=200&page=5')).body;
		expect(zebra.metadata).toEqual({ total: COUNT / 10, page: 5, limit: 200 });
		expect(zebra.servers[0].name).toBe('io.example.bulk/server-08000');
		const last = (await get(`/registry/default/v0.1/servers?limit=200&page=${COUNT / 200}`)).body;
		expect(last.servers.at(-1).name).toBe('io.example.bulk/server-09999');
		expect((await get(`/registry/default/v0.1/servers/${encodeURIComponent('io.example.bulk/server-09999')}/versions/latest`)).status).toBe(200);
		expect((await get('/api/v1beta/registry/default')).body.server_count).toBe(COUNT);
	});

	it('from an MCP Registry API, following 100 cursor pages', async () => {
		upstream.route('/bulk/v0.1/servers', apiServers(generatedServers(COUNT, 'io.example.api')));
		upstream.requests.length = 0;
		await configure({ api_url: `${upstream.url}/bulk`, allow_private_ip: true }, 'default');
		const pages = upstream.requests.filter((path) => path.startsWith('/bulk/v0.1/servers') && !path.includes('limit=1&'));
		expect(pages).toHaveLength(COUNT / 100);
		const { body } = await get('/registry/default/v0.1/servers?q=server-0999&limit=200');
		expect(body.metadata.total).toBe(10);
		expect((await get('/registry/default/v0.1/servers/server-04321/versions/latest')).body.name).toBe('io.example.api/server-04321');
	});
});
