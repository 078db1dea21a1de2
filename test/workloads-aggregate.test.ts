/**
 * Aggregates (issue #33): a workload whose image is `group://NAME` serves the workloads of that
 * group as one MCP server. Real members (two hangar-test/everything containers, whose tool names
 * clash, and hangar-test/memory; HTTP remote members of the official SDK, one slow to list),
 * official SDK clients through the aggregate's proxy.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, ToolListChangedNotificationSchema, type CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateGroup } from '../protocol/protocol.groups.js';
import { CreateWorkload, RestartWorkload, StopWorkload } from '../protocol/protocol.workloads.js';
import { connect, EVERYTHING, MEMORY, startFixture, textOf, uniqueName, waitFor, type RemoteServer } from './fixtures/workloads/helpers.js';
import { TestIssuer } from './fixtures/security/issuer.js';
import { auditFileOf, readAudit } from './fixtures/security/support.js';
import { connectAt, connectModern, REVISIONS } from './support/mcpClients.js';
import { MODERN, startHangar, type Hangar, type Workload } from './support/proxyTargets.js';
import { callRest } from './support/rest.js';

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

let hangar: Hangar;
const group = uniqueName('agg');
let first: Workload;
let second: Workload;
let memory: Workload;
const clients: Client[] = [];

async function clientOf(workload: Workload): Promise<Client> {
	const client = await connect(workload.url, 'streamable-http');
	clients.push(client);
	return client;
}

const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();

/** A create request refused: its status and message. */
async function refused(params: Record<string, unknown>): Promise<{ status: number; message: string }> {
	const { status, body } = await callRest(hangar.serve.url, CreateWorkload, { name: uniqueName('bad'), ...params });
	return { status, message: JSON.stringify(body) };
}

beforeAll(async () => {
	hangar = await startHangar();
	expect((await callRest(hangar.serve.url, CreateGroup, { name: group })).status).toBe(201);
	const everything = { image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], group };
	[first, second, memory] = await Promise.all([
		hangar.create({ name: 'ev1', ...everything }),
		hangar.create({ name: 'ev2', ...everything }),
		hangar.create({ name: 'mem', image: MEMORY, transport: 'stdio', group }),
	]);
}, 240_000);

afterAll(async () => {
	await Promise.allSettled(clients.map((client) => client.close()));
	await hangar?.dispose();
}, 120_000);

describe('the run request of an aggregate', () => {
	it('names each bad aggregation field in a 400', async () => {
		const image = `group://${group}`;
		expect(await refused({ image, aggregation: { conflict: 'first' } })).toMatchObject({ status: 400, message: expect.stringContaining('conflict') });
		expect(await refused({ image, aggregation: { prefix_format: 'x_' } })).toMatchObject({ status: 400, message: expect.stringContaining('aggregation.prefix_format') });
		expect(await refused({ image, aggregation: { conflict: 'priority' } })).toMatchObject({ status: 400, message: expect.stringContaining('aggregation.priority') });
		expect(await refused({ image, aggregation: { members: { [first.name]: { overrides: { echo: { name: 'bad name' } } } } } })).toMatchObject({
			status: 400,
			message: expect.stringContaining(`aggregation.members.${first.name}.overrides.echo.name`),
		});
		expect(await refused({ image, aggregation: { mode: 'everything' } })).toMatchObject({ status: 400, message: expect.stringContaining('mode') });
		expect(await refused({ image, env_vars: { A: 'b' } })).toMatchObject({ status: 400, message: expect.stringContaining('env_vars') });
		expect(await refused({ image: EVERYTHING, aggregation: {} })).toMatchObject({ status: 400, message: expect.stringContaining('aggregation') });
		expect(await refused({ image: 'group://no-such-group' })).toMatchObject({ status: 404 });
	});

	it('refuses an aggregate of an aggregate with a 400', async () => {
		const aggregate = await hangar.create({ name: 'inner', image: `group://${group}`, group });
		expect(await refused({ image: `group://${aggregate.name}` })).toMatchObject({ status: 400, message: expect.stringContaining('aggregate of an aggregate') });
		expect(await refused({ image: `group://${group}`, aggregation: { members: { [aggregate.name]: { exclude_all: true } } } })).toMatchObject({
			status: 400,
			message: expect.stringContaining(`aggregation.members.${aggregate.name}`),
		});
	});
});

describe('an aggregate through the official SDK client', () => {
	it('prefix (the default): every member tool once, under a valid prefixed name, callable', async () => {
		const aggregate = await hangar.create({ name: 'all', image: `group://${group}`, group });
		const client = await clientOf(aggregate);
		const names = await toolNames(client);
		expect(names).toEqual(expect.arrayContaining([`${first.name}_echo`, `${second.name}_echo`, `${memory.name}_read_graph`]));
		expect(names.every((name) => NAME.test(name))).toBe(true);
		// Aggregates are not members: the first test's aggregate adds nothing.
		expect(names.filter((name) => name.endsWith('_echo'))).toHaveLength(2);
		const result = await client.callTool({ name: `${second.name}_echo`, arguments: { message: 'through the aggregate' } });
		expect(textOf(result)).toContain('through the aggregate');
		const prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
		expect(prompts).toEqual(expect.arrayContaining([`${first.name}_simple-prompt`, `${second.name}_simple-prompt`]));
		const prompt = await client.getPrompt({ name: `${first.name}_simple-prompt` });
		expect(prompt.messages.length).toBeGreaterThan(0);
		// The proxy's fronts serve it: legacy SSE too.
		const legacy = await connect(`${aggregate.origin}/sse`, 'sse');
		clients.push(legacy);
		expect(await toolNames(legacy)).toEqual(names.sort());
	});

	it('resources keep their URIs: one two members serve is listed once and read from one of them; an unknown URI is -32602 naming it', async () => {
		const client = await clientOf(await hangar.create({ name: 'res', image: `group://${group}`, group }));
		const direct = await clientOf(first);
		const served = (await direct.listResources()).resources.map((resource) => resource.uri);
		expect(served.length).toBeGreaterThan(0);
		const listed = (await client.listResources()).resources.map((resource) => resource.uri);
		// ev1 and ev2 both serve every one of these URIs: each is listed once, unrewritten.
		expect(listed.filter((uri) => served.includes(uri)).sort()).toEqual([...served].sort());
		expect(new Set(listed).size).toBe(listed.length);
		const read = await client.readResource({ uri: served[0]! });
		expect(read.contents[0]).toMatchObject({ uri: served[0] });
		const unknown = 'test://no-member-serves-this';
		// SEP-2164: an unknown resource is Invalid Params, with the URI in the error's data.
		await expect(client.readResource({ uri: unknown })).rejects.toMatchObject({ code: -32602, data: { uri: unknown } });
	});

	it('prefix: names past 64 characters are shortened, valid, unique and stable', async () => {
		const plain = await toolNames(await clientOf(await hangar.create({ name: 'plain', image: `group://${group}`, group })));
		const long = await hangar.create({
			name: 'long',
			image: `group://${group}`,
			group,
			aggregation: { prefix_format: '{workload}_with_a_prefix_long_enough_to_push_every_name_past_64_' },
		});
		const client = await clientOf(long);
		const names = await toolNames(client);
		expect(names.every((name) => NAME.test(name))).toBe(true);
		expect(names.some((name) => name.length === 64)).toBe(true);
		expect(new Set(names).size).toBe(plain.length);
		expect(await toolNames(await clientOf(long))).toEqual(names);
		const echoes = (await client.listTools()).tools.filter((tool) => tool.name.startsWith(first.name) && /^echo/i.test(tool.description ?? ''));
		expect(echoes).toHaveLength(1);
		expect(textOf(await client.callTool({ name: echoes[0]!.name, arguments: { message: 'long' } }))).toContain('long');
	});

	it('priority: the first member listed holding a name wins, the others are hidden', async () => {
		const aggregate = await hangar.create({
			name: 'prio',
			image: `group://${group}`,
			group,
			aggregation: { conflict: 'priority', priority: [second.name, first.name], members: { [second.name]: { overrides: { echo: { description: 'the second echo' } } } } },
		});
		const client = await clientOf(aggregate);
		const { tools } = await client.listTools();
		const echoes = tools.filter((tool) => tool.name === 'echo');
		expect(echoes).toHaveLength(1);
		expect(echoes[0]!.description).toBe('the second echo');
		expect(tools.map((tool) => tool.name)).toContain('read_graph');
		expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'prio' } }))).toContain('prio');
	});

	it('manual: a clash left unresolved is a 400 at create naming the tool and both members; renames resolve it', async () => {
		const image = `group://${group}`;
		const unresolved = await refused({
			image,
			aggregation: { conflict: 'manual', members: { [first.name]: { tools: ['echo', 'get-sum'], overrides: { echo: { name: 'first_echo' } } }, [second.name]: { tools: ['echo', 'get-sum'] } } },
		});
		expect(unresolved).toMatchObject({ status: 400, message: expect.stringContaining('aggregation.members') });
		expect(unresolved.message).toMatch(new RegExp(`tool get-sum is held by ${first.name} and ${second.name}`));
		const aggregate = await hangar.create({
			name: 'manual',
			image,
			group,
			aggregation: {
				conflict: 'manual',
				members: { [first.name]: { tools: ['echo', 'get-sum'], overrides: { echo: { name: 'first_echo' } } }, [second.name]: { tools: ['echo'] } },
			},
		});
		const client = await clientOf(aggregate);
		const names = await toolNames(client);
		expect(names).toContain('first_echo');
		expect(names).toContain('echo');
		expect(names).toContain('get-sum');
		expect(names).toContain('create_entities');
		expect(textOf(await client.callTool({ name: 'first_echo', arguments: { message: 'renamed' } }))).toContain('renamed');
	});

	it('default_visibility deny and exclude_all: only the allowed tools', async () => {
		const aggregate = await hangar.create({
			name: 'deny',
			image: `group://${group}`,
			group,
			aggregation: { default_visibility: 'deny', members: { [first.name]: { tools: ['echo'] }, [memory.name]: { exclude_all: true } } },
		});
		expect(await toolNames(await clientOf(aggregate))).toEqual([`${first.name}_echo`]);
	});

	it('search mode: only find_tool and call_tool; a found tool is callable by name, a hidden one never found', async () => {
		const aggregate = await hangar.create({
			name: 'search',
			image: `group://${group}`,
			group,
			aggregation: { mode: 'search', members: { [second.name]: { exclude_all: true } } },
		});
		const client = await clientOf(aggregate);
		expect(await toolNames(client)).toEqual(['call_tool', 'find_tool']);
		const found = await client.callTool({ name: 'find_tool', arguments: { query: 'echo a message back', limit: 5 } });
		const tools = (found.structuredContent as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
		expect(tools[0]).toBe(`${first.name}_echo`);
		expect(tools.some((name) => name.startsWith(second.name))).toBe(false);
		const graph = await client.callTool({ name: 'find_tool', arguments: { query: 'knowledge graph entities' } });
		expect((graph.structuredContent as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name)).toEqual(expect.arrayContaining([`${memory.name}_create_entities`]));
		const called = await client.callTool({ name: 'call_tool', arguments: { name: `${first.name}_echo`, arguments: { message: 'searched' } } });
		expect(textOf(called)).toContain('searched');
		const hidden = await client.callTool({ name: 'call_tool', arguments: { name: `${second.name}_echo`, arguments: { message: 'x' } } }).catch((error: Error) => error);
		expect(String((hidden as Error).message ?? JSON.stringify(hidden))).toContain('Unknown tool');
	});

	it('Cedar on the aggregate front refuses a tool by its exposed name, listed and called, in all and search modes', async () => {
		const refusedTool = `${first.name}_echo`;
		const authz = join(hangar.home.path, 'aggregate-authz.json');
		const policies = ['permit(principal, action == Action::"call_tool", resource);', `forbid(principal, action == Action::"call_tool", resource == Tool::"${refusedTool}");`];
		await writeFile(authz, JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies } }));

		const all = await clientOf(await hangar.create({ name: 'cedar', image: `group://${group}`, group, authz_config: authz }));
		const names = await toolNames(all);
		expect(names).toContain(`${second.name}_echo`);
		expect(names).not.toContain(refusedTool);
		await expect(all.callTool({ name: refusedTool, arguments: { message: 'x' } })).rejects.toThrow(/Unauthorized/);
		expect(textOf(await all.callTool({ name: `${second.name}_echo`, arguments: { message: 'allowed' } }))).toContain('allowed');

		const search = await clientOf(await hangar.create({ name: 'cedar-search', image: `group://${group}`, group, authz_config: authz, aggregation: { mode: 'search' } }));
		const found = await search.callTool({ name: 'find_tool', arguments: { query: 'echo a message back', limit: 10 } });
		const foundNames = (found.structuredContent as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
		expect(foundNames).toContain(`${second.name}_echo`);
		expect(foundNames).not.toContain(refusedTool);
		expect(textOf(found)).not.toContain(refusedTool);
		await expect(search.callTool({ name: 'call_tool', arguments: { name: refusedTool, arguments: { message: 'x' } } })).rejects.toThrow(/Unauthorized/);
		const called = await search.callTool({ name: 'call_tool', arguments: { name: `${second.name}_echo`, arguments: { message: 'searched' } } });
		expect(textOf(called)).toContain('searched');
	});

	it('a member stopped mid-session: list_changed, its tools gone, a call to one names it; started again, back', async () => {
		const aggregate = await hangar.create({ name: 'live', image: `group://${group}`, group });
		const client = await clientOf(aggregate);
		let changes = 0;
		client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
			changes++;
		});
		expect(await toolNames(client)).toContain(`${memory.name}_read_graph`);
		expect(textOf(await client.callTool({ name: `${memory.name}_read_graph`, arguments: {} }))).toBeDefined();

		expect((await callRest(hangar.serve.url, StopWorkload, { name: memory.name })).status).toBe(202);
		await waitFor(async () => changes > 0, 'notifications/tools/list_changed after the stop');
		const error = await client.callTool({ name: `${memory.name}_read_graph`, arguments: {} }).catch((failure: Error) => failure);
		expect(error).toBeInstanceOf(Error);
		expect((error as Error).message).toContain(memory.name);
		await waitFor(async () => !(await toolNames(client)).includes(`${memory.name}_read_graph`), 'the stopped member’s tools to go');
		expect(await toolNames(client)).toContain(`${first.name}_echo`);

		const before = changes;
		expect((await callRest(hangar.serve.url, RestartWorkload, { name: memory.name })).status).toBe(202);
		await waitFor(async () => changes > before && (await toolNames(client)).includes(`${memory.name}_read_graph`), 'the restarted member’s tools to come back', 60_000);
		expect(textOf(await client.callTool({ name: `${memory.name}_read_graph`, arguments: {} }))).toBeDefined();
	});

	it("a call's progress reaches its client, and the client's cancellation reaches the member", async () => {
		const alone = uniqueName('cancel');
		expect((await callRest(hangar.serve.url, CreateGroup, { name: alone })).status).toBe(201);
		const member = await hangar.create({ name: 'slow', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], group: alone, audit_config: { enabled: true } });
		const aggregate = await hangar.create({ name: 'cancels', image: `group://${alone}`, group: alone });
		const client = await clientOf(aggregate);
		const stop = new AbortController();
		const progress: number[] = [];
		const call = client.callTool({ name: `${member.name}_trigger-long-running-operation`, arguments: { duration: 30, steps: 30 } }, undefined, {
			signal: stop.signal,
			onprogress: (update) => {
				progress.push(update.progress);
				stop.abort('enough');
			},
		});
		await expect(call).rejects.toThrow();
		expect(progress.length).toBeGreaterThan(0);
		const { events } = await readAudit(auditFileOf(hangar.home.path, member.name), (events) => events.some((event) => event.target.method === 'notifications/cancelled'));
		expect(events.find((event) => event.target.method === 'notifications/cancelled')).toMatchObject({ outcome: 'success', target: { endpoint: '/link' } });
	});

	it("the aggregate's own request timeout answers the client and cancels the call at the member", async () => {
		const alone = uniqueName('timeout');
		expect((await callRest(hangar.serve.url, CreateGroup, { name: alone })).status).toBe(201);
		const member = await hangar.create({ name: 'stuck', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], group: alone, audit_config: { enabled: true } });
		const aggregate = await hangar.create({ name: 'impatient', image: `group://${alone}`, group: alone, request_timeout: 1 });
		const client = await clientOf(aggregate);
		// One step of 30 s: no progress to keep the call alive past the aggregate's 1 s.
		const call = client.callTool({ name: `${member.name}_trigger-long-running-operation`, arguments: { duration: 30, steps: 1 } });
		await expect(call).rejects.toMatchObject({ code: -32001, message: expect.stringContaining('did not answer within 1 s') });
		const { events } = await readAudit(auditFileOf(hangar.home.path, member.name), (events) => events.some((event) => event.target.method === 'notifications/cancelled'));
		expect(events.find((event) => event.target.method === 'notifications/cancelled')).toMatchObject({ outcome: 'success', target: { endpoint: '/link' } });
	});

	it('a member added while a client is connected shows up', async () => {
		// A group of its own: the member it adds would clash with the shared group's in other tests.
		const growing = uniqueName('grow');
		expect((await callRest(hangar.serve.url, CreateGroup, { name: growing })).status).toBe(201);
		const aggregate = await hangar.create({ name: 'grow', image: `group://${growing}`, group: growing });
		const client = await clientOf(aggregate);
		let changes = 0;
		client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
			changes++;
		});
		expect(await toolNames(client)).toEqual([]);
		const added = await hangar.create({ name: 'late', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], group: growing, tools_override: { echo: { name: 'newcomer_only' } } });
		await waitFor(async () => changes > 0 && (await toolNames(client)).includes(`${added.name}_newcomer_only`), `the tools of ${added.name}`, 60_000);
	});
});

describe("a member's proxy on its Unix socket", () => {
	const recordOf = async (name: string) => JSON.parse(await readFile(join(hangar.home.path, 'data', 'proxies', `${name}.json`), 'utf8')) as { port: number; socket?: string };

	it('serves the same routes behind the same guard, private to its user; the aggregate calls the member over it, audited as local', async () => {
		const alone = uniqueName('sock');
		expect((await callRest(hangar.serve.url, CreateGroup, { name: alone })).status).toBe(201);
		const member = await hangar.create({ name: 'audited', image: MEMORY, transport: 'stdio', group: alone, audit_config: { enabled: true } });
		const { port, socket } = await recordOf(member.name);
		expect(socket).toBeDefined();
		expect((await stat(socket!)).mode & 0o777).toBe(0o600);
		expect((await stat(dirname(socket!))).mode & 0o777).toBe(0o700);
		const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
		const post = (headers: Record<string, string>) => overSocket(socket!, { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Host: `127.0.0.1:${port}`, ...headers }, initialize);
		const opened = await post({});
		expect(opened.status).toBe(200);
		expect(opened.headers['mcp-session-id']).toBeTruthy();
		expect((await post({ Origin: 'https://evil.example' })).status).toBe(403);
		expect((await post({ Host: 'evil.example' })).status).toBe(403);

		const aggregate = await hangar.create({ name: 'over-socket', image: `group://${alone}`, group: alone });
		const client = await clientOf(aggregate);
		expect(textOf(await client.callTool({ name: `${member.name}_read_graph`, arguments: {} }))).toBeDefined();
		const { events } = await readAudit(auditFileOf(hangar.home.path, member.name), (events) => events.some((event) => event.target.method === 'tools/call'));
		// It came over the link: the member's whole chain saw it, no HTTP request of its own.
		expect(events.find((event) => event.target.method === 'tools/call')).toMatchObject({ source: { type: 'local', value: 'unix' }, target: { endpoint: '/link' } });
	});

	it('is left out where its path would be too long to bind, and the aggregate reaches its members over TCP', async () => {
		const deep = await startHangar(`hangar-test-${'deep-'.repeat(14)}`);
		try {
			const alone = uniqueName('deep');
			expect((await callRest(deep.serve.url, CreateGroup, { name: alone })).status).toBe(201);
			const member = await deep.create({ name: 'deep', image: MEMORY, transport: 'stdio', group: alone });
			const record = JSON.parse(await readFile(join(deep.home.path, 'data', 'proxies', `${member.name}.json`), 'utf8')) as { socket?: string };
			expect(record.socket).toBeUndefined();
			const aggregate = await deep.create({ name: 'deep-all', image: `group://${alone}`, group: alone });
			const client = await clientOf(aggregate);
			expect(textOf(await client.callTool({ name: `${member.name}_read_graph`, arguments: {} }))).toBeDefined();
		} finally {
			await deep.dispose();
		}
	});

	it('is gone once the proxy stops', async () => {
		const member = await hangar.create({ name: 'brief', image: MEMORY, transport: 'stdio' });
		const { socket } = await recordOf(member.name);
		await stat(socket!);
		expect((await callRest(hangar.serve.url, StopWorkload, { name: member.name })).status).toBe(202);
		await waitFor(async () => (await stat(socket!).catch(() => undefined)) === undefined, 'the socket to go');
	});
});

describe("the link: an aggregate's client session on a member's Unix socket", () => {
	const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'link-test', version: '1' } } };
	const socketOf = async (workload: Workload) => JSON.parse(await readFile(join(hangar.home.path, 'data', 'proxies', `${workload.name}.json`), 'utf8')) as { port: number; socket: string };
	const sessionsOf = async (workload: Workload) => ((await (await fetch(new URL('/health', workload.url))).json()) as { sessions: number }).sessions;

	it('carries messages both ways as lines, what the server sends about a call wrapped with its id, a bad line answered, blank ones passed over, and the link kept', async () => {
		const { port, socket } = await socketOf(first);
		const link = await openLink(socket, { Host: `127.0.0.1:${port}` });
		expect(link.headers['mcp-session-id']).toBeDefined();
		link.send(INITIALIZE);
		expect(await link.next((line) => line.id === 1)).toMatchObject({ result: { serverInfo: expect.anything() } });
		link.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
		link.write('{"not": "json-rpc"}\n');
		expect(await link.next((line) => line.id === null)).toMatchObject({ error: { code: -32700 } });
		link.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 2 }, _meta: { progressToken: 'p' } } });
		expect(await link.next((line) => line.call === 2)).toMatchObject({ message: { method: 'notifications/progress', params: { progressToken: 'p' } } });
		expect(await link.next((line) => line.id === 2)).toMatchObject({ result: { content: [expect.objectContaining({ type: 'text' })] } });
		// Blank lines, whitespace and all, are passed over as a stdio server's are: no error for them.
		link.write('\n  \r\n\t\n');
		link.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'over the link' } } });
		expect(textOf((await link.next((line) => line.id === 3)).result as never)).toBe('Echo: over the link');
		expect(link.received.filter((line) => line.id === null)).toHaveLength(1);
		link.close();
	});

	it("is the member's client session: open while the link is, ended with it", async () => {
		const { port, socket } = await socketOf(memory);
		const before = await sessionsOf(memory);
		const link = await openLink(socket, { Host: `127.0.0.1:${port}` });
		link.send(INITIALIZE);
		await link.next((line) => line.id === 1);
		expect(await sessionsOf(memory)).toBe(before + 1);
		link.close();
		await waitFor(async () => (await sessionsOf(memory)) === before, "the member's session to end with the link");
	});

	it('reads a message written in pieces, a character split between them, and closes on a line over 4 Mi characters', async () => {
		const { port, socket } = await socketOf(memory);
		const before = await sessionsOf(memory);
		const link = await openLink(socket, { Host: `127.0.0.1:${port}` });
		const bytes = Buffer.from(`${JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, clientInfo: { name: 'link-tést', version: '1' } } })}\n`);
		const split = bytes.indexOf(Buffer.from('é')) + 1; // between the two bytes of é
		link.write(bytes.subarray(0, split));
		await new Promise((resolve) => setTimeout(resolve, 100));
		link.write(bytes.subarray(split));
		expect(await link.next((line) => line.id === 1)).toMatchObject({ result: { protocolVersion: '2025-06-18' } });
		link.write('x'.repeat(4 * 1024 * 1024 + 1));
		expect(await link.next((line) => line.id === null)).toMatchObject({ error: { code: -32600, message: expect.stringContaining('over 4194304 characters') } });
		await waitFor(async () => (await sessionsOf(memory)) === before, "the member's session to end with the link");
	});

	it('is served on the Unix socket only, to a GET upgraded to hangar-link, behind the same guard', async () => {
		const { port, socket } = await socketOf(memory);
		const host = `127.0.0.1:${port}`;
		expect((await fetch(new URL('/link', memory.url))).status).toBe(404);
		expect(await refusalOf(socket, { Host: host }, { upgrade: '' })).toMatchObject({ status: 426, headers: { upgrade: 'hangar-link' } });
		expect((await refusalOf(socket, { Host: host }, { upgrade: 'websocket' })).status).toBe(426);
		expect((await refusalOf(socket, { Host: 'evil.example' })).status).toBe(403);
		expect((await refusalOf(socket, { Host: host }, { method: 'POST' })).status).toBe(405);
		// Only the link upgrades there; another route asked to is refused, saying how to ask instead.
		expect((await refusalOf(socket, { Host: host }, { path: '/mcp', upgrade: 'h2c' })).status).toBe(400);
	});

	it("is refused by a member with authentication of its own: the member's tools are left out and the aggregate's log says why", async () => {
		const issuer = await TestIssuer.start();
		try {
			const alone = uniqueName('guarded');
			expect((await callRest(hangar.serve.url, CreateGroup, { name: alone })).status).toBe(201);
			const guarded = await hangar.create({ name: 'guarded', image: MEMORY, transport: 'stdio', group: alone, oidc: { issuer: issuer.issuer, audience: issuer.audience } });
			const open = await hangar.create({ name: 'open', image: MEMORY, transport: 'stdio', group: alone });
			const aggregate = await hangar.create({ name: 'guarded-all', image: `group://${alone}`, group: alone });
			const names = await toolNames(await clientOf(aggregate));
			expect(names).toContain(`${open.name}_read_graph`);
			expect(names.filter((name) => name.startsWith(`${guarded.name}_`))).toEqual([]);
			const log = join(hangar.home.path, 'data', 'logs', `${aggregate.name}.log`);
			await waitFor(async () => (await readFile(log, 'utf8')).includes(`workload ${guarded.name} (a member of group ${alone}): the member's proxy refused the link with HTTP 401: authorization header required`), 'the refusal in the log');
		} finally {
			await issuer.stop();
		}
	});
});

interface LinkRequest {
	readonly method?: string;
	readonly path?: string;
	/** The protocol asked for: none for a plain request. */
	readonly upgrade?: string;
}

/** A request for a link over a Unix socket, and the connection when the proxy upgraded it. */
function requestLink(socketPath: string, headers: Record<string, string>, { method = 'GET', path = '/link', upgrade = 'hangar-link' }: LinkRequest = {}) {
	const outgoing = httpRequest({ socketPath, path, method, agent: false, headers: { ...headers, ...(upgrade && { Connection: 'Upgrade', Upgrade: upgrade }) } });
	return new Promise<{ response: IncomingMessage; socket?: Socket }>((resolve, reject) => {
		outgoing.once('upgrade', (response, socket: Socket) => resolve({ response, socket }));
		outgoing.once('response', (response: IncomingMessage) => {
			response.resume();
			resolve({ response });
		});
		outgoing.once('error', reject);
		outgoing.end();
	});
}

/** How the proxy answers a request for a link that it refuses. */
async function refusalOf(socketPath: string, headers: Record<string, string>, request: LinkRequest = {}) {
	const { response, socket } = await requestLink(socketPath, headers, request);
	socket?.destroy();
	return { status: response.statusCode, headers: response.headers };
}

/** A link opened by hand over a Unix socket: lines to send and read. */
async function openLink(socketPath: string, headers: Record<string, string>) {
	const { response, socket } = await requestLink(socketPath, headers);
	if (!socket) throw new Error(`the link was refused with HTTP ${response.statusCode}`);
	expect(response.statusCode).toBe(101);
	const lines: Array<Record<string, unknown>> = [];
	let buffered = '';
	socket.setEncoding('utf8');
	socket.on('data', (chunk: string) => {
		buffered += chunk;
		for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
			lines.push(JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>);
			buffered = buffered.slice(newline + 1);
		}
	});
	return {
		headers: response.headers,
		/** Every line read so far. */
		received: lines as ReadonlyArray<Record<string, unknown>>,
		write: (data: string | Buffer) => socket.write(data),
		send: (message: object) => socket.write(`${JSON.stringify(message)}\n`),
		/** The first line `matches` accepts, waiting for it. */
		next: (matches: (line: Record<string, unknown>) => boolean) => waitFor(async () => lines.find(matches), 'a line on the link'),
		close: () => socket.end(),
	};
}

/** One HTTP POST over a Unix socket: its status and headers. */
function overSocket(socketPath: string, headers: Record<string, string>, body: string): Promise<{ status: number; headers: IncomingHttpHeaders }> {
	return new Promise((resolve, reject) => {
		const outgoing = httpRequest({ socketPath, path: '/mcp', method: 'POST', headers: { ...headers, 'Content-Length': Buffer.byteLength(body) } }, (response) => {
			response.resume();
			resolve({ status: response.statusCode ?? 0, headers: response.headers });
		});
		outgoing.on('error', reject);
		outgoing.end(body);
	});
}

// Each client's capability set starts a server process in every member it reaches (a `docker
// exec` each, seconds apiece under load): 2.3 s idle, and once past 30 s with two other proxy
// test files running alongside, hence the budget.
describe('a member\'s requests to the client (sampling, elicitation, roots) through an aggregate', { timeout: 90_000 }, () => {
	const asking = { sampling: {}, elicitation: {}, roots: { listChanged: true } };

	/** An SDK 1.x client that declares `capabilities` (sampling, elicitation and roots), answering as `who`; what it was asked is counted. */
	async function answering(url: string, who: string, capabilities: Record<string, object> = asking): Promise<{ client: Client; asked: string[]; roots: string[] }> {
		const client = await connect(url, 'streamable-http', capabilities);
		clients.push(client);
		const asked: string[] = [];
		const roots = [`file:///work/${who}`];
		client.setRequestHandler(CreateMessageRequestSchema, async (): Promise<CreateMessageResult> => {
			asked.push('sampling');
			return { role: 'assistant', model: 'test', content: { type: 'text', text: `sampled by ${who}` } };
		});
		client.setRequestHandler(ElicitRequestSchema, async () => {
			asked.push('elicitation');
			return { action: 'accept', content: { name: `elicited from ${who}` } };
		});
		if (capabilities.roots) {
			client.setRequestHandler(ListRootsRequestSchema, async () => {
				asked.push('roots');
				return { roots: roots.map((uri) => ({ uri, name: who })) };
			});
		}
		return { client, asked, roots };
	}

	it('reach the client whose call caused them, its answers reach the member, and no other client hears of them', async () => {
		const aggregate = await hangar.create({ name: 'asking', image: `group://${group}`, group });
		// Not roots: a stdio member's process answers get-roots-list with the roots of the first client of its capability set.
		const bystander = await answering(aggregate.url, 'bystander', { sampling: {}, elicitation: {} });
		await bystander.client.listTools();
		// A capability set no other test declares, so that the member's process for it is this client's own.
		const { client, asked, roots: declared } = await answering(aggregate.url, 'caller', { ...asking, elicitation: { form: {} } });

		// Called before any list: a call waits for the lists of members still starting a session (a process for these capabilities).
		const sampled = await client.callTool({ name: `${first.name}_trigger-sampling-request`, arguments: { prompt: 'hi', maxTokens: 5 } });
		expect(textOf(sampled)).toContain('sampled by caller');
		const elicited = await client.callTool({ name: `${first.name}_trigger-elicitation-request`, arguments: {} });
		expect(JSON.stringify(elicited)).toContain('elicited from caller');
		const roots = await client.callTool({ name: `${first.name}_get-roots-list`, arguments: {} });
		expect(textOf(roots)).toContain('file:///work/caller');
		// The client's roots/list_changed reaches the member, which asks again.
		declared.push('file:///work/caller-too');
		await client.sendRootsListChanged();
		await waitFor(async () => textOf(await client.callTool({ name: `${first.name}_get-roots-list`, arguments: {} })).includes('file:///work/caller-too'), 'the member to ask for the roots again');
		expect(asked).toEqual(expect.arrayContaining(['sampling', 'elicitation', 'roots']));
		expect(bystander.asked).toEqual([]);
		// The member was told what the client can do: it offers the tools that ask the client, and the bystander's lists lack roots'.
		expect(await toolNames(client)).toEqual(expect.arrayContaining([`${first.name}_trigger-sampling-request`, `${first.name}_trigger-elicitation-request`, `${first.name}_get-roots-list`]));
		expect(await toolNames(bystander.client)).not.toContain(`${first.name}_get-roots-list`);
	});

	it('calls of two clients at once, through two members, each get their own client\'s answers', async () => {
		const aggregate = await hangar.create({ name: 'asking-both', image: `group://${group}`, group });
		const [one, two] = await Promise.all([answering(aggregate.url, 'one'), answering(aggregate.url, 'two')]);
		const results = await Promise.all(
			[one, two].flatMap(({ client }, index) =>
				[first, second].map(async (member) => ({ index, text: textOf(await client.callTool({ name: `${member.name}_trigger-sampling-request`, arguments: { prompt: 'hi', maxTokens: 5 } })) })),
			),
		);
		for (const { index, text } of results) expect(text).toContain(`sampled by ${index === 0 ? 'one' : 'two'}`);
		// Besides, each member asks each client for its roots once its session starts.
		for (const { asked } of [one, two]) expect(asked.filter((what) => what === 'sampling')).toHaveLength(2);
	});

	it('an SDK 2.x client at 2026-07-28 answers a member\'s elicitation in an input round', async () => {
		const aggregate = await hangar.create({ name: 'asking-2026', image: `group://${group}`, group });
		const client = await connectModern(aggregate.url, { elicitation: { form: {} }, sampling: {} });
		try {
			client.setRequestHandler('elicitation/create', async () => ({ action: 'accept' as const, content: { name: 'elicited at 2026-07-28' } }));
			client.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant' as const, model: 'test', content: { type: 'text' as const, text: 'sampled at 2026-07-28' } }));
			const [elicited, sampled] = await Promise.all([
				client.callTool({ name: `${first.name}_trigger-elicitation-request`, arguments: {} }),
				client.callTool({ name: `${second.name}_trigger-sampling-request`, arguments: { prompt: 'hi', maxTokens: 5 } }),
			]);
			expect(JSON.stringify(elicited)).toContain('elicited at 2026-07-28');
			expect(JSON.stringify(sampled)).toContain('sampled at 2026-07-28');
		} finally {
			await client.close();
		}
	});
});

const DRIFTING = fileURLToPath(new URL('./fixtures/workloads/drifting-server.mjs', import.meta.url));
const fixtures: RemoteServer[] = [];
afterAll(() => fixtures.forEach((fixture) => fixture.stop()));

describe('every MCP revision through an aggregate, a 2026-07-28-only member among its members', { timeout: 180_000 }, () => {
	let aggregate: Workload;
	let modern: Workload;
	let http: Workload;
	beforeAll(async () => {
		const revisionGroup = uniqueName('revisions');
		expect((await callRest(hangar.serve.url, CreateGroup, { name: revisionGroup })).status).toBe(201);
		const fixture = await startFixture(DRIFTING);
		fixtures.push(fixture);
		[modern, http] = await Promise.all([
			hangar.create({ name: 'modern', image: MODERN, transport: 'streamable-http', target_port: 3001, group: revisionGroup }),
			hangar.create({ name: 'http', url: fixture.url, group: revisionGroup }),
		]);
		aggregate = await hangar.create({ name: 'revisions', image: `group://${revisionGroup}`, group: revisionGroup });
	}, 180_000);

	it.each(REVISIONS)('a %s client (SDK 1.x before 2026-07-28, SDK 2.x at it) lists and calls both members', async (revision) => {
		const client = await connectAt(aggregate.url, revision, 'streamable-http');
		try {
			expect(client.negotiated).toBe(revision);
			const names = await client.listToolNames();
			expect(names).toEqual(expect.arrayContaining([`${modern.name}_echo`, `${http.name}_echo`, `${http.name}_lookup`]));
			expect(textOf(await client.callTool(`${modern.name}_echo`, { message: revision }))).toBe(`Echo: ${revision}`);
			expect(textOf(await client.callTool(`${http.name}_echo`, {}))).toBe('called echo');
		} finally {
			await client.close();
		}
	});
});

describe('a member that answers tools/list slowly', { timeout: 120_000 }, () => {

	/** Holds the fixture's tools/list answers (past the aggregate's wait for a member), or lets them go. */
	async function hold(server: RemoteServer, on: boolean): Promise<void> {
		const response = await fetch(new URL('/control', server.url), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ hold: on }) });
		expect(response.status).toBe(204);
	}

	it('costs only its own tools: the list answers with the others\', and its own come with list_changed once it answers', async () => {
		const slowGroup = uniqueName('slow');
		expect((await callRest(hangar.serve.url, CreateGroup, { name: slowGroup })).status).toBe(201);
		const [quick, slow] = await Promise.all([startFixture(DRIFTING), startFixture(DRIFTING)]);
		fixtures.push(quick, slow);
		const quickMember = await hangar.create({ name: 'quick', url: quick.url, group: slowGroup });
		const slowMember = await hangar.create({ name: 'slow', url: slow.url, group: slowGroup });
		const client = await clientOf(await hangar.create({ name: 'patient', image: `group://${slowGroup}`, group: slowGroup }));
		let changes = 0;
		client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
			changes++;
		});

		await hold(slow, true);
		expect(await toolNames(client)).toEqual([`${quickMember.name}_echo`, `${quickMember.name}_lookup`]);
		const before = changes;
		await hold(slow, false);
		await waitFor(async () => changes > before, 'notifications/tools/list_changed once the slow member answered');
		expect(await toolNames(client)).toEqual([`${quickMember.name}_echo`, `${quickMember.name}_lookup`, `${slowMember.name}_echo`, `${slowMember.name}_lookup`].sort());
		expect(textOf(await client.callTool({ name: `${slowMember.name}_echo`, arguments: {} }))).toBe('called echo');
	});
});
