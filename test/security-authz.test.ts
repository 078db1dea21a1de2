/**
 * Cedar authorization on a workload's proxy, with tokens from a real OpenID provider on
 * 127.0.0.1, a real workload (Docker) and the official MCP SDK client: each policy shape of
 * spec §5, forbid over permit, evaluation errors, entities_json, list filtering, 403s with a
 * JSON-RPC body on both transports, group claims, anonymous callers, configuration mistakes,
 * and an audit event for every decision.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateWorkload, GetWorkload, ListWorkloads, RestartWorkload } from '../protocol/protocol.workloads.js';
import { TestIssuer } from './fixtures/security/issuer.js';
import { auditFileOf, type AuditEvent, bearer, createWorkload, deleteAllWorkloads, openSession, postMcp, readAudit, type Workload } from './fixtures/security/support.js';
import { connect, EVERYTHING, startRemoteServer, textOf, waitFor, type RemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { startServe, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';

const POLICIES = [
	// 0 a client id
	'permit(principal == Client::"alice", action == Action::"call_tool", resource == Tool::"echo");',
	// 1 any principal
	'permit(principal, action == Action::"get_prompt", resource == Prompt::"simple-prompt");',
	// 2 a claim
	'permit(principal, action == Action::"call_tool", resource == Tool::"get-sum") when { principal.claim_roles.contains("calculator") };',
	// 3 forbid over permit
	'forbid(principal, action == Action::"call_tool", resource == Tool::"get-sum") when { principal.claim_roles.contains("intern") };',
	// 4 an argument, as a resource attribute and in the context
	'permit(principal == Client::"bob", action == Action::"call_tool", resource == Tool::"echo") when { resource.arg_message == "public" && context.arg_message == "public" };',
	// 5 group membership
	'permit(principal in THVGroup::"eng", action == Action::"read_resource", resource);',
	'forbid(principal, action == Action::"read_resource", resource == Resource::"demo://resource/static/document/startup.md");',
	// 7 annotations, guarded by has
	'permit(principal in THVGroup::"readers", action == Action::"call_tool", resource) when { resource has readOnlyHint && resource.readOnlyHint };',
	// 8 names are case-sensitive
	'permit(principal == Client::"carol", action == Action::"call_tool", resource == Tool::"Echo");',
	// 9 an attribute most tokens lack: an evaluation error, which denies
	'permit(principal, action == Action::"call_tool", resource == Tool::"get-tiny-image") when { principal.claim_department == "imaging" };',
	// 10 prompt arguments
	'permit(principal in THVGroup::"eng", action == Action::"get_prompt", resource == Prompt::"args-prompt") when { resource.arg_city == "Paris" };',
	// 11 a group hierarchy from entities_json (eng ⊂ staff)
	'permit(principal in THVGroup::"staff", action == Action::"get_prompt", resource == Prompt::"completable-prompt");',
];
const ENTITIES = [{ uid: { type: 'THVGroup', id: 'eng' }, attrs: {}, parents: [{ type: 'THVGroup', id: 'staff' }] }];
const RESOURCES = ['architecture', 'extension', 'features', 'how-it-works', 'instructions', 'startup', 'structure'].map((name) => `demo://resource/static/document/${name}.md`);
const READ_ONLY_TOOLS = ['echo', 'get-annotated-message', 'get-env', 'get-resource-links', 'get-resource-reference', 'get-structured-content', 'get-sum', 'trigger-long-running-operation'];

let home: TestHome;
let serve: ServeProcess;
let issuer: TestIssuer;
let workload: Workload;
const remotes: RemoteServer[] = [];
const clients: Client[] = [];

async function policyFile(name: string, config: object): Promise<string> {
	const path = join(home.path, name);
	await writeFile(path, name.endsWith('.json') ? JSON.stringify(config) : toYaml(config));
	return path;
}

/** The policy file as YAML, the other format the flag takes. */
function toYaml(config: object): string {
	const { version, type, cedar } = config as { version: string; type: string; cedar: Record<string, unknown> };
	const lines = [`version: "${version}"`, `type: ${type}`, 'cedar:', '  policies:'];
	for (const policy of cedar.policies as string[]) lines.push(`    - ${JSON.stringify(policy)}`);
	for (const [key, value] of Object.entries(cedar)) if (key !== 'policies') lines.push(`  ${key}: ${JSON.stringify(value)}`);
	return `${lines.join('\n')}\n`;
}

async function client(sub: string, claims: Record<string, unknown> = {}, url = workload.url, transport: 'streamable-http' | 'sse' = 'streamable-http'): Promise<Client> {
	const connected = await connect(url, transport, {}, bearer(await issuer.token(sub, claims)));
	clients.push(connected);
	return connected;
}

const toolNames = async (caller: Client) => (await caller.listTools()).tools.map((tool) => tool.name).sort();
const call = (caller: Client, name: string, args: Record<string, unknown> = {}) => caller.callTool({ name, arguments: args });

beforeAll(async () => {
	home = await createTestHome();
	issuer = await TestIssuer.start();
	serve = await startServe(home.env);
	const authz = await policyFile('authz.yaml', { version: '1.0', type: 'cedarv1', cedar: { policies: POLICIES, entities_json: JSON.stringify(ENTITIES) } });
	workload = await createWorkload(serve.url, {
		name: 'authz',
		image: EVERYTHING,
		transport: 'stdio',
		cmd_arguments: ['stdio'],
		oidc: { issuer: issuer.issuer, audience: issuer.audience },
		authz_config: authz,
		audit_config: { enabled: true, includeRequestData: true, excludeEventTypes: ['mcp_ping'] },
	});
}, 120_000);

afterAll(async () => {
	await Promise.allSettled(clients.map((connected) => connected.close()));
	await deleteAllWorkloads(serve.url);
	for (const remote of remotes) remote.stop();
	await serve?.stop();
	await issuer?.stop();
	await home?.dispose();
}, 120_000);

describe('policies of each shape', { timeout: 60_000 }, () => {
	it('permits a client by its id, and nothing else by default', async () => {
		const alice = await client('alice', { roles: ['calculator'] });
		expect(textOf(await call(alice, 'echo', { message: 'hi' }))).toBe('Echo: hi');
		await expect(call(alice, 'get-env')).rejects.toThrow(/Unauthorized/);
		expect(await toolNames(alice)).toEqual(['echo', 'get-sum']);
	});

	it('permits any principal', async () => {
		for (const sub of ['alice', 'somebody']) {
			const caller = await client(sub, { roles: [] });
			expect((await caller.getPrompt({ name: 'simple-prompt' })).messages.length).toBeGreaterThan(0);
			expect((await caller.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['simple-prompt']);
		}
	});

	it('tests claims with principal.claim_roles.contains(…), and forbid wins over permit', async () => {
		const calculator = await client('frank', { roles: ['calculator'] });
		expect(textOf(await call(calculator, 'get-sum', { a: 2, b: 3 }))).toBe('The sum of 2 and 3 is 5.');
		const intern = await client('dave', { roles: ['calculator', 'intern'] });
		await expect(call(intern, 'get-sum', { a: 2, b: 3 })).rejects.toThrow(/Unauthorized/);
		expect(await toolNames(intern)).not.toContain('get-sum');
	});

	it('tests an argument (arg_message) of the call', async () => {
		const bob = await client('bob', { roles: [] });
		expect(textOf(await call(bob, 'echo', { message: 'public' }))).toBe('Echo: public');
		await expect(call(bob, 'echo', { message: 'secret' })).rejects.toThrow(/Unauthorized/);
		// A list has no arguments: the policy cannot permit there (reading arg_message is an error).
		expect(await toolNames(bob)).toEqual([]);
	});

	it('tests group membership from the groups, roles or cognito:groups claim', async () => {
		for (const claims of [{ groups: ['eng'] }, { roles: ['eng'] }, { 'cognito:groups': ['eng'] }]) {
			const engineer = await client('erin', claims);
			const contents = (await engineer.readResource({ uri: RESOURCES[0]! })).contents;
			expect(contents[0]?.uri).toBe(RESOURCES[0]);
			await expect(engineer.readResource({ uri: RESOURCES[5]! })).rejects.toThrow(/Unauthorized/);
			expect((await engineer.listResources()).resources.map((resource) => resource.uri).sort()).toEqual(RESOURCES.filter((uri) => !uri.endsWith('startup.md')));
		}
		// The first of those claims the token has is the one read, even when empty.
		for (const claims of [{ groups: ['sales'] }, { roles: [], 'cognito:groups': ['eng'] }]) {
			const outsider = await client('oscar', claims);
			await expect(outsider.readResource({ uri: RESOURCES[0]! })).rejects.toThrow(/Unauthorized/);
			expect((await outsider.listResources()).resources).toEqual([]);
		}
	});

	it('tests tool annotations from the server\'s tools/list, guarded by has', async () => {
		const reader = await client('rita', { groups: ['readers'], roles: [] });
		// The first call comes before any list: the proxy fetches the annotations itself.
		expect(textOf(await call(reader, 'echo', { message: 'read' }))).toBe('Echo: read');
		expect(textOf(await call(reader, 'get-sum', { a: 1, b: 1 }))).toBe('The sum of 1 and 1 is 2.');
		await expect(call(reader, 'toggle-simulated-logging')).rejects.toThrow(/Unauthorized/);
		expect(await toolNames(reader)).toEqual(READ_ONLY_TOOLS.sort());
	});

	it('matches tool names case-sensitively', async () => {
		const carol = await client('carol', { roles: [] });
		await expect(call(carol, 'echo', { message: 'x' })).rejects.toThrow(/Unauthorized/);
		expect(await toolNames(carol)).toEqual([]);
	});

	it('denies when a policy fails to evaluate, even if another permits', async () => {
		const reader = await client('rita', { groups: ['readers'], roles: [] });
		// get-tiny-image is read-only (policy 7 permits), but policy 9 reads claim_department, which this token lacks.
		await expect(call(reader, 'get-tiny-image')).rejects.toThrow(/Unauthorized/);
		const imaging = await client('rita', { groups: ['readers'], roles: [], department: 'imaging' });
		expect((await call(imaging, 'get-tiny-image')).content).toBeDefined();
		const sales = await client('rita', { groups: ['readers'], roles: [], department: 'sales' });
		expect((await call(sales, 'get-tiny-image')).content).toBeDefined(); // no error: policy 7 decides
	});

	it('tests prompt arguments and loads entities_json (a group hierarchy)', async () => {
		const engineer = await client('erin', { groups: ['eng'], roles: [] });
		expect((await engineer.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris' } })).messages.length).toBeGreaterThan(0);
		await expect(engineer.getPrompt({ name: 'args-prompt', arguments: { city: 'Berlin' } })).rejects.toThrow(/Unauthorized/);
		expect((await engineer.getPrompt({ name: 'completable-prompt', arguments: { department: 'Engineering', name: 'Alice' } })).messages.length).toBeGreaterThan(0);
		expect((await engineer.listPrompts()).prompts.map((prompt) => prompt.name).sort()).toEqual(['completable-prompt', 'simple-prompt']);
	});
});

describe('denials on the wire', { timeout: 60_000 }, () => {
	it('answers 403 with a JSON-RPC error, also to methods beyond tools, prompts and resources', async () => {
		const headers = bearer(await issuer.token('alice', { roles: [] }));
		const session = await openSession(workload.url, headers);
		const denied = await postMcp(workload.url, { id: 7, method: 'tools/call', params: { name: 'get-env', arguments: {} } }, { ...headers, 'Mcp-Session-Id': session });
		expect(denied.status).toBe(403);
		expect(denied.body).toEqual({ jsonrpc: '2.0', id: 7, error: { code: 403, message: 'Unauthorized' } });
		// tasks/get is get_task on Task::"t-1", which no policy here permits.
		const task = await postMcp(workload.url, { id: 8, method: 'tasks/get', params: { taskId: 't-1' } }, { ...headers, 'Mcp-Session-Id': session });
		expect(task.status).toBe(403);
		const ping = await postMcp(workload.url, { id: 9, method: 'ping' }, { ...headers, 'Mcp-Session-Id': session });
		expect(ping).toMatchObject({ status: 200, body: { id: 9, result: {} } });
	});

	it('answers 403 on the legacy SSE transport too', async () => {
		const base = new URL(workload.url).origin;
		const alice = await client('alice', { roles: [] }, `${base}/sse`, 'sse');
		expect(textOf(await call(alice, 'echo', { message: 'old' }))).toBe('Echo: old');
		await expect(call(alice, 'get-env')).rejects.toThrow(/403/);
	});

	it('writes an audit event for each decision', async () => {
		// The events read are those written since this test began, whatever ran before it.
		const since = Date.now();
		const alice = await client('alice', { roles: [] });
		await call(alice, 'echo', { message: 'hi' });
		await expect(call(alice, 'get-env')).rejects.toThrow(/Unauthorized/);
		const intern = await client('dave', { roles: ['calculator', 'intern'] });
		await expect(call(intern, 'get-sum', { a: 1, b: 2 })).rejects.toThrow(/Unauthorized/);
		const bob = await client('bob', { roles: [] });
		await expect(call(bob, 'echo', { message: 'secret' })).rejects.toThrow(/Unauthorized/);
		const engineer = await client('erin', { groups: ['eng'] });
		await expect(engineer.readResource({ uri: RESOURCES[5]! })).rejects.toThrow(/Unauthorized/);
		await engineer.getPrompt({ name: 'simple-prompt' });
		await engineer.ping();
		const headers = bearer(await issuer.token('erin', { groups: ['eng'] }));
		const session = await openSession(workload.url, headers);
		expect((await postMcp(workload.url, { id: 1, method: 'tasks/get', params: { taskId: 't-1' } }, { ...headers, 'Mcp-Session-Id': session })).status).toBe(403);

		const ownEvents = (events: AuditEvent[]) => events.filter((event) => Date.parse(event.loggedAt) >= since);
		const tasksAudited = (events: AuditEvent[]) => ownEvents(events).some((event) => event.target.method === 'tasks/get');
		const events = ownEvents((await readAudit(auditFileOf(home.path, workload.name), tasksAudited)).events);
		const calls = events.filter((event) => event.type === 'mcp_tool_call');
		expect(calls).toContainEqual(expect.objectContaining({ outcome: 'success', subjects: expect.objectContaining({ user_id: 'alice' }), target: expect.objectContaining({ name: 'echo' }) }));
		expect(calls).toContainEqual(expect.objectContaining({ outcome: 'denied', subjects: expect.objectContaining({ user_id: 'alice' }), target: expect.objectContaining({ name: 'get-env' }) }));
		expect(calls).toContainEqual(expect.objectContaining({ outcome: 'denied', subjects: expect.objectContaining({ user_id: 'dave' }), target: expect.objectContaining({ name: 'get-sum' }) }));
		const secret = calls.find((event) => event.outcome === 'denied' && event.subjects.user_id === 'bob');
		expect(secret?.data).toEqual({ request: { name: 'echo', arguments: { message: 'secret' } } });
		expect(events).toContainEqual(expect.objectContaining({ type: 'mcp_resource_read', outcome: 'denied', target: expect.objectContaining({ uri: RESOURCES[5] }) }));
		expect(events).toContainEqual(expect.objectContaining({ type: 'mcp_prompt_get', outcome: 'success', target: expect.objectContaining({ name: 'simple-prompt' }) }));
		expect(events).toContainEqual(expect.objectContaining({ type: 'mcp_request', outcome: 'denied', target: expect.objectContaining({ method: 'tasks/get' }) }));
		// A ping was sent above, but its events are excluded.
		expect(events.filter((event) => event.type === 'mcp_ping')).toEqual([]);
	});
});

async function remoteUrl(): Promise<string> {
	const remote = await startRemoteServer('streamable');
	remotes.push(remote);
	return remote.url;
}

describe('group claims and callers without a token', { timeout: 60_000 }, () => {
	it('reads groups from group_claim_name (a dot path) and role_claim_name', async () => {
		const authz = await policyFile('custom-claims.json', {
			version: '1.0',
			type: 'cedarv1',
			cedar: { policies: ['permit(principal in THVGroup::"ops", action == Action::"call_tool", resource == Tool::"echo");'], group_claim_name: 'realm_access.roles', role_claim_name: 'app_roles' },
		});
		const remote = await createWorkload(serve.url, { name: 'authz-claims', url: await remoteUrl(), oidc: { issuer: issuer.issuer, audience: issuer.audience }, authz_config: authz });
		const echo = async (claims: Record<string, unknown>) => {
			const caller = await client('x', claims, remote.url);
			return call(caller, 'echo', { message: 'ops' }).then(textOf, (error: Error) => error.message);
		};
		expect(await echo({ realm_access: { roles: ['ops'] } })).toBe('remote echo: ops');
		expect(await echo({ app_roles: ['ops'], realm_access: { roles: ['dev'] } })).toBe('remote echo: ops');
		// The named claim is there: the default claims are not read.
		expect(await echo({ realm_access: { roles: ['dev'] }, groups: ['ops'] })).toMatch(/Unauthorized/);
		// It is not: the default claims are.
		expect(await echo({ groups: ['ops'] })).toBe('remote echo: ops');
	});

	it('authorizes callers of a workload without authentication as Client::"anonymous"', async () => {
		const authz = await policyFile('anonymous.json', {
			version: '1.0',
			type: 'cedarv1',
			cedar: { policies: ['permit(principal == Client::"anonymous", action == Action::"call_tool", resource == Tool::"echo");'] },
		});
		const remote = await createWorkload(serve.url, { name: 'authz-anonymous', url: await remoteUrl(), authz_config: authz });
		const caller = await connect(remote.url, 'streamable-http');
		clients.push(caller);
		expect(textOf(await call(caller, 'echo', { message: 'anyone' }))).toBe('remote echo: anyone');
		await expect(call(caller, 'whoami')).rejects.toThrow(/Unauthorized/);
		expect(await toolNames(caller)).toEqual(['echo']);
	});
});

describe('configuration mistakes', { timeout: 60_000 }, () => {
	const create = async (config: object | string) => {
		const path = join(home.path, 'broken-authz.json');
		await writeFile(path, typeof config === 'string' ? config : JSON.stringify(config));
		return callRest(serve.url, CreateWorkload, { name: 'broken', url: 'https://mcp.example.com/mcp', authz_config: path });
	};

	it.each([
		[{ version: '1.0', type: 'cedarv1', cedar: { policies: ['permit(principal, action, resource);', 'permit(principal, action == Action::"call_tool", resource) when { resource.x == ;'] } }, /cedar\.policies\[1\] is not a valid Cedar policy: .*line 1/],
		[{ version: '1.0', type: 'httpv1', cedar: { policies: ['permit(principal, action, resource);'] } }, /type must be cedarv1/],
		[{ version: '1.0', type: 'cedarv1', cedar: { policies: [] } }, /cedar\.policies must list at least one policy/],
		[{ version: '1.0', type: 'cedarv1', cedar: { policies: ['permit(principal, action, resource);'], entities_json: '{"not": "an array"}' } }, /cedar\.entities_json must hold a JSON array/],
		['type: cedarv1\ncedar: [unclosed', /is neither JSON nor YAML/],
	])('refuses a create with a 400 that points at the mistake (%#)', async (config, message) => {
		const created = await create(config);
		expect(created.status).toBe(400);
		expect((created.body as { message: string }).message).toMatch(/^invalid authz_config: /);
		expect((created.body as { message: string }).message).toMatch(message);
	});

	it('refuses to start a workload whose policy file became invalid, naming the policy', async () => {
		const path = await policyFile('changing.json', { version: '1.0', type: 'cedarv1', cedar: { policies: ['permit(principal, action, resource);'] } });
		const remote = await createWorkload(serve.url, { name: 'authz-changing', url: await remoteUrl(), authz_config: path });
		await writeFile(path, JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies: ['permit(principal, action, resource) when { oops };'] } }));
		expect((await callRest(serve.url, RestartWorkload, { name: remote.name })).status).toBe(202);
		const failed = await waitFor(async () => {
			const { workloads } = (await callRest(serve.url, ListWorkloads, { all: true })).body as { workloads: Array<{ name: string; status: string; status_context?: string }> };
			const listed = workloads.find((item) => item.name === remote.name);
			return listed?.status === 'error' ? listed : undefined;
		}, 'the workload to fail');
		expect(failed.status_context).toMatch(/cedar\.policies\[0\] is not a valid Cedar policy/);
		expect(((await callRest(serve.url, GetWorkload, { name: remote.name })).body as { authz_config: string }).authz_config).toBe(path);
	});
});
