/**
 * The security chain sees every client message: each method of every revision maps to a Cedar
 * action (permit-all lets it through, a policy set that permits nothing for it denies it, the
 * session plumbing passes unless forbidden); notifications and the client's responses pass
 * audit, authorization and the rate limit on both transports; an upstream 401/403 reaches the
 * client as such, with a challenge that names the proxy's own protected-resource metadata.
 * Real parts: the everything image, Cedar, the SDK server fixtures and the SDK client.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CedarAuthorizer } from '../server/proxy/chain/authorization/cedarAuthorizer.js';
import { authorizationOf, RESPONSE_CHECK, type Check } from '../server/proxy/chain/authorization/methodActions.js';
import { auditFileOf, createWorkload, deleteAllWorkloads, openSession, postMcp, readAudit, type Workload } from './fixtures/security/support.js';
import { connect, EVERYTHING, startFixture, startRemoteServer, textOf, waitFor } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { startServe, type ServeProcess } from './support/processes.js';

let home: TestHome;
let serve: ServeProcess;
const stops: Array<() => void> = [];
const clients: Client[] = [];

const RESOURCE = 'demo://resource/static/document/architecture.md';

/** Every request a client can send, of every revision 2024-11-05 … 2026-07-28, with its action. */
const REQUESTS: Array<[method: string, params: Record<string, unknown>, action: string]> = [
	['tools/call', { name: 'echo', arguments: { message: 'hi' } }, 'call_tool'],
	['prompts/get', { name: 'simple-prompt' }, 'get_prompt'],
	['resources/read', { uri: RESOURCE }, 'read_resource'],
	['resources/subscribe', { uri: RESOURCE }, 'read_resource'],
	['resources/unsubscribe', { uri: RESOURCE }, 'read_resource'],
	['completion/complete', { ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'E' } }, 'get_prompt'],
	['completion/complete', { ref: { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{index}' }, argument: { name: 'index', value: '1' } }, 'read_resource'],
	['tasks/get', { taskId: 't-1' }, 'get_task'],
	['tasks/result', { taskId: 't-1' }, 'get_task'],
	['tasks/cancel', { taskId: 't-1' }, 'cancel_task'],
	['tasks/update', { taskId: 't-1', inputResponses: {} }, 'update_task'],
	['sampling/createMessage', { messages: [], maxTokens: 1 }, 'call_method'],
	['vendor/custom', {}, 'call_method'],
];
const LISTS: Array<[method: string, key: string]> = [
	['tools/list', 'tools'],
	['prompts/list', 'prompts'],
	['resources/list', 'resources'],
	['resources/templates/list', 'resourceTemplates'],
	['tasks/list', 'tasks'],
];
const SESSION: Array<[method: string, action: string]> = [
	['initialize', 'initialize'],
	['notifications/initialized', 'initialize'],
	['ping', 'ping'],
	['server/discover', 'discover'],
	['logging/setLevel', 'set_log_level'],
	['subscriptions/listen', 'listen'],
	['notifications/cancelled', 'cancel'],
	['notifications/progress', 'report_progress'],
	['notifications/roots/list_changed', 'notify_roots_changed'],
	['notifications/tasks/status', 'respond'],
];

async function policyFile(name: string, policies: string[]): Promise<string> {
	const path = join(home.path, name);
	await writeFile(path, JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies } }));
	return path;
}


/** A legacy SSE session opened by hand: POSTs go to the endpoint its first event names. */
async function openLegacy(base: string): Promise<{ post(message: object): Promise<Response>; close(): void }> {
	const controller = new AbortController();
	const response = await fetch(`${base}/sse`, { headers: { Accept: 'text/event-stream' }, signal: controller.signal });
	const reader = response.body!.getReader();
	let text = '';
	while (!/event: endpoint\ndata: (\S+)/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
	const endpoint = new URL(/event: endpoint\ndata: (\S+)/.exec(text)![1]!, base);
	const post = (message: object) =>
		fetch(endpoint, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', ...message }) });
	return { post, close: () => controller.abort() };
}

beforeAll(async () => {
	home = await createTestHome();
	serve = await startServe(home.env);
}, 60_000);

afterAll(async () => {
	await Promise.allSettled(clients.map((client) => client.close()));
	await deleteAllWorkloads(serve.url);
	for (const stop of stops) stop();
	await serve?.stop();
	await home?.dispose();
}, 120_000);

describe('the method table', () => {
	it('maps every method to its action, and Cedar decides each as the policies say', async () => {
		const checks: Array<[string, Check]> = [];
		for (const [method, params, action] of REQUESTS) {
			const mapped = authorizationOf(method, params, () => ({}));
			expect(mapped, method).toMatchObject({ kind: 'check', action });
			checks.push([method, mapped as Check]);
		}
		for (const [method, action] of SESSION) {
			const mapped = authorizationOf(method, {}, () => ({}));
			expect(mapped, method).toMatchObject({ kind: 'check', action, type: 'MCP' });
			checks.push([method, mapped as Check]);
		}
		for (const [method, key] of LISTS) expect(authorizationOf(method, {}, () => ({})), method).toMatchObject({ kind: 'filter', key });
		checks.push(['a response', RESPONSE_CHECK]);

		const config = (policies: string[]) => ({ policies, entities: [] }) as never;
		const permitAll = await CedarAuthorizer.create(config(['permit(principal, action, resource);']), 'demo');
		const denyAll = await CedarAuthorizer.create(config(['permit(principal == Client::"nobody", action, resource);']), 'demo');
		const noPing = await CedarAuthorizer.create(config(['permit(principal, action, resource);', 'forbid(principal, action == Action::"ping", resource == MCP::"demo");']), 'demo');
		const session = new Set(SESSION.map(([method]) => method).concat('a response'));
		for (const [method, check] of checks) {
			expect(permitAll.check(undefined, check).allowed, method).toBe(true);
			expect(denyAll.check(undefined, check).allowed, method).toBe(session.has(method));
			expect(noPing.check(undefined, check).allowed, method).toBe(method !== 'ping');
		}
	});
});

describe('every method through the proxy', { timeout: 120_000 }, () => {
	let permitAll: Workload;
	let denyAll: Workload;

	beforeAll(async () => {
		const stdio = { image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'] };
		[permitAll, denyAll] = await Promise.all([
			createWorkload(serve.url, { name: 'permit-all', ...stdio, authz_config: await policyFile('permit-all.json', ['permit(principal, action, resource);']) }),
			createWorkload(serve.url, {
				name: 'deny-all',
				...stdio,
				authz_config: await policyFile('deny-all.json', ['permit(principal == Client::"nobody", action, resource);', 'forbid(principal, action == Action::"set_log_level", resource);']),
				audit_config: { enabled: true, includeRequestData: true },
			}),
		]);
	}, 240_000);

	it('lets permit-all through for every request, tasks/* included; the server answers each', async () => {
		const session = await openSession(permitAll.url, {});
		const headers = { 'Mcp-Session-Id': session };
		let id = 100;
		for (const [method, params] of [...REQUESTS, ...LISTS.map(([method]) => [method, {}] as const), ['logging/setLevel', { level: 'debug' }] as const, ['ping', {}] as const]) {
			const answer = await postMcp(permitAll.url, { id: ++id, method, params }, headers);
			expect(answer.status, `${method}: ${JSON.stringify(answer.body)}`).toBe(200);
			expect(answer.body.id, method).toBe(id);
			expect(answer.body.error?.code, method).not.toBe(403);
		}
		const tools = await postMcp(permitAll.url, { id: 1, method: 'tools/list' }, headers);
		expect(tools.body.result.tools.length).toBeGreaterThan(5);
	});

	it('denies every policy-governed request with 403, shows empty lists, and lets the session plumbing pass', async () => {
		const session = await openSession(denyAll.url, {});
		const headers = { 'Mcp-Session-Id': session };
		let id = 200;
		for (const [method, params] of REQUESTS) {
			const answer = await postMcp(denyAll.url, { id: ++id, method, params }, headers);
			expect(answer.status, method).toBe(403);
			expect(answer.body, method).toEqual({ jsonrpc: '2.0', id, error: { code: 403, message: 'Unauthorized' } });
		}
		for (const [method, key] of LISTS.slice(0, 4)) {
			const answer = await postMcp(denyAll.url, { id: ++id, method }, headers);
			expect(answer.status, method).toBe(200);
			expect(answer.body.result[key], method).toEqual([]);
		}
		expect(await postMcp(denyAll.url, { id: ++id, method: 'ping' }, headers)).toMatchObject({ status: 200, body: { result: {} } });
		// A forbid overrides the built-in permit of a session action.
		expect((await postMcp(denyAll.url, { id: ++id, method: 'logging/setLevel', params: { level: 'debug' } }, headers)).status).toBe(403);
	});

	it('authorizes notifications too: a tools/call without an id is refused and audited, never reaches the server', async () => {
		const session = await openSession(denyAll.url, {});
		const headers = { 'Mcp-Session-Id': session };
		const sneaked = await postMcp(denyAll.url, { method: 'tools/call', params: { name: 'echo', arguments: { message: 'sneaked' } } }, headers);
		expect(sneaked.status).toBe(403);
		expect(sneaked.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: 403, message: 'Unauthorized' } });
		// The plumbing and the client's answers to the server pass.
		expect((await postMcp(denyAll.url, { method: 'notifications/cancelled', params: { requestId: 1 } }, headers)).status).toBe(202);
		expect((await postMcp(denyAll.url, { id: 'server-1', result: { roots: [] } }, headers)).status).toBe(202);

		const legacy = await openLegacy(new URL(denyAll.url).origin);
		try {
			const notified = await legacy.post({ method: 'tools/call', params: { name: 'echo', arguments: { message: 'sneaked' } } });
			expect(notified.status).toBe(403);
			expect(await notified.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: 403, message: 'Unauthorized' } });
			expect((await legacy.post({ method: 'notifications/roots/list_changed' })).status).toBe(202);
		} finally {
			legacy.close();
		}

		const events = await waitFor(async () => {
			const { events } = await readAudit(auditFileOf(home.path, denyAll.name), 1);
			return events.some((event) => event.type === 'mcp_response') && events.filter((event) => event.outcome === 'denied' && event.target.name === 'echo').length >= 2 ? events : undefined;
		}, 'the notices in the audit log');
		expect(events).toContainEqual(expect.objectContaining({ type: 'mcp_tool_call', outcome: 'denied', target: expect.objectContaining({ name: 'echo' }), data: { request: { name: 'echo', arguments: { message: 'sneaked' } } } }));
		expect(events).toContainEqual(expect.objectContaining({ type: 'mcp_notification', outcome: 'success', target: expect.objectContaining({ method: 'notifications/cancelled' }) }));
		expect(events).toContainEqual(expect.objectContaining({ type: 'mcp_response', outcome: 'success' }));
	});
});

describe('notifications and the rate limit', { timeout: 60_000 }, () => {
	it('takes a token for a tools/call sent as a notification, and refuses it with 429 past the limit', async () => {
		const remote = await startRemoteServer('streamable');
		stops.push(remote.stop);
		const workload = await createWorkload(serve.url, { name: 'rl-notice', url: remote.url, rate_limit_config: { shared: { maxTokens: 2, refillPeriod: '1h' } } });
		const session = await openSession(workload.url, {});
		const headers = { 'Mcp-Session-Id': session };
		const call = { method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } };
		expect((await postMcp(workload.url, call, headers)).status).toBe(202);
		expect((await postMcp(workload.url, { id: 1, ...call }, headers)).status).toBe(200);
		const limited = await postMcp(workload.url, call, headers);
		expect(limited.status).toBe(429);
		expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
		expect(limited.body).toMatchObject({ id: null, error: { code: 429, message: 'Rate limit exceeded' } });
		// Other notifications are not counted.
		expect((await postMcp(workload.url, { method: 'notifications/cancelled', params: { requestId: 1 } }, headers)).status).toBe(202);
	});
});

describe('an upstream that refuses the proxy', { timeout: 60_000 }, () => {
	let protectedUrl: string;

	beforeAll(async () => {
		const server = await startFixture(fileURLToPath(new URL('./fixtures/security/protected-mcp-server.mjs', import.meta.url)));
		stops.push(server.stop);
		protectedUrl = server.url;
	});

	it('turns its 401 into a 401 whose challenge names the proxy\'s own protected-resource metadata', async () => {
		const workload = await createWorkload(serve.url, { name: 'upstream-401', url: protectedUrl, header_forward: { add_plaintext_headers: { Authorization: 'Bearer wrong' } } });
		const answer = await postMcp(workload.url, { id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
		expect(answer.status).toBe(401);
		expect(answer.body).toMatchObject({ id: 1, error: { code: 401 } });
		const challenge = answer.headers.get('www-authenticate')!;
		const origin = new URL(workload.url).origin;
		const metadata = `${origin}/.well-known/oauth-protected-resource${new URL(workload.url).pathname}`;
		expect(challenge).toBe(`Bearer resource_metadata="${metadata}", error="invalid_token"`);
		expect(challenge).not.toContain(new URL(protectedUrl).origin);
		expect(challenge).not.toContain('secret-detail');
		const document = await fetch(metadata);
		expect(document.status).toBe(200);
		expect(await document.json()).toMatchObject({ resource: workload.url, bearer_methods_supported: ['header'] });
		// The SDK client sees the 401 too.
		await expect(connect(workload.url, 'streamable-http')).rejects.toThrow(/401/);
	});

	it('turns its 403 (insufficient_scope) into a 403 with the scope it asked for', async () => {
		const workload = await createWorkload(serve.url, { name: 'upstream-403', url: protectedUrl, header_forward: { add_plaintext_headers: { Authorization: 'Bearer reader' } } });
		const client = await connect(workload.url, 'streamable-http');
		clients.push(client);
		expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
		await expect(client.callTool({ name: 'echo', arguments: { message: 'x' } })).rejects.toThrow(/403/);
		const session = await openSession(workload.url, {});
		const answer = await postMcp(workload.url, { id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } }, { 'Mcp-Session-Id': session });
		expect(answer.status).toBe(403);
		expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/api\/mcp", error="insufficient_scope", scope="files:write"$/);
	});

	it('still answers a good token\'s calls', async () => {
		const workload = await createWorkload(serve.url, { name: 'upstream-ok', url: protectedUrl, header_forward: { add_plaintext_headers: { Authorization: 'Bearer good' } } });
		const client = await connect(workload.url, 'streamable-http');
		clients.push(client);
		expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'ok' } }))).toBe('protected echo: ok');
	});
});
