/**
 * `hangar serve` at the HTTP level: ToolHive's basics (health, version, JSON errors, body
 * limit) and the defences ToolHive lacks (Host and Origin checks against DNS rebinding).
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../protocol/index.js';
import { fileURLToPath } from 'node:url';
import { createTestHome, type TestHome } from './support/home.js';
import { startServe, type ServeProcess } from './support/processes.js';

let home: TestHome;
let serve: ServeProcess;

beforeAll(async () => {
	home = await createTestHome();
	serve = await startServe(home.env);
});

afterAll(async () => {
	await serve?.stop();
	await home?.dispose();
});

interface RawResponse {
	status: number;
	headers: IncomingHttpHeaders;
	body: string;
}

/** A request with full control of the headers (fetch will not send a foreign Host). */
function raw(
	path: string,
	options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; socketPath?: string } = {},
): Promise<RawResponse> {
	const url = new URL(serve.url);
	return new Promise((resolve, reject) => {
		const request = httpRequest(
			{
				...(options.socketPath ? { socketPath: options.socketPath } : { host: url.hostname, port: url.port }),
				path,
				method: options.method ?? 'GET',
				headers: options.headers,
			},
			(response) => {
				let body = '';
				response.on('data', (chunk: Buffer) => (body += chunk.toString()));
				response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
			},
		);
		request.on('error', reject);
		request.end(options.body);
	});
}

describe('basics', () => {
	it('binds 127.0.0.1 by default', () => {
		expect(new URL(serve.url).hostname).toBe('127.0.0.1');
	});

	it('GET /health answers 204 with no body', async () => {
		const response = await raw('/health');
		expect(response.status).toBe(204);
		expect(response.body).toBe('');
	});

	it('GET /api/v1beta/version answers the version and the container engine', async () => {
		const response = await raw('/api/v1beta/version');
		expect(response.status).toBe(200);
		expect(JSON.parse(response.body)).toEqual({ version: expect.stringMatching(/^v\d+\.\d+\.\d+/), runtime: expect.objectContaining({ name: 'docker', found_by: expect.any(String) }) });
		expect(response.headers['x-content-type-options']).toBe('nosniff');
		expect(response.headers['content-type']).toBe('application/json');
	});

	it('unknown routes are 404 and wrong verbs 405, both as {code, message}', async () => {
		const missing = await raw('/api/v1beta/nothing');
		expect(missing.status).toBe(404);
		expect(JSON.parse(missing.body)).toMatchObject({ code: 'not_found' });
		const wrongVerb = await raw('/api/v1beta/version', { method: 'POST' });
		expect(wrongVerb.status).toBe(405);
		expect(wrongVerb.headers.allow).toBe('GET');
	});

	it('decodes path params and validates them like body fields', async () => {
		const response = await raw('/api/v1beta/groups/Not%20Valid');
		expect(response.status).toBe(400);
		expect(JSON.parse(response.body).message).toMatch(/name/);
	});
});

describe('request bodies', () => {
	const post = (body: string | Buffer) =>
		raw('/api/v1beta/groups', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });

	it('malformed JSON is a 400 saying so', async () => {
		const response = await post('{"name": ');
		expect(response.status).toBe(400);
		expect(JSON.parse(response.body)).toMatchObject({ code: 'invalid_body', message: expect.stringMatching(/^invalid request body/) });
	});

	it('a malformed body is not quoted back (it may hold a secret)', async () => {
		const response = await raw('/api/v1beta/secrets/default/keys', {
			method: 'POST',
			headers: { 'Content-Type': 'application/json' },
			body: '{"key": "k", "value": planted-secret-value}',
		});
		expect(response.status).toBe(400);
		expect(response.body).not.toContain('planted-secret-value');
	});

	it('a body that is not an object is a 400', async () => {
		const response = await post('["dev"]');
		expect(response.status).toBe(400);
	});

	it('a wrong field type is a 400 naming the field', async () => {
		const response = await post('{"name": 7}');
		expect(response.status).toBe(400);
		expect(JSON.parse(response.body)).toMatchObject({ code: 'invalid_params', message: expect.stringContaining('name') });
	});

	it('a body over 1 MiB is a 413, and nothing is created', async () => {
		const response = await post(Buffer.from(JSON.stringify({ name: 'big', pad: 'x'.repeat(1024 * 1024) })));
		expect(response.status).toBe(413);
		const groups = JSON.parse((await raw('/api/v1beta/groups')).body) as { groups: { name: string }[] };
		expect(groups.groups.map((group) => group.name)).not.toContain('big');
	});

	it('creates with 201 and refuses a duplicate with 409', async () => {
		expect((await post('{"name": "rest-dev"}')).status).toBe(201);
		const duplicate = await post('{"name": "rest-dev"}');
		expect(duplicate.status).toBe(409);
		expect(JSON.parse(duplicate.body)).toMatchObject({ code: 'group_exists' });
	});
});

describe('a setting Hangar does not know or implement is refused, never ignored', () => {
	const createWorkload = (body: unknown) =>
		raw('/api/v1beta/workloads', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
	const refusal = async (response: Promise<RawResponse>) => {
		const answered = await response;
		expect(answered.status).toBe(400);
		return (JSON.parse(answered.body) as { code: string; message: string });
	};
	const workloadNames = async () =>
		(JSON.parse((await raw('/api/v1beta/workloads?all=true')).body) as { workloads: Array<{ name: string }> }).workloads.map((workload) => workload.name);

	it("ToolHive's middleware_configs, a security setting Hangar does not implement: 400 naming it, nothing created", async () => {
		const answer = await refusal(createWorkload({ name: 'middlewared', image: 'example/server:1', middleware_configs: [{ type: 'authz', parameters: {} }] }));
		expect(answer).toEqual({ code: 'invalid_params', message: expect.stringMatching(/^invalid middleware_configs: .*ToolHive.*not implemented/) });
		expect(await workloadNames()).not.toContain('middlewared');
	});

	it('an unknown key of aggregation (a typo, in a member, in a composite tool) is a 400 naming its path', async () => {
		const aggregate = { name: 'aggregate', image: 'group://default' };
		for (const [aggregation, path] of [
			[{ composite_tools: [{ name: 'both', steps: [{ id: 'a', tool: 'm.t', depends_on: ['b'] }] }] }, 'aggregation.composite_tools.0.steps.0.depends_on'],
			[{ conflcit: 'priority' }, 'aggregation.conflcit'],
			[{ members: { fetch: { exclude: true } } }, 'aggregation.members.fetch.exclude'],
		] as const) {
			const answer = await refusal(createWorkload({ ...aggregate, aggregation }));
			expect(answer.message).toMatch(new RegExp(`^invalid ${path.replaceAll('.', '\\.')}: unknown field`));
		}
		expect(await workloadNames()).not.toContain('aggregate');
	});

	it("an unknown key of the body or of one of Hangar's objects in it is a 400 naming it, on create and update alike", async () => {
		expect((await refusal(createWorkload({ name: 'typo', image: 'example/server:1', tool_pining: 'off' }))).message).toMatch(/^invalid tool_pining: unknown field/);
		expect((await refusal(createWorkload({ name: 'typo', image: 'example/server:1', oidc: { issuer: 'https://id.example', audiance: 'me' } }))).message).toMatch(
			/^invalid oidc\.audiance: unknown field/,
		);
		const update = raw('/api/v1beta/workloads/typo/edit', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ image: 'example/server:1', token_exchange_config: {} }) });
		expect((await refusal(update)).message).toMatch(/^invalid token_exchange_config: .*ToolHive.*not implemented/);
	});
});

describe('DNS-rebinding and cross-origin defence', () => {
	it('refuses a Host header that does not name the server', async () => {
		const response = await raw('/api/v1beta/groups', { headers: { Host: 'evil.example:8080' } });
		expect(response.status).toBe(403);
		expect(JSON.parse(response.body)).toMatchObject({ code: 'forbidden' });
	});

	it('accepts localhost and the bound address', async () => {
		const { port } = new URL(serve.url);
		expect((await raw('/api/v1beta/groups', { headers: { Host: `localhost:${port}` } })).status).toBe(200);
		expect((await raw('/api/v1beta/groups', { headers: { Host: `127.0.0.1:${port}` } })).status).toBe(200);
	});

	it('refuses a browser request from a foreign origin, and allows its own', async () => {
		const { port } = new URL(serve.url);
		const foreign = await raw('/api/v1beta/groups', { headers: { Origin: 'https://evil.example' } });
		expect(foreign.status).toBe(403);
		const opaque = await raw('/api/v1beta/groups', { headers: { Origin: 'null' } });
		expect(opaque.status).toBe(403);
		const own = await raw('/api/v1beta/groups', { headers: { Origin: `http://localhost:${port}` } });
		expect(own.status).toBe(200);
	});
});

describe('cross-site requests, as a page the user visits would send them', () => {
	const groupNames = async () => (JSON.parse((await raw('/api/v1beta/groups')).body) as { groups: { name: string }[] }).groups.map((group) => group.name);

	it('refuses pages on another port or scheme of this machine: the origin is scheme, host and port', async () => {
		const { port } = new URL(serve.url);
		for (const origin of ['http://localhost', 'https://localhost', 'http://127.0.0.1', 'http://[::1]', `https://localhost:${port}`, `http://localhost:${Number(port) + 1}`]) {
			const response = await raw('/api/v1beta/groups', {
				method: 'POST',
				headers: { Origin: origin, 'Content-Type': 'application/json' },
				body: JSON.stringify({ name: 'from-page' }),
			});
			expect(response.status, origin).toBe(403);
		}
		expect(await groupNames()).not.toContain('from-page');
	});

	it('refuses a form-style text/plain body, which a browser sends cross-site without a preflight, with 415', async () => {
		const response = await raw('/api/v1beta/groups', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{"name":"plain-text"}' });
		expect(response.status).toBe(415);
		expect(JSON.parse(response.body).message).toContain('application/json');
		const noType = await raw('/api/v1beta/groups', { method: 'POST', body: '{"name":"no-type"}' });
		expect(noType.status).toBe(415);
		expect(await groupNames()).not.toContain('plain-text');
		expect(await groupNames()).not.toContain('no-type');
	});

	it('refuses a cross-site or same-site GET that would reach the network, with or without Origin', async () => {
		const ref = encodeURIComponent('ghcr.io/attacker/skill:latest');
		const attempts: Record<string, string>[] = [{ 'Sec-Fetch-Site': 'cross-site' }, { 'Sec-Fetch-Site': 'same-site' }, { Origin: 'http://localhost' }];
		for (const headers of attempts) {
			const response = await raw(`/api/v1beta/skills/content?ref=${ref}`, { headers });
			expect(response.status, JSON.stringify(headers)).toBe(403);
		}
	});

	it('still serves the server\'s own pages, a typed URL and programs', async () => {
		const { port } = new URL(serve.url);
		expect((await raw('/api/v1beta/groups', { headers: { 'Sec-Fetch-Site': 'same-origin', Origin: `http://127.0.0.1:${port}` } })).status).toBe(200);
		expect((await raw('/api/v1beta/groups', { headers: { 'Sec-Fetch-Site': 'none' } })).status).toBe(200);
		expect((await raw('/api/v1beta/groups')).status).toBe(200);
	});

	it('allows an origin given with --allowed-origin, and only that one', async () => {
		const listed = await startServe(home.env, ['--allowed-origin', 'https://ui.example:8443']);
		try {
			const call = (origin: string) =>
				fetch(`${listed.url}/api/v1beta/groups`, { headers: { Origin: origin, 'Sec-Fetch-Site': 'cross-site' } }).then((response) => response.status);
			expect(await call('https://ui.example:8443')).toBe(200);
			expect(await call('https://ui.example')).toBe(403);
			expect(await call('http://ui.example:8443')).toBe(403);
		} finally {
			await listed.stop();
		}
	});
});

describe('OpenAPI document', () => {
	it('describes every row at its path and verb', async () => {
		const response = await raw('/api/openapi.json');
		expect(response.status).toBe(200);
		const document = JSON.parse(response.body) as { openapi: string; paths: Record<string, Record<string, { operationId: string }>> };
		expect(document.openapi).toBe('3.1.0');
		for (const row of operations) {
			expect(document.paths[row.rest.path]?.[row.rest.verb.toLowerCase()]?.operationId, row.method).toBe(row.method);
		}
	});
});

describe('UNIX socket', () => {
	it('serves the same API on --socket', async () => {
		const socketPath = join(home.path, 'hangar.sock');
		const socketServe = await startServe(home.env, ['--socket', socketPath]);
		try {
			const response = await raw('/api/v1beta/version', { socketPath, headers: { Host: 'localhost' } });
			expect(response.status).toBe(200);
		} finally {
			await socketServe.stop();
		}
	});
});

describe('user-chosen names that are also Object.prototype keys', () => {
	const names = ['__proto__', 'constructor', 'prototype'];
	const json = (body: unknown) => ({ headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

	it('secrets named __proto__, constructor, prototype are kept, listed, read back and deleted', async () => {
		expect((await raw('/api/v1beta/secrets', { method: 'POST', ...json({ provider_type: 'encrypted' }) })).status).toBe(201);
		for (const key of names) {
			expect((await raw('/api/v1beta/secrets/default/keys', { method: 'POST', ...json({ key, value: `v-${key}` }) })).status).toBe(201);
		}
		const listed = JSON.parse((await raw('/api/v1beta/secrets/default/keys')).body) as { keys: Array<{ key: string }> };
		expect(listed.keys.map((entry) => entry.key)).toEqual(expect.arrayContaining(names));
		for (const key of names) {
			const updated = await raw(`/api/v1beta/secrets/default/keys/${encodeURIComponent(key)}`, { method: 'PUT', ...json({ value: 'w' }) });
			expect(updated.status, key).toBe(200);
			expect((await raw(`/api/v1beta/secrets/default/keys/${encodeURIComponent(key)}`, { method: 'DELETE' })).status, key).toBe(204);
		}
	});

	it('groups named __proto__, constructor, prototype are kept and listed', async () => {
		for (const name of names) expect((await raw('/api/v1beta/groups', { method: 'POST', ...json({ name }) })).status, name).toBe(201);
		const listed = JSON.parse((await raw('/api/v1beta/groups')).body) as { groups: Array<{ name: string }> };
		expect(listed.groups.map((group) => group.name)).toEqual(expect.arrayContaining(names));
		for (const name of names) expect((await raw(`/api/v1beta/groups/${encodeURIComponent(name)}`)).status, name).toBe(200);
	});

	it('a map key named __proto__ (env vars, labels, headers) is refused with 400 naming it, never dropped', async () => {
		// JSON.stringify of an object literal would drop the key: the body is written by hand, as an attacker would.
		const body = '{"name":"proto-env","image":"example/server:1","env_vars":{"__proto__":"polluted","OK":"1"}}';
		const response = await raw('/api/v1beta/workloads', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
		expect(response.status).toBe(400);
		expect(JSON.parse(response.body).message).toMatch(/env_vars.*__proto__/);
	});

	it('registries named constructor and prototype are kept and listed', async () => {
		const source = fileURLToPath(new URL('./fixtures/registry/team-registry.json', import.meta.url));
		for (const name of ['constructor', 'prototype']) {
			expect((await raw('/api/v1beta/registry', { method: 'POST', ...json({ name, source }) })).status, name).toBe(201);
			expect((await raw(`/api/v1beta/registry/${name}`)).status, name).toBe(200);
		}
		const listed = JSON.parse((await raw('/api/v1beta/registry')).body) as { registries: Array<{ name: string }> };
		expect(listed.registries.map((registry) => registry.name)).toEqual(expect.arrayContaining(['constructor', 'prototype']));
	});
});

describe('errors never echo file content', () => {
	it('PUT /api/v1beta/registry/default with local_path /etc/passwd does not quote the file', async () => {
		const response = await raw('/api/v1beta/registry/default', {
			method: 'PUT',
			headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify({ local_path: '/etc/passwd' }),
		});
		expect(response.status).toBeGreaterThanOrEqual(400);
		expect(response.body).not.toMatch(/root:|:0:0:|\/bin\/(ba)?sh/);
		expect(JSON.parse(response.body).message).toMatch(/\/etc\/passwd/);
	});
});

describe('ToolHive API cases', () => {
	it('GET /api/v1beta/discovery/clients: every client carries supports_skills as a boolean', async () => {
		const response = await raw('/api/v1beta/discovery/clients');
		expect(response.status).toBe(200);
		const { clients } = JSON.parse(response.body) as { clients: Array<Record<string, unknown>> };
		expect(clients.length).toBeGreaterThan(0);
		for (const client of clients) expect(typeof client.supports_skills, String(client.client_type)).toBe('boolean');
		expect(clients.some((client) => client.supports_skills === false)).toBe(true);
	});
});

describe('request log', () => {
	it('writes one line per request on stderr, without the query string or the body', async () => {
		await raw('/api/v1beta/version?token=planted-query-secret');
		await raw('/api/v1beta/groups', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'logged', planted: 'planted-body-secret' }) });
		await expect.poll(() => serve.stderr(), { timeout: 10_000 }).toMatch(/GET \/api\/v1beta\/version 200 /);
		await expect.poll(() => serve.stderr(), { timeout: 10_000 }).toMatch(/POST \/api\/v1beta\/groups \d{3} /);
		expect(serve.stderr()).not.toMatch(/planted-(query|body)-secret/);
	});
});
