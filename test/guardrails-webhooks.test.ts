/**
 * ToolHive's webhooks through real proxies: a real local HTTP server the test starts is the
 * webhook, a real MCP server (the SDK's) is behind remote workloads, a real SDK client calls.
 * The body and the answers are ToolHive's (pkg/webhook/types.go): a mutating webhook patches the
 * arguments under `/mcp_request/params/arguments` (`patch_type: json_patch`), a validating one
 * allows or denies with a reason the client sees, a 422 denies whatever the failure policy; each
 * body is signed as ToolHive signs it (timestamp and body) with the Hangar secret the webhook
 * names and carries none of the client's headers; a webhook that hangs, answers garbage or
 * redirects fails the call (failure_policy fail) or is skipped (ignore); a patch that renames the
 * tool is refused. Over https, with a CA the test makes: trusted through `ca_bundle_path`,
 * refused without it, accepted unverified with `insecure_skip_verify`, and a server asking for a
 * client certificate gets `client_cert_path`'s. Bad settings are a 400 naming the field.
 */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateSecret, SetupSecrets } from '../protocol/protocol.secrets.js';
import { CreateWorkload, GetWorkload } from '../protocol/protocol.workloads.js';
import { createWorkload, deleteAllWorkloads, type Workload } from './fixtures/security/support.js';
import { connect, startFixture, textOf, uniqueName, type RemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { startServe, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';

const SIGNING_KEY = 'webhook-signing-key-0451';

let home: TestHome;
let serve: ServeProcess;
let leaky: RemoteServer;
let hooks: Server;
let hooksUrl: string;
const received: Array<{ path: string; headers: IncomingHttpHeaders; body: string }> = [];
const clients: Client[] = [];

/** The webhook: what each path answers. */
const ANSWERS: Record<string, (response: import('node:http').ServerResponse) => void> = {
	'/allow': (response) => response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ allowed: true })),
	'/deny': (response) => response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ allowed: false, reason: 'tickets must name a project' })),
	'/mutate': (response) =>
		response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ version: 'v0.1.0', uid: 'x', allowed: true, patch_type: 'json_patch', patch: [{ op: 'replace', path: '/mcp_request/params/arguments/text', value: 'patched by the webhook' }] })),
	'/rename': (response) => response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ allowed: true, patch_type: 'json_patch', patch: [{ op: 'replace', path: '/mcp_request/params/name', value: 'received' }] })),
	'/silent': (response) => response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ patch_type: 'json_patch', patch: [] })),
	'/unprocessable': (response) => response.writeHead(422, { 'Content-Type': 'application/json' }).end('{}'),
	'/hang': () => undefined,
	'/garbage': (response) => response.writeHead(200, { 'Content-Type': 'application/json' }).end('<html>not json</html>'),
	'/redirect': (response) => response.writeHead(302, { Location: 'http://10.0.0.1/allow' }).end(),
};

async function create(params: Record<string, unknown>): Promise<{ workload: Workload; client: Client }> {
	const workload = await createWorkload(serve.url, { url: leaky.url, tool_pinning: 'off', ...params });
	const client = await connect(workload.url, 'streamable-http', {}, { Authorization: 'Bearer the-clients-own-token' });
	clients.push(client);
	return { workload, client };
}

/** Keeps what the webhook received and answers as its path says. */
function answer(request: IncomingMessage, response: ServerResponse): void {
	let body = '';
	request.on('data', (chunk: Buffer) => (body += chunk.toString()));
	request.on('end', () => {
		received.push({ path: request.url!, headers: request.headers, body });
		ANSWERS[request.url!]?.(response);
	});
}

const hook = (name: string, path: string, extra: Record<string, unknown> = {}) => ({ name, url: `${hooksUrl}${path}`, ...extra });

beforeAll(async () => {
	home = await createTestHome();
	serve = await startServe(home.env);
	expect((await callRest(serve.url, SetupSecrets, { provider_type: 'encrypted' })).status).toBe(201);
	expect((await callRest(serve.url, CreateSecret, { key: 'webhook_key', value: SIGNING_KEY })).status).toBe(201);
	leaky = await startFixture(fileURLToPath(new URL('./fixtures/guardrails/leaky-server.mjs', import.meta.url)), ['unused-own-secret']);
	hooks = createServer(answer);
	await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
	hooksUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
	await Promise.allSettled(clients.map((client) => client.close()));
	await deleteAllWorkloads(serve.url);
	hooks?.closeAllConnections();
	hooks?.close();
	leaky?.stop();
	await serve?.stop();
	await home?.dispose();
}, 120_000);

describe('webhooks', { timeout: 120_000 }, () => {
	it('a mutating webhook patches the arguments, a validating one allows; each body is signed and carries nothing of the client', async () => {
		const { workload, client } = await create({
			name: 'hooked',
			mutating_webhooks: [hook('rewrite', '/mutate')],
			validating_webhooks: [hook('policy', '/allow', { hmac_secret_ref: 'webhook_key', timeout: 5 })],
		});
		expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'original' } }))).toBe('echo: patched by the webhook');
		const validation = received.filter((entry) => entry.path === '/allow').at(-1)!;
		const timestamp = validation.headers['x-toolhive-timestamp'] as string;
		expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
		expect(validation.headers['x-toolhive-signature']).toBe(`sha256=${createHmac('sha256', SIGNING_KEY).update(`${timestamp}.${validation.body}`).digest('hex')}`);
		expect(validation.headers.authorization).toBeUndefined();
		expect(validation.body).not.toContain('the-clients-own-token');
		const payload = JSON.parse(validation.body) as Record<string, unknown>;
		// ToolHive's body; the validating webhook sees the call as the mutating one left it.
		expect(Object.keys(payload).sort()).toEqual(['context', 'mcp_request', 'principal', 'timestamp', 'uid', 'version']);
		expect(payload).toMatchObject({
			version: 'v0.1.0',
			principal: null,
			mcp_request: { jsonrpc: '2.0', method: 'tools/call', params: { name: 'echo', arguments: { text: 'patched by the webhook' } } },
			context: { server_name: workload.name, source_ip: '127.0.0.1', transport: 'streamable-http' },
		});
		expect(new Date(payload.timestamp as string).toISOString()).toBe(payload.timestamp);
		expect(received.filter((entry) => entry.path === '/mutate').at(-1)!.headers['x-toolhive-signature']).toBeUndefined();
		const detail = (await callRest(serve.url, GetWorkload, { name: workload.name })).body as { validating_webhooks?: unknown[]; mutating_webhooks?: unknown[] };
		expect(detail.validating_webhooks).toEqual([hook('policy', '/allow', { hmac_secret_ref: 'webhook_key', timeout: 5 })]);
		expect(detail.mutating_webhooks).toEqual([hook('rewrite', '/mutate')]);
	});

	it('a validating webhook denies with a reason the client is shown; the server never sees the call', async () => {
		const { client } = await create({ name: 'denied', validating_webhooks: [hook('tickets', '/deny')] });
		await expect(client.callTool({ name: 'echo', arguments: { text: 'TICKET-1' } })).rejects.toThrow(/webhook tickets denied tools\/call echo: tickets must name a project/);
		expect(textOf(await create({ name: 'witness' }).then(({ client: witness }) => witness.callTool({ name: 'received', arguments: {} })))).not.toContain('TICKET-1');
	});

	it('a 422 denies whatever the failure policy; an answer without "allowed" denies, as ToolHive reads it', async () => {
		const { client } = await create({ name: 'unprocessable', validating_webhooks: [hook('strict', '/unprocessable', { failure_policy: 'ignore' })] });
		await expect(client.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow(/webhook strict denied tools\/call echo: it answered 422/);
		const { client: silent } = await create({ name: 'silent', mutating_webhooks: [hook('quiet', '/silent')] });
		await expect(silent.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow(/webhook quiet denied tools\/call echo/);
	});

	it.each([
		['/hang', /no answer within 1 s/],
		['/garbage', /did not answer with JSON/],
		['/redirect', /answered 302/],
		['/rename', /its patch is refused: the patch may change only \/mcp_request\/params\/arguments, not "\/mcp_request\/params\/name"/],
	])('a webhook at %s fails the call under failure_policy fail, and is skipped under ignore', async (path, reason) => {
		const kind = path === '/rename' ? 'mutating_webhooks' : 'validating_webhooks';
		const { client: strict } = await create({ name: 'strict', [kind]: [hook('flaky', path, { timeout: 1, failure_policy: 'fail' })] });
		await expect(strict.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow(reason);
		const { client: lenient } = await create({ name: 'lenient', [kind]: [hook('flaky', path, { timeout: 1, failure_policy: 'ignore' })] });
		expect(textOf(await lenient.callTool({ name: 'echo', arguments: { text: 'x' } }))).toBe('echo: x');
	});
});

describe('webhooks over https', { timeout: 120_000 }, () => {
	let folder: string;
	let verified: string;
	let mutual: string;
	const servers: Server[] = [];
	const path = (file: string) => join(folder, file);
	const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: folder, stdio: 'ignore' });

	/** An https webhook on localhost with the test CA's certificate; `clientCa` makes it ask for a client certificate signed by it. */
	async function httpsHooks(clientCa?: Buffer): Promise<string> {
		const server = createHttpsServer({ key: await readFile(path('server.key')), cert: await readFile(path('server.crt')), ...(clientCa && { ca: clientCa, requestCert: true, rejectUnauthorized: true }) }, answer);
		servers.push(server);
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		return `https://localhost:${(server.address() as AddressInfo).port}`;
	}

	beforeAll(async () => {
		folder = await mkdtemp(join(tmpdir(), 'hangar-webhook-tls-'));
		// A CA, a server certificate for localhost signed by it, and a client certificate signed by it.
		openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=hangar-test-ca');
		await writeFile(path('server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
		for (const [name, subject, ext] of [['server', '/CN=localhost', ['-extfile', 'server.ext']], ['client', '/CN=hangar-proxy', []]] as const) {
			openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
			openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', ...ext);
		}
		verified = await httpsHooks();
		mutual = await httpsHooks(await readFile(path('ca.crt')));
	}, 60_000);

	afterAll(() => {
		for (const server of servers) {
			server.closeAllConnections();
			server.close();
		}
	});

	const tlsHook = (url: string, tls_config?: Record<string, unknown>) => ({ validating_webhooks: [{ name: 'tls', url: `${url}/allow`, timeout: 5, ...(tls_config && { tls_config }) }] });

	it('trusts the webhook through ca_bundle_path, and refuses its certificate without it', async () => {
		const { client } = await create({ name: 'trusting', ...tlsHook(verified, { ca_bundle_path: path('ca.crt') }) });
		expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'over tls' } }))).toBe('echo: over tls');
		const { client: untrusting } = await create({ name: 'untrusting', ...tlsHook(verified) });
		await expect(untrusting.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow(/could not consult webhook tls.*unreachable: (SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|DEPTH_ZERO_SELF_SIGNED_CERT)/);
	});

	it('accepts an unverified certificate with insecure_skip_verify', async () => {
		const { client } = await create({ name: 'skipping', ...tlsHook(verified, { insecure_skip_verify: true }) });
		expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'unverified' } }))).toBe('echo: unverified');
	});

	it('presents the client certificate to a webhook that asks for one (mTLS), and fails without it', async () => {
		const { client } = await create({ name: 'mutual', ...tlsHook(mutual, { ca_bundle_path: path('ca.crt'), client_cert_path: path('client.crt'), client_key_path: path('client.key') }) });
		expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'mutual' } }))).toBe('echo: mutual');
		const { client: anonymous } = await create({ name: 'anonymous', ...tlsHook(mutual, { ca_bundle_path: path('ca.crt') }) });
		await expect(anonymous.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow(/could not consult webhook tls.*unreachable/);
	});
});

describe('webhook settings at the door', () => {
	it.each([
		[{ validating_webhooks: [{ name: 'a', url: 'http://example.com/hook' }] }, /validating_webhooks\[0\]\.url.*plain http is only accepted for loopback hosts/],
		[{ validating_webhooks: [{ name: 'a', url: 'https://10.1.2.3/hook' }] }, /validating_webhooks\[0\]\.url.*private address/],
		[{ validating_webhooks: [{ name: 'a', url: 'https://hooks.example.com/a' }], mutating_webhooks: [{ name: 'a', url: 'https://hooks.example.com/b' }] }, /validating_webhooks\[0\]\.name.*another webhook is named "a"/],
		[{ mutating_webhooks: [{ url: 'https://hooks.example.com/a' }] }, /mutating_webhooks\[0\]\.name/],
		[{ validating_webhooks: [{ name: 'a', url: 'https://hooks.example.com/a', timeout: 600 }] }, /validating_webhooks\[0\]\.timeout/],
		[{ validating_webhooks: [{ name: 'a', url: 'https://hooks.example.com/a', failure_policy: 'maybe' }] }, /validating_webhooks\.0\.failure_policy/],
		[{ validating_webhooks: [{ name: 'a', url: 'https://hooks.example.com/a', secret: 'x' }] }, /validating_webhooks\.0\.secret/],
		[{ validating_webhooks: [{ name: 'a', url: 'https://hooks.example.com/a', tls_config: { ca_bundle: '/etc/ca.pem' } }] }, /validating_webhooks\.0\.tls_config\.ca_bundle/],
		[{ validating_webhooks: [{ name: 'a', url: 'https://hooks.example.com/a', tls_config: { client_cert_path: '/etc/client.crt' } }] }, /validating_webhooks\[0\]\.tls_config\.client_key_path.*both/],
	])('refuses %j with a 400 naming the field', async (webhooks, field) => {
		const answer = await callRest(serve.url, CreateWorkload, { name: uniqueName('bad'), url: leaky.url, ...webhooks });
		expect(answer.status).toBe(400);
		expect((answer.body as { message: string }).message).toMatch(field);
	});
});
