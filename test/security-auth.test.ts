/**
 * Authentication on a workload's proxy, against a real OpenID provider on 127.0.0.1 (jose,
 * discovery + JWKS), a real workload (Docker) and the official MCP SDK client: every cause of
 * a 401 (spec §7), algorithm confusion, key rotation with its cool-down, RFC 9728 metadata,
 * sessions bound to their caller, the token never reaching the server, and an audit event
 * for every outcome.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, EVERYTHING, startRemoteServer, textOf, type RemoteServer } from './fixtures/workloads/helpers.js';
import { TestIssuer } from './fixtures/security/issuer.js';
import { auditFileOf, bearer, createWorkload, deleteAllWorkloads, INITIALIZE, openSession, postMcp, readAudit, type Workload } from './fixtures/security/support.js';
import { createTestHome, type TestHome } from './support/home.js';
import { startServe, type ServeProcess } from './support/processes.js';
import { freePort } from './support/registry.js';

const COOLDOWN_MS = 1_500;

let home: TestHome;
let serve: ServeProcess;
let issuer: TestIssuer;
let workload: Workload;
const remotes: RemoteServer[] = [];
/** Every token handed out, to check that none reaches the audit log. */
const issued: string[] = [];

async function tokenFor(...args: Parameters<TestIssuer['token']>): Promise<string> {
	const token = await issuer.token(...args);
	issued.push(token);
	return token;
}

/**
 * The events Alice's two clients write (see `aliceCallsEcho`): initialize, initialized
 * notification, tools/list and tools/call on each, and the two SSE connections.
 */
const OWN_ALLOWED_EVENTS = 10;

/** How many events the audit log holds now (none before the first request). */
async function auditLines(file: string): Promise<number> {
	const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
		if (error.code === 'ENOENT') return '';
		throw error;
	});
	return text.split('\n').filter(Boolean).length;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
	home = await createTestHome();
	issuer = await TestIssuer.start();
	serve = await startServe({ ...home.env, HANGAR_JWKS_COOLDOWN_MS: String(COOLDOWN_MS) });
	workload = await createWorkload(serve.url, {
		name: 'authn',
		image: EVERYTHING,
		transport: 'stdio',
		cmd_arguments: ['stdio'],
		oidc: { issuer: issuer.issuer, audience: issuer.audience, client_id: 'hangar-tests' },
		audit_config: { enabled: true },
	});
}, 120_000);

afterAll(async () => {
	await deleteAllWorkloads(serve.url);
	for (const remote of remotes) remote.stop();
	await serve?.stop();
	await issuer?.stop();
	await home?.dispose();
}, 120_000);

describe('a workload with authentication', { timeout: 60_000 }, () => {
	/** Alice signs in with the SDK client over Streamable HTTP and legacy SSE, and calls echo on each. */
	async function aliceCallsEcho(): Promise<void> {
		const token = await tokenFor('alice', { name: 'Alice' });
		const base = new URL(workload.url).origin;
		for (const client of [await connect(workload.url, 'streamable-http', {}, bearer(token)), await connect(`${base}/sse`, 'sse', {}, bearer(token))]) {
			try {
				expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
				expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'signed in' } }))).toBe('Echo: signed in');
			} finally {
				await client.close();
			}
		}
	}

	it('serves the SDK client that presents a valid token, over Streamable HTTP and legacy SSE', async () => {
		await aliceCallsEcho();
		const ec = await issuer.ecToken('alice');
		issued.push(ec);
		expect((await postMcp(workload.url, INITIALIZE, bearer(ec))).status).toBe(200);
	});

	it('refuses the SDK client without a token', async () => {
		await expect(connect(workload.url, 'streamable-http')).rejects.toThrow(/401|authorization header required/);
	});

	const refusals: Array<[string, () => Promise<Record<string, string>>, string, RegExp]> = [
		['no Authorization header', async () => ({}), 'invalid_request', /^authorization header required$/],
		['extra whitespace after Bearer', async () => ({ Authorization: `Bearer  ${await tokenFor('alice')}` }), 'invalid_request', /expected 'Bearer <token>'/],
		['a quoted token', async () => ({ Authorization: `Bearer "${await tokenFor('alice')}"` }), 'invalid_request', /expected 'Bearer <token>'/],
		['another scheme', async () => ({ Authorization: `Basic ${Buffer.from('alice:secret').toString('base64')}` }), 'invalid_request', /expected 'Bearer <token>'/],
		['an empty token', async () => ({ Authorization: 'Bearer ' }), 'invalid_request', /expected 'Bearer <token>'/],
		['another issuer', async () => bearer(await tokenFor('alice', {}, { issuer: 'https://login.example.com/realms/dev' })), 'invalid_token', /not issued by/],
		['the issuer without its last path segment', async () => bearer(await tokenFor('alice', {}, { issuer: issuer.issuer.replace(/\/dev$/, '') })), 'invalid_token', /not issued by/],
		['the issuer with a trailing slash', async () => bearer(await tokenFor('alice', {}, { issuer: `${issuer.issuer}/` })), 'invalid_token', /not issued by/],
		['another audience', async () => bearer(await tokenFor('alice', {}, { audience: 'another-service' })), 'invalid_token', /not meant for audience hangar-tests/],
		['an expired token', async () => bearer(await tokenFor('alice', {}, { expiresIn: -30 })), 'invalid_token', /has expired/],
		['a token not valid yet (nbf)', async () => bearer(await tokenFor('alice', {}, { notBefore: 120 })), 'invalid_token', /not valid yet/],
		['a token without exp', async () => bearer(await tokenFor('alice', {}, { noExpiry: true })), 'invalid_token', /"exp"/],
		['a token without sub', async () => bearer(await tokenFor(undefined)), 'invalid_token', /"sub"/],
		[
			'a tampered payload (bad signature)',
			async () => {
				const [header, , signature] = (await tokenFor('alice')).split('.');
				const payload = Buffer.from(JSON.stringify({ sub: 'mallory', iss: issuer.issuer, aud: issuer.audience, exp: Math.floor(Date.now() / 1000) + 300 })).toString('base64url');
				return bearer(`${header}.${payload}.${signature}`);
			},
			'invalid_token',
			/signature does not verify/,
		],
		['a key the provider never published', async () => bearer(await tokenFor('alice', {}, { unpublishedKey: true })), 'invalid_token', /no signing key/],
		['alg none', async () => bearer(issuer.unsignedToken('alice')), 'invalid_token', /algorithm is not allowed/],
		['HS256 keyed with the provider\'s public key', async () => bearer(await issuer.hmacWithPublicKey('alice')), 'invalid_token', /algorithm is not allowed/],
		['not a JWT', async () => bearer('opaque-token-value'), 'invalid_token', /malformed token/],
	];

	it.each(refusals)('answers 401 before anything else for %s', async (_case, headers, error, description) => {
		const answer = await postMcp(workload.url, INITIALIZE, await headers());
		expect(answer.status).toBe(401);
		expect(answer.headers.get('content-type')).toBe('application/json');
		expect(answer.body.error).toBe(error);
		expect(answer.body.error_description).toMatch(description);
		const challenge = answer.headers.get('www-authenticate')!;
		expect(challenge).toMatch(/^Bearer /);
		expect(challenge).toContain(`resource_metadata="http://127.0.0.1:${workload.port}/.well-known/oauth-protected-resource/mcp"`);
		expect(challenge).toContain(`error="${error}"`);
	});

	it('checks every request, not only the first of a session', async () => {
		const session = await openSession(workload.url, bearer(await tokenFor('alice')));
		const later = await postMcp(workload.url, { id: 2, method: 'tools/list' }, { 'Mcp-Session-Id': session });
		expect(later.status).toBe(401);
		const expired = await postMcp(workload.url, { id: 3, method: 'tools/list' }, { ...bearer(await tokenFor('alice', {}, { expiresIn: -1 })), 'Mcp-Session-Id': session });
		expect(expired.status).toBe(401);
		const fresh = await postMcp(workload.url, { id: 4, method: 'tools/list' }, { ...bearer(await tokenFor('alice')), 'Mcp-Session-Id': session });
		expect(fresh.status).toBe(200);
		expect(fresh.body.result.tools.length).toBeGreaterThan(0);
	});

	it('refuses a token it verified before once the token expires', async () => {
		const token = await tokenFor('alice', {}, { expiresIn: 2 });
		expect((await postMcp(workload.url, INITIALIZE, bearer(token))).status).toBe(200);
		expect((await postMcp(workload.url, INITIALIZE, bearer(token))).status).toBe(200);
		await sleep(2_100);
		const late = await postMcp(workload.url, INITIALIZE, bearer(token));
		expect(late.status).toBe(401);
		expect(late.body.error_description).toMatch(/has expired/);
	});

	it('keeps a session to the caller who opened it', async () => {
		const session = await openSession(workload.url, bearer(await tokenFor('alice')));
		const intruder = await postMcp(workload.url, { id: 2, method: 'tools/list' }, { ...bearer(await tokenFor('bob')), 'Mcp-Session-Id': session });
		expect(intruder.status).toBe(404);
	});

	it('serves protected-resource metadata (RFC 9728) at the root and path-suffixed locations', async () => {
		const base = `http://127.0.0.1:${workload.port}/.well-known/oauth-protected-resource`;
		for (const [url, resource] of [
			[base, `http://127.0.0.1:${workload.port}/mcp`],
			[`${base}/mcp`, `http://127.0.0.1:${workload.port}/mcp`],
			[`${base}/sse`, `http://127.0.0.1:${workload.port}/sse`],
		] as const) {
			const response = await fetch(url);
			expect(response.status).toBe(200);
			expect(await response.json()).toEqual({ resource, authorization_servers: [issuer.issuer], bearer_methods_supported: ['header'], scopes_supported: ['openid'] });
		}
	});

	it('takes a rotated key after one refetch, and refetches unknown keys at most once per cool-down', async () => {
		await sleep(COOLDOWN_MS + 200);
		const before = issuer.jwksFetches;
		await issuer.rotate();
		expect((await postMcp(workload.url, INITIALIZE, bearer(await tokenFor('alice')))).status).toBe(200);
		expect(issuer.jwksFetches).toBe(before + 1);

		// Keys not published yet: each token refused, and the provider asked again only once a
		// cool-down has passed since it last answered (on a busy machine one may have).
		await issuer.rotateUnpublished();
		try {
			for (let attempt = 0; attempt < 5; attempt++) {
				const early = await postMcp(workload.url, INITIALIZE, bearer(await tokenFor('alice')));
				expect(early.status).toBe(401);
				expect(early.body.error_description).toMatch(/no signing key/);
			}
			const fetchedAt = issuer.jwksFetchedAt.slice(before);
			for (let index = 1; index < fetchedAt.length; index++) expect(fetchedAt[index]! - fetchedAt[index - 1]!).toBeGreaterThanOrEqual(COOLDOWN_MS);
		} finally {
			// Later tests sign with the current key: it must be one the proxy can fetch.
			issuer.publishCurrent();
		}
		await sleep(COOLDOWN_MS + 200);
		const published = issuer.jwksFetches;
		expect((await postMcp(workload.url, INITIALIZE, bearer(await tokenFor('alice')))).status).toBe(200);
		expect(issuer.jwksFetches).toBe(published + 1);
	});

	it('writes an audit event for every outcome, naming the caller and never a token', async () => {
		// Its own traffic, and only its own events: those written after the ones already there.
		const file = auditFileOf(home.path, workload.name);
		const before = await auditLines(file);
		for (const [, headers] of refusals) expect((await postMcp(workload.url, INITIALIZE, await headers())).status).toBe(401);
		await aliceCallsEcho();
		const { text, events: all } = await readAudit(file, before + refusals.length + OWN_ALLOWED_EVENTS);
		const events = all.slice(before);
		const denied = events.filter((event) => event.outcome === 'denied');
		expect(denied.length).toBeGreaterThanOrEqual(refusals.length);
		expect(denied[0]).toMatchObject({ type: 'http_request', component: workload.name, target: { endpoint: '/mcp' }, source: { type: 'local', value: '127.0.0.1' }, subjects: {} });
		expect(denied[0]!.metadata.extra).toMatchObject({ http_status: 401, http_method: 'POST' });
		const call = events.find((event) => event.type === 'mcp_tool_call' && event.outcome === 'success');
		expect(call).toMatchObject({
			subjects: { user: 'Alice', user_id: 'alice', client_name: 'hangar-test', client_version: '1.0.0' },
			target: { type: 'tool', name: 'echo', method: 'tools/call', endpoint: '/mcp' },
		});
		expect(events.some((event) => event.type === 'mcp_initialize' && event.outcome === 'success')).toBe(true);
		expect(events.some((event) => event.type === 'sse_connection' && event.subjects.user_id === 'alice')).toBe(true);
		for (const token of issued) expect(text).not.toContain(token.split('.')[2]);
		expect(text).not.toMatch(/Bearer/i);
	});
});

describe('an unreachable identity provider', { timeout: 120_000 }, () => {
	it('answers 401, saying the keys cannot be fetched', async () => {
		const port = await freePort();
		const down = await createWorkload(serve.url, {
			name: 'authn-down',
			image: EVERYTHING,
			transport: 'stdio',
			cmd_arguments: ['stdio'],
			oidc: { issuer: `http://127.0.0.1:${port}/realms/dev`, audience: issuer.audience },
		});
		const answer = await postMcp(down.url, INITIALIZE, bearer(await issuer.token('alice', {}, { issuer: `http://127.0.0.1:${port}/realms/dev` })));
		expect(answer.status).toBe(401);
		expect(answer.body).toMatchObject({ error: 'invalid_token', error_description: expect.stringMatching(/signing keys: .*unreachable: ECONNREFUSED/) });
	});

	it('answers 401 when only the JWKS URL is down', async () => {
		const port = await freePort();
		const down = await createWorkload(serve.url, {
			name: 'authn-jwks-down',
			url: await remoteUrl(),
			oidc: { issuer: issuer.issuer, audience: issuer.audience, jwks_url: `http://127.0.0.1:${port}/certs` },
		});
		const answer = await postMcp(down.url, INITIALIZE, bearer(await tokenFor('alice')));
		expect(answer.status).toBe(401);
		expect(answer.body.error_description).toMatch(/signing keys: .*unreachable/);
	});
});

async function remoteUrl(): Promise<string> {
	const remote = await startRemoteServer('streamable');
	remotes.push(remote);
	return remote.url;
}

/**
 * A real HAProxy serving the workload under `https://mcp.example.test/team/tools` as a TLS-
 * terminating reverse proxy would: the prefix stripped, the Host set to the workload's address
 * (as nginx's default does), and the X-Forwarded-* headers added.
 */
async function reverseProxy(workloadPort: number): Promise<{ url: string; stop(): Promise<void> }> {
	const folder = await mkdtemp(join(tmpdir(), 'hangar-reverse-proxy-'));
	const port = await freePort();
	const config = [
		'defaults',
		'  mode http',
		'  timeout connect 5s',
		'  timeout client 60s',
		'  timeout server 60s',
		'frontend public',
		`  bind 127.0.0.1:${port}`,
		'  default_backend workload',
		'backend workload',
		'  http-request set-header X-Forwarded-Proto https',
		'  http-request set-header X-Forwarded-Host mcp.example.test',
		'  http-request set-header X-Forwarded-Prefix /team/tools',
		`  http-request set-header Host 127.0.0.1:${workloadPort}`,
		'  http-request replace-path /team/tools(/.*)? \\1',
		`  server proxy 127.0.0.1:${workloadPort}`,
	].join('\n');
	await writeFile(join(folder, 'haproxy.cfg'), `${config}\n`);
	const child = spawn('haproxy', ['-db', '-f', join(folder, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'pipe'] });
	let output = '';
	child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
	const url = `http://127.0.0.1:${port}/team/tools`;
	for (let attempt = 0; ; attempt++) {
		if (child.exitCode !== null) throw new Error(`haproxy exited: ${output}`);
		if (await fetch(`${url}/health`).then(() => true, () => false)) break;
		if (attempt > 100) throw new Error(`haproxy did not start: ${output}`);
		await sleep(100);
	}
	return {
		url,
		async stop() {
			const exited = new Promise((resolve) => child.once('exit', resolve));
			child.kill();
			await exited;
			await rm(folder, { recursive: true, force: true });
		},
	};
}

describe('behind a reverse proxy', { timeout: 60_000 }, () => {
	let trusting: Workload;

	beforeAll(async () => {
		trusting = await createWorkload(serve.url, {
			name: 'authn-forwarded',
			image: EVERYTHING,
			transport: 'stdio',
			cmd_arguments: ['stdio'],
			oidc: { issuer: issuer.issuer, audience: issuer.audience, client_id: 'hangar-tests' },
			trust_proxy_headers: true,
		});
	}, 120_000);

	it('names its public address in the metadata, the challenge and the SSE endpoint when it trusts X-Forwarded-*', async () => {
		const front = await reverseProxy(trusting.port);
		try {
			const refused = await postMcp(`${front.url}/mcp`, INITIALIZE, {});
			expect(refused.status).toBe(401);
			expect(refused.headers.get('www-authenticate')).toContain('resource_metadata="https://mcp.example.test/team/tools/.well-known/oauth-protected-resource/mcp"');
			const metadata = await fetch(`${front.url}/.well-known/oauth-protected-resource/mcp`);
			expect(((await metadata.json()) as { resource: string }).resource).toBe('https://mcp.example.test/team/tools/mcp');

			// The SDK's legacy SSE client follows the endpoint event back through the prefix.
			const client = await connect(`${front.url}/sse`, 'sse', {}, bearer(await tokenFor('alice')));
			try {
				expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'through the prefix' } }))).toBe('Echo: through the prefix');
			} finally {
				await client.close();
			}
		} finally {
			await front.stop();
		}
	});

	it('ignores X-Forwarded-* from anyone by default, and a forwarded value that is not a scheme, host or path', async () => {
		const forged = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Prefix': '/phish' };
		const refused = await postMcp(workload.url, INITIALIZE, forged);
		expect(refused.headers.get('www-authenticate')).toContain(`resource_metadata="http://127.0.0.1:${workload.port}/.well-known/oauth-protected-resource/mcp"`);
		const metadata = await fetch(`http://127.0.0.1:${workload.port}/.well-known/oauth-protected-resource/mcp`, { headers: forged });
		expect(((await metadata.json()) as { resource: string }).resource).toBe(`http://127.0.0.1:${workload.port}/mcp`);

		for (const [header, value] of [
			['X-Forwarded-Host', 'evil.example/path"'],
			['X-Forwarded-Proto', 'javascript'],
			['X-Forwarded-Prefix', '/../admin'],
		] as const) {
			const answer = await postMcp(`http://127.0.0.1:${trusting.port}/mcp`, INITIALIZE, { [header]: value });
			expect(answer.headers.get('www-authenticate')).toContain(`resource_metadata="http://127.0.0.1:${trusting.port}/.well-known/oauth-protected-resource/mcp"`);
		}
	});
});

describe('a remote server behind authentication', { timeout: 60_000 }, () => {
	it('never receives the client\'s token', async () => {
		const remote = await createWorkload(serve.url, { name: 'authn-remote', url: await remoteUrl(), oidc: { issuer: issuer.issuer, audience: issuer.audience, jwks_url: issuer.jwksUrl } });
		const token = await tokenFor('alice');
		const client = await connect(remote.url, 'streamable-http', {}, bearer(token));
		try {
			expect(textOf(await client.callTool({ name: 'authorization', arguments: {} }))).toBe('none');
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'hi' } }))).toBe('remote echo: hi');
		} finally {
			await client.close();
		}
	});
});

describe('/metrics of a workload with authentication', { timeout: 60_000 }, () => {
	it('needs a valid token, as the MCP endpoint does, unless metrics_without_auth opts out', async () => {
		const oidc = { issuer: issuer.issuer, audience: issuer.audience, jwks_url: issuer.jwksUrl };
		const telemetry_config = { enablePrometheusMetricsPath: true };
		const guarded = await createWorkload(serve.url, { name: 'authn-metrics', url: await remoteUrl(), oidc, telemetry_config });
		const open = await createWorkload(serve.url, { name: 'authn-metrics-open', url: await remoteUrl(), oidc, telemetry_config, metrics_without_auth: true });
		const metricsOf = (workload: Workload, headers: Record<string, string> = {}) => fetch(`${new URL(workload.url).origin}/metrics`, { headers });

		// An authenticated caller's tool call: its tool name is what an anonymous scrape must not see.
		const token = await tokenFor('alice');
		const client = await connect(guarded.url, 'streamable-http', {}, bearer(token));
		await client.callTool({ name: 'echo', arguments: { message: 'counted' } }).finally(() => client.close());

		const anonymous = await metricsOf(guarded);
		expect(anonymous.status).toBe(401);
		expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer /);
		expect(await anonymous.text()).not.toMatch(/gen_ai_tool_name="echo"/);
		expect((await metricsOf(guarded, { Authorization: 'Bearer not-a-token' })).status).toBe(401);
		const signedIn = await metricsOf(guarded, bearer(token));
		expect(signedIn.status).toBe(200);
		expect(await signedIn.text()).toMatch(/gen_ai_tool_name="echo"/);

		expect((await metricsOf(open)).status).toBe(200);
	});
});

describe('authentication settings', { timeout: 30_000 }, () => {
	it.each([
		[{ audience: 'x' }, /invalid oidc\.issuer: authentication needs the issuer/],
		[{ issuer: 'https://login.example.com' }, /invalid oidc\.audience/],
		[{ issuer: 'http://login.example.com', audience: 'x' }, /invalid oidc\.issuer: plain http is only accepted for loopback/],
		[{ issuer: 'https://10.0.0.5/realms/x', audience: 'x' }, /invalid oidc\.issuer: 10\.0\.0\.5 is a private address/],
		[{ issuer: 'https://login.example.com', audience: 'x', jwks_url: 'http://192.168.1.2/keys' }, /invalid oidc\.jwks_url: plain http/],
	])('refuses %j with a 400 naming the field', async (oidc, message) => {
		const response = await fetch(`${serve.url}/api/v1beta/workloads`, {
			method: 'POST',
			headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify({ name: 'bad-oidc', url: 'https://mcp.example.com/mcp', oidc }),
		});
		expect(response.status).toBe(400);
		expect(((await response.json()) as { message: string }).message).toMatch(message);
	});

	it('accepts http off loopback and private addresses when told to', async () => {
		await createWorkload(serve.url, { name: 'authn-private', url: await remoteUrl(), oidc: { issuer: 'http://10.0.0.5/realms/x', audience: 'x', insecure_allow_http: true, allow_private_ip: true } });
	});
});
