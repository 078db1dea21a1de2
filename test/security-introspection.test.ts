/**
 * Opaque access tokens checked by token introspection (RFC 7662) at a certified OpenID
 * provider (`oidc-provider` on 127.0.0.1), on a workload's proxy, with the official MCP SDK
 * client: a token the provider vouches for gets in under the identity the provider gives it;
 * inactive, revoked and foreign-audience tokens get a 401 saying why; the provider is asked
 * once per token; JWTs keep their own checks; and the proxy's client secret never shows.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExportWorkload, GetWorkload, UpdateWorkload } from '../protocol/protocol.workloads.js';
import { AUDIENCE, OpenIdProvider, OTHER_AUDIENCE, PROXY_CLIENT } from './fixtures/security/openIdProvider.js';
import { auditFileOf, bearer, createWorkload, deleteAllWorkloads, INITIALIZE, postMcp, readAudit, type Workload } from './fixtures/security/support.js';
import { connect, startRemoteServer, textOf, uniqueName, waitFor, type RemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar, startServe, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';

let home: TestHome;
let serve: ServeProcess;
let provider: OpenIdProvider;
let remote: RemoteServer;
let workload: Workload;

const oidc = () => ({ issuer: provider.issuer, audience: AUDIENCE, introspection_url: provider.introspectionUrl, client_id: PROXY_CLIENT.id, client_secret: PROXY_CLIENT.secret });

/** What the proxy answers a client that presents `token`: the HTTP status and the error description. */
async function answerTo(token: string, url = workload.url): Promise<{ status: number; description: string | undefined }> {
	const answer = await postMcp(url, INITIALIZE, bearer(token));
	return { status: answer.status, description: answer.body?.error_description };
}

beforeAll(async () => {
	home = await createTestHome();
	provider = await OpenIdProvider.start();
	remote = await startRemoteServer('streamable');
	serve = await startServe(home.env);
	workload = await createWorkload(serve.url, { name: 'opaque', url: remote.url, oidc: oidc(), audit_config: { enabled: true } });
}, 120_000);

afterAll(async () => {
	await deleteAllWorkloads(serve.url);
	remote?.stop();
	await serve?.stop();
	await provider?.stop();
	await home?.dispose();
}, 120_000);

describe('opaque tokens', { timeout: 60_000 }, () => {
	it('let in the SDK client whose token the provider vouches for, as the client it was issued to', async () => {
		const client = await connect(workload.url, 'streamable-http', {}, bearer(await provider.token('agent')));
		try {
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'opaque' } }))).toBe('remote echo: opaque');
		} finally {
			await client.close();
		}
		// The audit log is written after the answer: wait for the call's event.
		const call = await waitFor(async () => (await readAudit(auditFileOf(home.path, workload.name))).events.find((event) => event.type === 'mcp_tool_call'), 'the tool call in the audit log');
		expect(call.subjects).toMatchObject({ user_id: 'agent' });
	});

	it('are refused with a 401 saying why when the provider does not vouch for them', async () => {
		expect(await answerTo('not-a-token-the-provider-issued')).toEqual({ status: 401, description: 'Invalid token: the token is not active' });

		const revoked = await provider.token('agent');
		await provider.revoke('agent', revoked);
		expect(await answerTo(revoked)).toEqual({ status: 401, description: 'Invalid token: the token is not active' });

		expect(await answerTo(await provider.token('other-agent', OTHER_AUDIENCE))).toEqual({
			status: 401,
			description: `Invalid token: the token is not meant for audience ${AUDIENCE}`,
		});
	});

	it('cost the provider one introspection each, accepted or refused', async () => {
		const accepted = await provider.token('other-agent');
		const before = provider.introspections;
		for (let index = 0; index < 3; index++) expect((await answerTo(accepted)).status).toBe(200);
		for (let index = 0; index < 3; index++) expect((await answerTo('another-unknown-token')).status).toBe(401);
		expect(provider.introspections - before).toBe(2);
	});

	it('do not change how a JWT is checked: its signature, never the introspection endpoint', async () => {
		const { SignJWT, generateKeyPair } = await import('jose');
		const { privateKey } = await generateKeyPair('RS256');
		const forged = await new SignJWT({ sub: 'mallory' })
			.setProtectedHeader({ alg: 'RS256', kid: 'not-the-providers' })
			.setIssuer(provider.issuer)
			.setAudience(AUDIENCE)
			.setExpirationTime('5m')
			.sign(privateKey);
		const before = provider.introspections;
		expect(await answerTo(forged)).toEqual({ status: 401, description: 'Invalid token: no signing key of the identity provider matches the token' });
		expect(provider.introspections).toBe(before);
	});

	it('are refused when the provider cannot be asked, or refuses the proxy itself', async () => {
		const wrongSecret = await createWorkload(serve.url, { name: 'wrong-secret', url: remote.url, oidc: { ...oidc(), client_secret: 'not-the-secret' } });
		expect(await answerTo(await provider.token('agent'), wrongSecret.url)).toEqual({
			status: 401,
			description: `Invalid token: cannot introspect the token: ${provider.introspectionUrl} answered 401`,
		});
	});
});

describe("the proxy's client secret", { timeout: 60_000 }, () => {
	it('is in no response and no log, and an update that leaves it out keeps it', async () => {
		const detail = await callRest(serve.url, GetWorkload, { name: workload.name });
		const exported = await callRest(serve.url, ExportWorkload, { name: workload.name });
		expect(JSON.stringify(detail.body)).not.toContain(PROXY_CLIENT.secret);
		expect(JSON.stringify(exported.body)).not.toContain(PROXY_CLIENT.secret);
		expect((detail.body as { oidc: Record<string, unknown> }).oidc).toMatchObject({ introspection_url: provider.introspectionUrl, client_id: PROXY_CLIENT.id });

		const updated = await callRest(serve.url, UpdateWorkload, { ...(detail.body as object), name: workload.name });
		expect(updated.status, JSON.stringify(updated.body)).toBe(200);
		expect((await answerTo(await provider.token('agent'))).status).toBe(200);

		const logs = await readFile(join(home.env.HANGAR_HOME!, 'data', 'logs', `${workload.name}.log`), 'utf8');
		expect(logs).not.toContain(PROXY_CLIENT.secret);
	});
});

describe('hangar run --oidc-introspection-url', { timeout: 60_000 }, () => {
	it('takes the client secret from HANGAR_OIDC_CLIENT_SECRET, not the command line', async () => {
		const name = uniqueName('opaque-cli');
		const run = await runHangar(
			['run', remote.url, '--name', name, '--json', '--oidc-issuer', provider.issuer, '--oidc-audience', AUDIENCE, '--oidc-introspection-url', provider.introspectionUrl, '--oidc-client-id', PROXY_CLIENT.id],
			{ ...home.env, HANGAR_OIDC_CLIENT_SECRET: PROXY_CLIENT.secret },
		);
		expect(run.code, run.stderr).toBe(0);
		expect(await answerTo(await provider.token('agent'), (JSON.parse(run.stdout) as { url: string }).url)).toEqual({ status: 200, description: undefined });
	});
});

describe('introspection settings', () => {
	it('refuses an introspection endpoint off loopback over plain http with a 400 naming the field', async () => {
		const created = await fetch(`${serve.url}/api/v1beta/workloads`, {
			method: 'POST',
			headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify({ name: 'bad-introspection', url: remote.url, oidc: { ...oidc(), introspection_url: 'http://login.example.com/introspect' } }),
		});
		expect(created.status).toBe(400);
		expect(((await created.json()) as { message: string }).message).toMatch(/^invalid oidc\.introspection_url: plain http is only accepted for loopback/);
	});
});
