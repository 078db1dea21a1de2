/**
 * ToolHive's webhooks through real proxies: a real local HTTP server the test starts is the
 * webhook, a real MCP server (the SDK's) is behind remote workloads, a real SDK client calls.
 * A mutating webhook patches the arguments, a validating one allows or denies with a reason the
 * client sees; each body is signed with the Hangar secret the webhook names and carries none of
 * the client's headers; a webhook that hangs, answers garbage or redirects fails the call
 * (failure_policy fail) or is skipped (ignore); a patch that renames the tool is refused; bad
 * settings are a 400 naming the field.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
	'/mutate': (response) => response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ allowed: true, patch: [{ op: 'replace', path: '/arguments/text', value: 'patched by the webhook' }] })),
	'/rename': (response) => response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ patch: [{ op: 'replace', path: '/name', value: 'received' }] })),
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

const hook = (name: string, path: string, extra: Record<string, unknown> = {}) => ({ name, url: `${hooksUrl}${path}`, ...extra });

beforeAll(async () => {
	home = await createTestHome();
	serve = await startServe(home.env);
	expect((await callRest(serve.url, SetupSecrets, { provider_type: 'encrypted' })).status).toBe(201);
	expect((await callRest(serve.url, CreateSecret, { key: 'webhook_key', value: SIGNING_KEY })).status).toBe(201);
	leaky = await startFixture(fileURLToPath(new URL('./fixtures/guardrails/leaky-server.mjs', import.meta.url)), ['unused-own-secret']);
	hooks = createServer((request, response) => {
		let body = '';
		request.on('data', (chunk: Buffer) => (body += chunk.toString()));
		request.on('end', () => {
			received.push({ path: request.url!, headers: request.headers, body });
			ANSWERS[request.url!]?.(response);
		});
	});
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
		expect(validation.headers['x-toolhive-signature']).toBe(`sha256=${createHmac('sha256', SIGNING_KEY).update(validation.body).digest('hex')}`);
		expect(validation.headers.authorization).toBeUndefined();
		expect(validation.body).not.toContain('the-clients-own-token');
		const payload = JSON.parse(validation.body) as { kind: string; workload: string; request: { method: string; params: { name: string; arguments: unknown } } };
		// The validating webhook sees the call as the mutating one left it.
		expect(payload).toMatchObject({ kind: 'validating', workload: workload.name, request: { method: 'tools/call', params: { name: 'echo', arguments: { text: 'patched by the webhook' } } } });
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

	it.each([
		['/hang', /no answer within 1 s/],
		['/garbage', /did not answer with JSON/],
		['/redirect', /answered 302/],
		['/rename', /its patch is refused: the patch may change only \/arguments, not "\/name"/],
	])('a webhook at %s fails the call under failure_policy fail, and is skipped under ignore', async (path, reason) => {
		const kind = path === '/rename' ? 'mutating_webhooks' : 'validating_webhooks';
		const { client: strict } = await create({ name: 'strict', [kind]: [hook('flaky', path, { timeout: 1, failure_policy: 'fail' })] });
		await expect(strict.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow(reason);
		const { client: lenient } = await create({ name: 'lenient', [kind]: [hook('flaky', path, { timeout: 1, failure_policy: 'ignore' })] });
		expect(textOf(await lenient.callTool({ name: 'echo', arguments: { text: 'x' } }))).toBe('echo: x');
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
	])('refuses %j with a 400 naming the field', async (webhooks, field) => {
		const answer = await callRest(serve.url, CreateWorkload, { name: uniqueName('bad'), url: leaky.url, ...webhooks });
		expect(answer.status).toBe(400);
		expect((answer.body as { message: string }).message).toMatch(field);
	});
});
