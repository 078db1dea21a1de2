/**
 * Hangar's proxy as a faithful MCP intermediary, with the official SDK clients and the MCP
 * Inspector CLI: clients of every revision from 2024-11-05 to 2026-07-28, over Streamable HTTP
 * and legacy SSE, against a stdio server, an HTTP server and a server that speaks only
 * 2026-07-28; and two clients sharing one stdio server, kept apart.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
	CallToolResultSchema,
	CreateMessageRequestSchema,
	CreateTaskResultSchema,
	ElicitRequestSchema,
	LoggingMessageNotificationSchema,
	ResourceUpdatedNotificationSchema,
	ResultSchema,
	ToolListChangedNotificationSchema,
	type CreateMessageResult,
} from '@modelcontextprotocol/sdk/types.js';
import { ApproveWorkloadTools } from '../protocol/protocol.workloads.js';
import { postMcp } from './fixtures/security/support.js';
import { textOf, waitFor } from './fixtures/workloads/helpers.js';
import { connectAt, connectLegacy, connectModern, inspect, MODERN_REVISION, REVISIONS, type ClientTransport, type Revision } from './support/mcpClients.js';
import { callRest } from './support/rest.js';
import { SERVERS, startHangar, type Hangar, type ServerKind, type Workload } from './support/proxyTargets.js';

let hangar: Hangar;
let inspectorHome: string;
const workloads = new Map<ServerKind, Workload>();

beforeAll(async () => {
	hangar = await startHangar();
	inspectorHome = await mkdtemp(join(tmpdir(), 'hangar-inspector-'));
	const kinds = Object.keys(SERVERS) as ServerKind[];
	const created = await Promise.all(kinds.map((kind, index) => hangar.create({ name: `rev-${index}`, ...SERVERS[kind] })));
	kinds.forEach((kind, index) => workloads.set(kind, created[index]!));
}, 180_000);

afterAll(async () => {
	await hangar?.dispose();
	if (inspectorHome) await rm(inspectorHome, { recursive: true, force: true });
}, 120_000);

/** Where a client of `transport` connects to a workload's proxy. */
function endpointOf(workload: Workload, transport: ClientTransport): string {
	return transport === 'sse' ? `${workload.origin}/sse` : workload.url;
}

// 2026-07-28 has no legacy SSE transport: its client is only ever a Streamable HTTP client.
const CELLS = REVISIONS.flatMap((revision) =>
	(['streamable-http', 'sse'] as const).filter((transport) => revision !== MODERN_REVISION || transport === 'streamable-http').map((transport) => ({ revision, transport })),
);

describe.each(Object.keys(SERVERS) as ServerKind[])('through Hangar to the %s', { timeout: 120_000 }, (kind) => {
	it.each(CELLS)('a $revision client over $transport: negotiates its revision, lists and calls tools', async ({ revision, transport }: { revision: Revision; transport: ClientTransport }) => {
		const client = await connectAt(endpointOf(workloads.get(kind)!, transport), revision, transport);
		try {
			// Every server here agrees to the client's revision (server-everything to all four
			// 2024–2025 ones, the 2026-07-28 server to its own), or the proxy translates between
			// eras: either way the client must be told exactly the revision it asked for.
			expect(client.negotiated).toBe(revision);
			expect(await client.listToolNames()).toContain('echo');
			expect(textOf(await client.callTool('echo', { message: `${revision} via ${transport}` }))).toBe(`Echo: ${revision} via ${transport}`);
		} finally {
			await client.close();
		}
	});

	it.each([
		{ era: 'legacy', transport: 'streamable-http' },
		{ era: 'legacy', transport: 'sse' },
		{ era: 'modern', transport: 'streamable-http' },
	] as const)('the MCP Inspector CLI ($era era over $transport) calls a tool', async ({ era, transport }) => {
		const url = endpointOf(workloads.get(kind)!, transport);
		const output = (await inspect(url, ['--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'message=inspected'], { home: inspectorHome, era })) as {
			result?: unknown;
		};
		expect(textOf(output.result)).toBe('Echo: inspected');
	});
});

describe('across eras, through Hangar', { timeout: 60_000 }, () => {
	const answers = {
		elicit: async () => ({ action: 'accept' as const, content: { name: 'Ada' } }),
		sample: async (): Promise<CreateMessageResult> => ({ role: 'assistant', model: 'test-model', content: { type: 'text', text: 'sampled text' } }),
	};

	// Directly, the baseline; through Hangar, the 2026-07-28 client's requests pass through natively.
	it.each(['directly', 'through Hangar'])('a 2026-07-28 client of the 2026-07-28 server, %s, answers input requests, gets logs at its level and resource updates', async (route) => {
		const modern = workloads.get('2026-07-28 image')!;
		const client = await connectModern(route === 'directly' ? await hangar.direct(modern, 3001, '/mcp') : modern.url, { elicitation: { form: {} }, sampling: {} });
		const logs: string[] = [];
		const updates: string[] = [];
		client.setRequestHandler('elicitation/create', answers.elicit);
		client.setRequestHandler('sampling/createMessage', answers.sample);
		client.setNotificationHandler('notifications/message', (notification) => {
			logs.push(String(notification.params.data));
		});
		client.setNotificationHandler('notifications/resources/updated', (notification) => {
			updates.push(notification.params.uri);
		});
		try {
			expect(textOf(await client.callTool({ name: 'ask-name', arguments: {} }))).toBe('Hello, Ada');
			expect(textOf(await client.callTool({ name: 'sample', arguments: { prompt: 'say something' } }))).toBe('Sampled: sampled text');
			// 2026-07-28 has no logging/setLevel: the level travels in each request's _meta.
			await client.callTool({ name: 'log', arguments: { level: 'warning', message: 'direct' }, _meta: { 'io.modelcontextprotocol/logLevel': 'info' } });
			await waitFor(async () => logs.includes('direct'), 'the log message');
			const subscription = await client.listen({ resourceSubscriptions: ['fixture://counter'] });
			try {
				await waitFor(
					async () => {
						await client.callTool({ name: 'bump', arguments: {} });
						return updates.includes('fixture://counter');
					},
					'an update of the subscribed resource',
				);
			} finally {
				await subscription.close();
			}
		} finally {
			await client.close();
		}
	});

	it('a 2026-07-28 client of a 2026-07-28 server goes straight through: no initialize reaches the server', async () => {
		// A relay in front of the server's own port writes down each method the proxy sends it.
		const upstream = await hangar.direct(workloads.get('2026-07-28 image')!, 3001, '/mcp');
		const seen: string[] = [];
		const relay: Server = createServer(async (request, response) => {
			const chunks: Buffer[] = [];
			for await (const chunk of request) chunks.push(chunk as Buffer);
			const body = Buffer.concat(chunks);
			if (body.length) seen.push(String((JSON.parse(body.toString()) as { method?: string }).method ?? 'a response'));
			const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)) as Array<[string, string]>);
			const answer = await fetch(upstream, { method: request.method, headers, body: body.length ? body : undefined });
			response.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([name]) => !['content-length', 'transfer-encoding', 'connection'].includes(name))));
			if (answer.body) Readable.fromWeb(answer.body as never).pipe(response);
			else response.end();
		});
		await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
		try {
			const workload = await hangar.create({ name: 'straight', url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}/mcp` });
			const client = await connectModern(workload.url);
			try {
				expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'straight' } }))).toBe('Echo: straight');
			} finally {
				await client.close();
			}
			expect(seen).toContain('tools/call');
			expect(seen).not.toContain('initialize');
		} finally {
			relay.closeAllConnections();
			relay.close();
		}
	});

	it('a 2026-07-28 client\'s listen through Hangar outlives the request timeout', async () => {
		const impatient = await hangar.create({ name: 'rev-listen', ...SERVERS['2026-07-28 image'], request_timeout: 1 });
		const client = await connectModern(impatient.url, {});
		const updates: string[] = [];
		client.setNotificationHandler('notifications/resources/updated', (notification) => {
			updates.push(notification.params.uri);
		});
		try {
			const subscription = await client.listen({ resourceSubscriptions: ['fixture://counter'] });
			try {
				// Silent for longer than the one-second timeout of a call.
				await new Promise((resolve) => setTimeout(resolve, 2_500));
				await client.callTool({ name: 'bump', arguments: {} });
				await waitFor(async () => updates.includes('fixture://counter'), 'an update on the listen stream');
			} finally {
				await subscription.close();
			}
		} finally {
			await client.close();
		}
	});

	it('a 2026-07-28 client that closes its subscriptions/listen through Hangar ends the listen upstream', async () => {
		// A workload of its own: the sessions of other tests' 2025 clients follow list changes with listens of theirs.
		const modern = await hangar.create({ name: 'rev-listen-end', ...SERVERS['2026-07-28 image'] });
		const client = await connectModern(modern.url, {});
		try {
			const subscription = await client.listen({ resourceSubscriptions: ['fixture://counter'] });
			expect(await serverConnections(modern.name)).toBeGreaterThan(0);
			await subscription.close();
		} finally {
			await client.close();
		}
		// Idle kept-alive connections are closed by the server after a few seconds; an open listen never is.
		await waitFor(async () => (await serverConnections(modern.name)) === 0, 'the upstream listen to end', 45_000);
	});

	it('a 2025-11-25 client answers the elicitation and sampling a 2026-07-28 server asks for in input-required results', async () => {
		const { client } = await connectLegacy(workloads.get('2026-07-28 image')!.url, {
			revision: '2025-11-25',
			transport: 'streamable-http',
			capabilities: { elicitation: { form: {} }, sampling: {} },
		});
		try {
			client.setRequestHandler(ElicitRequestSchema, answers.elicit);
			client.setRequestHandler(CreateMessageRequestSchema, answers.sample);
			expect(textOf(await client.callTool({ name: 'ask-name', arguments: {} }))).toBe('Hello, Ada');
			expect(textOf(await client.callTool({ name: 'sample', arguments: { prompt: 'say something' } }))).toBe('Sampled: sampled text');
		} finally {
			await client.close();
		}
	});

	it('a 2025-11-25 client gets the log messages and resource updates of a 2026-07-28 server', async () => {
		const { client } = await connectLegacy(workloads.get('2026-07-28 image')!.url, { revision: '2025-11-25', transport: 'streamable-http' });
		const logs: string[] = [];
		const updates: string[] = [];
		client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
			logs.push(String(notification.params.data));
		});
		client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
			updates.push(notification.params.uri);
		});
		try {
			await client.setLoggingLevel('info');
			await client.callTool({ name: 'log', arguments: { level: 'warning', message: 'across eras' } });
			await waitFor(async () => logs.includes('across eras'), 'the log message');

			await client.subscribeResource({ uri: 'fixture://counter' });
			await waitFor(
				async () => {
					await client.callTool({ name: 'bump', arguments: {} });
					return updates.includes('fixture://counter');
				},
				'an update of the subscribed resource',
			);
		} finally {
			await client.close();
		}
	});

});

describe('a 2025-11-25 client of a 2026-07-28 server, through Hangar', { timeout: 60_000 }, () => {
	const connect = (capabilities = {}) => connectLegacy(workloads.get('2026-07-28 image')!.url, { revision: '2025-11-25', transport: 'streamable-http', capabilities });

	it('is told when the tool list changes, and sees the new tool', async () => {
		const { client } = await connect();
		let changes = 0;
		client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
			changes += 1;
		});
		try {
			// The list changes arrive through a subscriptions/listen the proxy opens after the handshake.
			await waitFor(
				async () => {
					await client.callTool({ name: 'grow', arguments: {} });
					return changes > 0;
				},
				'notifications/tools/list_changed',
			);
			// A tool added after the first list is pinned, and served, once approved (tool pinning):
			// the proxy must have seen it listed for the approval to take it.
			await client.listTools();
			const approved = await callRest(hangar.serve.url, ApproveWorkloadTools, { name: workloads.get('2026-07-28 image')!.name });
			expect(approved.status, JSON.stringify(approved.body)).toBe(200);
			await waitFor(async () => (await client.listTools()).tools.some((tool) => tool.name === 'grown'), 'the approved tool in the list');
		} finally {
			await client.close();
		}
	});

	it('runs tasks on the server\'s Tasks extension: created, polled, answered, listed, cancelled, and its own', async () => {
		const { client } = await connect({ elicitation: { form: {} } });
		const { client: other } = await connect();
		client.setRequestHandler(ElicitRequestSchema, async (request) => {
			expect(request.params._meta?.['io.modelcontextprotocol/related-task']).toBeDefined();
			return { action: 'accept', content: { approve: true } };
		});
		const run = async (name: string, args: Record<string, unknown>) => {
			const seen: string[] = [];
			let taskId: string | undefined;
			let outcome: unknown;
			for await (const message of client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: { ttl: 60_000 } })) {
				seen.push(message.type);
				if (message.type === 'taskCreated') taskId = message.task.taskId;
				if (message.type === 'result') outcome = message.result;
				if (message.type === 'error') throw message.error;
			}
			return { seen, taskId: taskId!, outcome };
		};
		try {
			expect(client.getServerCapabilities()?.tasks?.requests?.tools?.call).toBeDefined();

			const slow = await run('slow-task', { ms: 300 });
			expect(slow.seen[0]).toBe('taskCreated');
			expect(slow.seen).toContain('taskStatus');
			expect(textOf(slow.outcome)).toBe('done after 300 ms');
			// Server-directed: a call that asks for no task is answered in the call.
			expect(textOf(await client.callTool({ name: 'slow-task', arguments: { ms: 10 } }))).toBe('done after 10 ms');

			// The server's question reaches the client on its tasks/result stream; the answer goes back with tasks/update.
			const approved = await run('approve-task', {});
			expect(textOf(approved.outcome)).toBe('approved: true');

			// A server that answers at once gives no task: the proxy holds the result as a completed one.
			const held = await run('echo', { message: 'held' });
			expect(held.taskId).toMatch(/^hangar-task-/);
			expect(textOf(held.outcome)).toBe('Echo: held');

			const long = await client.request({ method: 'tools/call', params: { name: 'slow-task', arguments: { ms: 30_000 }, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
			const cancelled = await client.experimental.tasks.cancelTask(long.task.taskId);
			expect(cancelled.status).toBe('cancelled');
			expect((await client.experimental.tasks.getTask(long.task.taskId)).status).toBe('cancelled');

			const listed = (await client.experimental.tasks.listTasks()).tasks.map((task) => [task.taskId, task.status]);
			expect(listed).toEqual(
				expect.arrayContaining([
					[slow.taskId, 'completed'],
					[approved.taskId, 'completed'],
					[held.taskId, 'completed'],
					[long.task.taskId, 'cancelled'],
				]),
			);
			// Another client's session knows none of them.
			expect((await other.experimental.tasks.listTasks()).tasks).toEqual([]);
			await expect(other.experimental.tasks.getTask(slow.taskId)).rejects.toThrow(/no task/);
		} finally {
			await client.close();
			await other.close();
		}
	});

	it('opts one call into a task by its own _meta as the server reached directly does: the server\'s task, as the server gave it', async () => {
		const modern = workloads.get('2026-07-28 image')!;
		const optIn = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } };
		// slow-task is not marked task-capable in the server's list: the server decides, per request.
		const request = (name: string, args: Record<string, unknown>) => ({ method: 'tools/call', params: { name, arguments: args, _meta: optIn } });
		const directly = async (name: string, args: Record<string, unknown>) => {
			const { params } = request(name, args);
			const meta = { ...params._meta, 'io.modelcontextprotocol/protocolVersion': MODERN_REVISION, 'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1' } };
			const answer = await postMcp(await hangar.direct(modern, 3001, '/mcp'), { id: 1, method: 'tools/call', params: { ...params, _meta: meta } }, { 'MCP-Protocol-Version': MODERN_REVISION, 'Mcp-Method': 'tools/call', 'Mcp-Name': name });
			return (answer.body as { result: Record<string, unknown> }).result;
		};
		const { client } = await connect();
		try {
			const baseline = await directly('slow-task', { ms: 200 });
			expect(baseline).toMatchObject({ resultType: 'task', status: 'working' });
			const created = await client.request(request('slow-task', { ms: 200 }), ResultSchema);
			expect(created).toMatchObject({ resultType: 'task', status: 'working' });
			expect(Object.keys(created).sort()).toEqual(Object.keys(baseline).sort());
			// The task is the session's, followed as its other tasks are.
			await waitFor(async () => (await client.experimental.tasks.getTask(created.taskId as string)).status === 'completed', 'the task completed');

			// A tool the server answers at once is answered at once, in the client's revision.
			expect(await directly('echo', { message: 'now' })).toMatchObject({ resultType: 'complete' });
			const answered = await client.request(request('echo', { message: 'now' }), ResultSchema);
			expect(textOf(answered)).toBe('Echo: now');
			expect(answered).not.toHaveProperty('resultType');
		} finally {
			await client.close();
		}
	});
});

describe.each(['stdio image', 'HTTP-mode container'] as const)('a 2026-07-28 client in front of a 2025-era server (the %s) that asks it things', { timeout: 120_000 }, (kind) => {
	const sample = async (): Promise<CreateMessageResult> => ({ role: 'assistant', model: 'test-model', content: { type: 'text', text: 'sampled text' } });

	// A workload of its own: every call here that waits for its client takes a server process of
	// the stdio server's, which the sessions other tests leave open on the shared ones may have used up.
	let url: string;
	beforeAll(async () => {
		url = (await hangar.create({ name: 'asks', ...SERVERS[kind] })).url;
	}, 120_000);

	it('answers the server\'s sampling and elicitation requests in input rounds, for concurrent calls', async () => {
		const client = await connectModern(url, { sampling: {}, elicitation: { form: {} } });
		try {
			let asked = 0;
			client.setRequestHandler('sampling/createMessage', async () => {
				asked++;
				return sample();
			});
			client.setRequestHandler('elicitation/create', async () => ({ action: 'accept' as const, content: { color: 'blue', number: 7, pets: 'dogs' } }));
			const [sampled, elicited, plain] = await Promise.all([
				client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 10 } }),
				client.callTool({ name: 'trigger-elicitation-request', arguments: {} }),
				client.callTool({ name: 'echo', arguments: { message: 'meanwhile' } }),
			]);
			expect(JSON.stringify(sampled)).toContain('sampled text');
			expect(JSON.stringify(elicited)).toContain('blue');
			expect(textOf(plain)).toBe('Echo: meanwhile');
			expect(asked).toBe(1);
		} finally {
			await client.close();
		}
	});

	it('a call held for one caller\'s input holds up no other caller\'s call', async () => {
		const ask = async (params: Record<string, unknown>) => {
			const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN_REVISION, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };
			const headers = { 'MCP-Protocol-Version': MODERN_REVISION, 'Mcp-Method': 'tools/call', 'Mcp-Name': String(params.name) };
			return (await postMcp(url, { id: 1, method: 'tools/call', params: { ...params, _meta: meta } }, headers)).body as { result?: Record<string, any> };
		};
		const held = await ask({ name: 'trigger-elicitation-request', arguments: {} });
		expect(held.result).toMatchObject({ resultType: 'input_required' });
		// Another caller of the same capabilities, while the first has not answered (on a shared stdio process, it waited its turn).
		expect(textOf((await ask({ name: 'echo', arguments: { message: 'not held up' } })).result)).toBe('Echo: not held up');
		const [key] = Object.keys(held.result!.inputRequests as object);
		const declined = await ask({ name: 'trigger-elicitation-request', arguments: {}, requestState: held.result!.requestState, inputResponses: { [key!]: { action: 'decline' } } });
		expect(declined.result).toMatchObject({ resultType: 'complete' });
	});

	it('refuses a requestState that names no held call', async () => {
		// The first call of a capability set may start a server process: the reply can turn into an event stream meanwhile.
		const answer = await postMcp(
			url,
			{
				id: 3,
				method: 'tools/call',
				params: { name: 'echo', arguments: { message: 'x' }, requestState: 'hangar-held:nothing', inputResponses: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_REVISION, 'io.modelcontextprotocol/clientCapabilities': { sampling: {} } } },
			},
			{ 'MCP-Protocol-Version': MODERN_REVISION, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'echo' },
		);
		const body = answer.body as { error?: { code: number; message: string } };
		expect(body.error).toMatchObject({ code: -32602 });
		expect(body.error!.message).toMatch(/requestState/);
	});
});

describe.each(['stdio image', 'HTTP-mode container'] as const)('a 2026-07-28 client of the tasks of a 2025-11-25 server (the %s), through Hangar', { timeout: 120_000 }, (kind) => {
	const TASKS = 'io.modelcontextprotocol/tasks';
	/** One 2026-07-28 request, as raw JSON-RPC, from a client that declared `capabilities`. */
	const ask = async (method: string, params: Record<string, unknown>, capabilities: Record<string, unknown>) => {
		const name = (params.name ?? params.taskId) as string | undefined;
		const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN_REVISION, 'io.modelcontextprotocol/clientCapabilities': capabilities, 'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1' } };
		const headers: Record<string, string> = { 'MCP-Protocol-Version': MODERN_REVISION, 'Mcp-Method': method, ...(name ? { 'Mcp-Name': name } : {}) };
		const answer = await postMcp(workloads.get(kind)!.url, { id: 1, method, params: { ...params, _meta: meta } }, headers);
		return answer.body as { result?: Record<string, any>; error?: { code: number; message: string; data?: any } };
	};
	const withTasks = { elicitation: { form: {} }, extensions: { [TASKS]: {} } };
	const poll = async (taskId: string, until: (result: Record<string, any>) => boolean) => {
		let last: Record<string, any> | undefined;
		await waitFor(async () => {
			const got = await ask('tasks/get', { taskId }, withTasks);
			last = got.result;
			if (!last) throw new Error(JSON.stringify(got));
			return until(last);
		}, 'the task to change', 60_000);
		return last!;
	};

	it('discovers the Tasks extension, runs a task that asks for input, and answers it with tasks/update', async () => {
		const discovered = await ask('server/discover', {}, withTasks);
		expect(discovered.result?.capabilities.extensions).toHaveProperty([TASKS]);
		expect(discovered.result?.capabilities).not.toHaveProperty('tasks');

		const created = await ask('tools/call', { name: 'simulate-research-query', arguments: { topic: 'python', ambiguous: true } }, withTasks);
		expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
		const taskId = created.result!.taskId as string;
		expect(created.result!.ttlMs).toBeGreaterThan(0);

		const asking = await poll(taskId, (task) => task.status !== 'working');
		expect(asking).toMatchObject({ resultType: 'complete', status: 'input_required' });
		const [key, request] = Object.entries(asking.inputRequests as Record<string, { method: string; params: Record<string, unknown> }>)[0]!;
		expect(request.method).toBe('elicitation/create');
		expect(request.params._meta ?? {}).not.toHaveProperty(['io.modelcontextprotocol/related-task']);

		// Following a task takes the extension.
		expect((await ask('tasks/get', { taskId }, { elicitation: { form: {} } })).error).toMatchObject({ code: -32021 });

		expect((await ask('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content: { interpretation: 'programming' } } } }, withTasks)).result).toMatchObject({ resultType: 'complete' });
		const done = await poll(taskId, (task) => ['completed', 'failed', 'cancelled'].includes(task.status));
		expect(done.status).toBe('completed');
		expect(JSON.stringify(done.result)).toContain('Research Report: python (programming)');
	});

	it('cancels a task; refuses a task-only tool to a client without the extension, and an unknown task', async () => {
		const created = await ask('tools/call', { name: 'simulate-research-query', arguments: { topic: 'rust' } }, withTasks);
		const taskId = created.result!.taskId as string;
		expect((await ask('tasks/cancel', { taskId }, withTasks)).result).toMatchObject({ resultType: 'complete' });
		expect((await poll(taskId, (task) => task.status !== 'working')).status).toBe('cancelled');

		const refused = await ask('tools/call', { name: 'simulate-research-query', arguments: { topic: 'go' } }, {});
		expect(refused.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
		expect((await ask('tasks/get', { taskId: 'no-such-task' }, withTasks)).error).toMatchObject({ code: -32602 });
		// A tool that takes no task is called as before.
		expect(textOf((await ask('tools/call', { name: 'echo', arguments: { message: 'plain' } }, withTasks)).result)).toBe('Echo: plain');
	});
});

describe('a 2026-07-28 client\'s subscriptions/listen in front of a 2025-11-25 server, answered by the proxy', { timeout: 90_000 }, () => {
	const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
	const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN_REVISION, 'io.modelcontextprotocol/clientCapabilities': {} };
	const headersOf = (method: string, name?: string): Record<string, string> => ({ 'MCP-Protocol-Version': MODERN_REVISION, 'Mcp-Method': method, ...(name ? { 'Mcp-Name': name } : {}) });

	/** Opens a listen as raw HTTP and collects every message of its event stream. */
	async function listenRaw(url: string, id: string, notifications: Record<string, unknown>) {
		const stop = new AbortController();
		const frames: Array<Record<string, any>> = [];
		const response = await fetch(url, {
			method: 'POST',
			headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headersOf('subscriptions/listen') },
			body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications, _meta: meta } }),
			signal: stop.signal,
		});
		void (async () => {
			let buffered = '';
			try {
				for await (const chunk of response.body!) {
					buffered += Buffer.from(chunk).toString('utf8');
					const lines = buffered.split('\n');
					buffered = lines.pop()!;
					for (const line of lines) if (line.startsWith('data: ')) frames.push(JSON.parse(line.slice(6)));
				}
			} catch {
				// closed by the test
			}
		})();
		return { frames, close: () => stop.abort() };
	}

	it('acknowledges first, then carries only what its filter asks for, tagged with its subscription id', async () => {
		// A workload of its own: toggling server-everything's updates is one switch per stdio process.
		const { url } = await hangar.create({ name: 'rev-listen-2025', ...SERVERS['stdio image'] });
		const resource = 'demo://resource/dynamic/text/1';
		const updates = await listenRaw(url, 'updates', { resourceSubscriptions: [resource], toolsListChanged: true });
		const lists = await listenRaw(url, 'lists', { promptsListChanged: true });
		try {
			await waitFor(async () => updates.frames.length > 0 && lists.frames.length > 0, 'both listens to be acknowledged');
			expect(updates.frames[0]).toEqual({
				jsonrpc: '2.0',
				method: 'notifications/subscriptions/acknowledged',
				params: { notifications: { toolsListChanged: true, resourceSubscriptions: [resource] }, _meta: { [SUBSCRIPTION_ID]: 'updates' } },
			});
			expect(lists.frames[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: { promptsListChanged: true }, _meta: { [SUBSCRIPTION_ID]: 'lists' } } });
			// server-everything announces an update of every subscribed resource at once, then every 5 s.
			const toggle = () => postMcp(url, { id: 1, method: 'tools/call', params: { name: 'toggle-subscriber-updates', arguments: {}, _meta: meta } }, headersOf('tools/call', 'toggle-subscriber-updates'));
			await toggle();
			try {
				await waitFor(async () => updates.frames.some((frame) => frame.method === 'notifications/resources/updated'), 'an update of the subscribed resource', 30_000);
				const updated = updates.frames.filter((frame) => frame.method === 'notifications/resources/updated');
				expect(updated.every((frame) => frame.params.uri === resource && frame.params._meta[SUBSCRIPTION_ID] === 'updates')).toBe(true);
				expect(lists.frames.slice(1)).toEqual([]);
			} finally {
				await toggle();
			}
		} finally {
			updates.close();
			lists.close();
		}
	});

	it('refuses a listen without a filter', async () => {
		const answer = await postMcp(workloads.get('stdio image')!.url, { id: 7, method: 'subscriptions/listen', params: { _meta: meta } }, headersOf('subscriptions/listen'));
		expect((answer.body as { error?: { code: number } }).error).toMatchObject({ code: -32602 });
	});
});

describe('the standard headers of a 2026-07-28 request, checked by the proxy in front of a stdio server', { timeout: 60_000 }, () => {
	const read = (headers: Record<string, string>) =>
		postMcp(
			workloads.get('stdio image')!.url,
			{ id: 1, method: 'resources/read', params: { uri: 'demo://resource/dynamic/text/1', _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_REVISION, 'io.modelcontextprotocol/clientCapabilities': {} } } },
			headers,
		);
	const standard = { 'MCP-Protocol-Version': MODERN_REVISION, 'Mcp-Method': 'resources/read' };
	const encoded = `=?base64?${Buffer.from('demo://resource/dynamic/text/1').toString('base64')}?=`;

	it('accepts an Mcp-Name in base64, and one with whitespace around it', async () => {
		for (const name of [encoded, '  demo://resource/dynamic/text/1 ']) {
			const answer = await read({ ...standard, 'Mcp-Name': name });
			expect(answer.status, name).toBe(200);
			expect((answer.body as { result: { contents: unknown[] } }).result.contents).toHaveLength(1);
		}
	});

	it.each([
		['no Mcp-Name', standard, /Mcp-Name header is required/],
		['malformed base64', { ...standard, 'Mcp-Name': '=?base64?ZGVtbw?=' }, /Mcp-Name header does not match/],
		['another URI', { ...standard, 'Mcp-Name': 'demo://other' }, /Mcp-Name header does not match the request's uri/],
		['another method', { ...standard, 'Mcp-Method': 'tools/call', 'Mcp-Name': encoded }, /Mcp-Method header does not match/],
		['no MCP-Protocol-Version', { 'Mcp-Method': 'resources/read', 'Mcp-Name': encoded }, /MCP-Protocol-Version header is required/],
	])('refuses %s with 400 and HeaderMismatch', async (_case, headers, message) => {
		const answer = await read(headers as Record<string, string>);
		expect(answer.status).toBe(400);
		const body = answer.body as { id: number; error: { code: number; message: string } };
		expect(body).toMatchObject({ id: 1, error: { code: -32020 } });
		expect(body.error.message).toMatch(message);
	});
});

describe('a malformed 2026-07-28 request, refused by the proxy in front of a stdio server as a 2026-07-28 server refuses it', { timeout: 60_000 }, () => {
	const claims = { 'io.modelcontextprotocol/protocolVersion': MODERN_REVISION, 'io.modelcontextprotocol/clientCapabilities': {} };
	const post = (method: string, params: Record<string, unknown>, version = MODERN_REVISION) =>
		postMcp(workloads.get('stdio image')!.url, { id: 7, method, params }, { 'MCP-Protocol-Version': version, 'Mcp-Method': method, ...(typeof params.name === 'string' ? { 'Mcp-Name': params.name } : {}) });

	it.each([
		['no _meta', 'server/discover', {}, MODERN_REVISION, 400, { code: -32602, data: { envelope: { missing: ['_meta'] } } }],
		['no protocol version in _meta', 'server/discover', { _meta: { 'io.modelcontextprotocol/clientCapabilities': {} } }, MODERN_REVISION, 400, { code: -32602 }],
		['no client capabilities in _meta', 'server/discover', { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_REVISION } }, MODERN_REVISION, 400, { code: -32602 }],
		['a header that disagrees with _meta', 'server/discover', { _meta: { ...claims, 'io.modelcontextprotocol/protocolVersion': 'v999' } }, MODERN_REVISION, 400, { code: -32020 }],
		['a revision it does not speak', 'server/discover', { _meta: { ...claims, 'io.modelcontextprotocol/protocolVersion': 'v999' } }, 'v999', 400, { code: -32022, data: { supported: [MODERN_REVISION], requested: 'v999' } }],
		['a method the revision removed', 'ping', { _meta: claims }, MODERN_REVISION, 404, { code: -32601 }],
		['a method the server lacks', 'unknown/method', { _meta: claims }, MODERN_REVISION, 404, { code: -32601 }],
		['inputResponses that are not results', 'tools/call', { name: 'echo', arguments: { message: 'x' }, inputResponses: { asked: 12345 }, _meta: claims }, MODERN_REVISION, 400, { code: -32602 }],
		['null inputResponses', 'tools/call', { name: 'echo', arguments: { message: 'x' }, inputResponses: null, _meta: claims }, MODERN_REVISION, 400, { code: -32602 }],
	] as const)('refuses %s', async (_case, method, params, version, status, error) => {
		const answer = await post(method, params as Record<string, unknown>, version);
		expect(answer.status).toBe(status);
		expect(answer.body).toMatchObject({ id: 7, error });
	});
});

// server-everything registers some tools only for clients that declared the capability the
// tool needs, so its tool list shows which capabilities the server was told about.
const CAPABILITY_SETS = {
	none: {},
	sampling: { sampling: {} },
	elicitation: { elicitation: { form: {}, url: {} } },
	roots: { roots: {} },
} as const;

describe.each(['stdio image', 'HTTP-mode container'] as const)('through Hangar to the %s, the server sees the client\'s own capabilities', { timeout: 60_000 }, (kind) => {
	async function toolNames(url: string, capabilities: object): Promise<string[]> {
		const { client } = await connectLegacy(url, { revision: '2025-11-25', transport: 'streamable-http', capabilities });
		try {
			return (await client.listTools()).tools.map((tool) => tool.name).sort();
		} finally {
			await client.close();
		}
	}

	it.each(Object.keys(CAPABILITY_SETS) as Array<keyof typeof CAPABILITY_SETS>)('capabilities: %s', async (set) => {
		const direct = await toolNames(await hangar.direct(workloads.get('HTTP-mode container')!, 3001, '/mcp'), CAPABILITY_SETS[set]);
		expect(await toolNames(workloads.get(kind)!.url, CAPABILITY_SETS[set])).toEqual(direct);
	});
});

/** Two SDK clients on one shared stdio server, each recording what reaches it. */
interface Observed {
	client: Client;
	logs: string[];
	updates: string[];
}

async function observe(url: string, capabilities = {}): Promise<Observed> {
	const { client } = await connectLegacy(url, { revision: '2025-11-25', transport: 'streamable-http', capabilities });
	const observed: Observed = { client, logs: [], updates: [] };
	client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
		observed.logs.push(JSON.stringify(notification.params.data));
	});
	client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
		observed.updates.push(notification.params.uri);
	});
	return observed;
}

/**
 * Lets anything still travelling to `observed` arrive before asserting that something did not:
 * a round trip through the proxy, then a pause. (A slow machine can only make a defect go
 * unnoticed here, never fail a correct proxy.)
 */
async function settle(observed: Observed): Promise<void> {
	await observed.client.ping();
	await new Promise((resolve) => setTimeout(resolve, 1_000));
}

const RESOURCE = 'demo://resource/dynamic/text/1';

// The same rules against server-everything spoken to directly over Streamable HTTP, where each
// client has a server session of its own, show that the assertions hold for a server that
// keeps its clients apart; through Hangar, the clients share one stdio server.
const ISOLATION_TARGETS = {
	'server-everything directly (a server session per client)': async () => hangar.direct(workloads.get('HTTP-mode container')!, 3001, '/mcp'),
	'one stdio server shared through Hangar': async () => (await hangar.create({ name: 'isolation', ...SERVERS['stdio image'] })).url,
};

describe.each(Object.keys(ISOLATION_TARGETS) as Array<keyof typeof ISOLATION_TARGETS>)('two clients of %s are kept apart', { timeout: 90_000 }, (target) => {
	let url: string;
	const open: Observed[] = [];
	beforeAll(async () => {
		url = await ISOLATION_TARGETS[target]();
	}, 120_000);
	afterAll(async () => {
		await Promise.allSettled(open.map((observed) => observed.client.close()));
	});
	async function pair(capabilities = {}): Promise<[Observed, Observed]> {
		const clients = await Promise.all([observe(url, capabilities), observe(url, capabilities)]);
		open.push(...clients);
		return clients;
	}

	it('B never sees the log messages of A\'s requests', async () => {
		const [a, b] = await pair();
		await Promise.all([a.client.setLoggingLevel('debug'), b.client.setLoggingLevel('debug')]);
		const uri = 'demo://resource/static/document/features.md';
		// server-everything logs "Received Subscribe Resource request for URI: …" while it answers.
		await a.client.subscribeResource({ uri });
		try {
			await waitFor(async () => a.logs.some((log) => log.includes(uri)), 'A to receive the log message of its request');
			await settle(b);
			expect(b.logs.filter((log) => log.includes(uri))).toEqual([]);
		} finally {
			await a.client.unsubscribeResource({ uri });
		}
	});

	it('logging/setLevel is per session', async () => {
		const [a, b] = await pair();
		await a.client.setLoggingLevel('debug');
		await b.client.setLoggingLevel('error'); // the later one: a global level would now be "error"
		const forA = 'demo://resource/static/document/extension.md';
		const forB = 'demo://resource/static/document/instructions.md';
		try {
			await a.client.subscribeResource({ uri: forA });
			await waitFor(async () => a.logs.some((log) => log.includes(forA)), 'A to receive an info message at its level "debug"', 20_000);
			await b.client.subscribeResource({ uri: forB });
			await settle(b);
			expect(b.logs.filter((log) => log.includes(forB))).toEqual([]); // info is below B's "error"
		} finally {
			await Promise.all([a.client.unsubscribeResource({ uri: forA }), b.client.unsubscribeResource({ uri: forB })]);
		}
	});

	it('resources/updated reaches only subscribers, and B\'s unsubscribe does not stop A\'s updates', async () => {
		const [a, b] = await pair();
		await a.client.subscribeResource({ uri: RESOURCE });
		// server-everything then announces an update of every subscribed resource every 5 s.
		await a.client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
		try {
			await waitFor(async () => a.updates.filter((uri) => uri === RESOURCE).length >= 2, 'A to receive two updates of its resource', 30_000);
			await settle(b);
			expect(b.updates).toEqual([]);

			await b.client.subscribeResource({ uri: RESOURCE });
			await b.client.unsubscribeResource({ uri: RESOURCE });
			const before = a.updates.length;
			await waitFor(async () => a.updates.length > before, 'A to receive an update after B unsubscribed', 30_000);
		} finally {
			await a.client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
			await a.client.unsubscribeResource({ uri: RESOURCE });
		}
	});

	it('a task belongs to the session that created it', async () => {
		const [a, b] = await pair();
		const created = await a.client.request(
			{ method: 'tools/call', params: { name: 'simulate-research-query', arguments: { topic: 'isolation' }, task: { ttl: 60_000 } } },
			CreateTaskResultSchema,
		);
		const { taskId } = created.task;
		expect((await a.client.experimental.tasks.getTask(taskId)).taskId).toBe(taskId);
		expect((await a.client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).toContain(taskId);

		expect((await b.client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).not.toContain(taskId);
		await expect(b.client.experimental.tasks.getTask(taskId)).rejects.toThrow();
		await expect(b.client.experimental.tasks.cancelTask(taskId)).rejects.toThrow();
		expect((await a.client.experimental.tasks.getTask(taskId)).status).not.toBe('cancelled');
	});

	it('each server request reaches the client whose call caused it, under concurrency', async () => {
		// Enough calls at once that routing by anything but the causing request goes wrong somewhere.
		const CALLS = 12;
		const [a, b] = await pair({ sampling: {} });
		const asked = { A: [] as string[], B: [] as string[] };
		for (const [who, observed] of [['A', a], ['B', b]] as const) {
			observed.client.setRequestHandler(CreateMessageRequestSchema, async (request): Promise<CreateMessageResult> => {
				const text = JSON.stringify(request.params.messages);
				asked[who].push(text);
				return { role: 'assistant', model: 'test-model', content: { type: 'text', text: `sampled by ${who}` } };
			});
		}
		const calls = (['A', 'B'] as const).flatMap((who) =>
			Array.from({ length: CALLS }, async (_, index) => {
				const client = who === 'A' ? a.client : b.client;
				const result = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: `${who}-${index}`, maxTokens: 10 } });
				return { who, text: JSON.stringify(result) };
			}),
		);
		for (const { who, text } of await Promise.all(calls)) expect(text).toContain(`sampled by ${who}`);
		expect(asked.A).toHaveLength(CALLS);
		expect(asked.B).toHaveLength(CALLS);
		expect(asked.A.every((text) => /A-\d/.test(text) && !/B-\d/.test(text))).toBe(true);
		expect(asked.B.every((text) => /B-\d/.test(text) && !/A-\d/.test(text))).toBe(true);
	});
});

/** Established TCP connections to port 3001 inside the workload's container, from /proc. */
async function serverConnections(workload: string): Promise<number> {
	const exec = promisify(execFile);
	const { stdout: names } = await exec('docker', ['ps', '--filter', `name=hangar-${workload}-`, '--format', '{{.Names}}']);
	const container = names.trim().split('\n')[0]!;
	// Node is what the image surely has; /proc/net/tcp6 is missing where IPv6 is off.
	const read = "const fs = require('fs'); for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) if (fs.existsSync(f)) process.stdout.write(fs.readFileSync(f, 'utf8'))";
	const { stdout } = await exec('docker', ['exec', container, 'node', '-e', read]);
	return stdout.split('\n').filter((line) => {
		const [, local, , state] = line.trim().split(/\s+/);
		return local?.endsWith(':0BB9') && state === '01';
	}).length;
}
