/**
 * The proxy as a faithful MCP intermediary (issue 13), with the real stdio image and the
 * official SDK 1.x client: each client told the revision it asked for and the server shown
 * only the capabilities it declared; clients kept apart on a shared stdio server; the
 * isolated session mode; resumable streams and calls that survive a dropped connection;
 * timeouts that progress resets and elicitation pauses; and, against a fixture server with
 * habits the images cannot show on demand, SSE polling, the order of `initialized` and the
 * cancellation of a timed-out call over HTTP.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
	CreateMessageRequestSchema,
	ElicitRequestSchema,
	ListRootsRequestSchema,
	LoggingMessageNotificationSchema,
	ResourceUpdatedNotificationSchema,
	type ClientCapabilities,
	type CreateMessageResult,
} from '@modelcontextprotocol/sdk/types.js';
import { CreateWorkload, GetWorkload, ListWorkloads } from '../protocol/protocol.workloads.js';
import { connect, EVERYTHING, removeAllWorkloads, startFixture, startRemoteServer, textOf, uniqueName, waitFor, type RemoteServer } from './fixtures/workloads/helpers.js';
import { connectModern } from './support/mcpClients.js';
import { MODERN } from './support/proxyTargets.js';
import { createTestHome, type TestHome } from './support/home.js';
import { startServe, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';

const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'] as const;

let home: TestHome;
let serve: ServeProcess;
const fixtures: RemoteServer[] = [];

beforeAll(async () => {
	home = await createTestHome();
	serve = await startServe({ ...home.env, HANGAR_PROXY_KEEPALIVE_MS: '500' });
});

afterAll(async () => {
	await removeAllWorkloads(serve.url);
	for (const fixture of fixtures) fixture.stop();
	await serve?.stop();
	await home?.dispose();
}, 120_000);

async function create(params: Record<string, unknown>): Promise<{ name: string; url: string }> {
	const name = uniqueName(String(params.name));
	const created = await callRest(serve.url, CreateWorkload, { ...params, name });
	expect(created.status, JSON.stringify(created.body)).toBe(201);
	const { workloads } = (await callRest(serve.url, ListWorkloads, {})).body as { workloads: Array<{ name: string; url: string }> };
	return { name, url: workloads.find((workload) => workload.name === name)!.url };
}

const origin = (url: string) => new URL(url).origin;

/** An SDK client that asks for `revision` (the SDK asks for its latest), and the revision it was told. */
async function connectAt(url: string, transport: 'streamable-http' | 'sse', revision: string, capabilities: ClientCapabilities = {}) {
	const client = new Client({ name: 'fidelity-test', version: '1.0.0' }, { capabilities });
	const wire = transport === 'sse' ? new SSEClientTransport(new URL(`${origin(url)}/sse`)) : new StreamableHTTPClientTransport(new URL(url));
	const send = wire.send.bind(wire) as (message: unknown, options?: unknown) => Promise<void>;
	wire.send = (message: Parameters<typeof wire.send>[0], options?: unknown) => {
		const request = message as { method?: string; params?: Record<string, unknown> };
		return send(request.method === 'initialize' ? ({ ...message, params: { ...request.params, protocolVersion: revision } } as typeof message) : message, options);
	};
	let negotiated: string | undefined;
	const setVersion = (wire as { setProtocolVersion?: (version: string) => void }).setProtocolVersion?.bind(wire);
	(wire as { setProtocolVersion?: (version: string) => void }).setProtocolVersion = (version) => {
		negotiated = version;
		setVersion?.(version);
	};
	await client.connect(wire);
	return { client, negotiated: () => negotiated };
}

/** The processes running in a workload's container. */
async function processCount(name: string): Promise<number> {
	const run = promisify(execFile);
	const { stdout: id } = await run('docker', ['ps', '-q', '--filter', `label=hangar.name=${name}`]);
	const { stdout } = await run('docker', ['top', id.trim(), '-o', 'pid']);
	return stdout.trim().split('\n').length - 1;
}

/** Reads an event stream until `done` says so; returns the JSON-RPC messages with their event ids. */
async function readEvents(response: Response, done: (messages: Array<{ id?: string; message: Record<string, unknown> }>) => boolean) {
	const reader = response.body!.getReader();
	const decoder = new TextDecoder();
	const messages: Array<{ id?: string; message: Record<string, unknown> }> = [];
	let buffered = '';
	while (!done(messages)) {
		const { value, done: ended } = await reader.read();
		if (ended) break;
		buffered += decoder.decode(value, { stream: true });
		let end = buffered.indexOf('\n\n');
		while (end >= 0) {
			const block = buffered.slice(0, end);
			buffered = buffered.slice(end + 2);
			end = buffered.indexOf('\n\n');
			const data = block.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).join('');
			const id = block.split('\n').find((line) => line.startsWith('id:'))?.slice(3).trim();
			if (data) messages.push({ id, message: JSON.parse(data) as Record<string, unknown> });
		}
	}
	await reader.cancel().catch(() => undefined);
	return messages;
}

describe('a shared stdio server', { timeout: 180_000 }, () => {
	let workload: { name: string; url: string };
	beforeAll(async () => {
		workload = await create({ name: 'fidelity', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'] });
	}, 120_000);

	it.each(REVISIONS.flatMap((revision) => (['streamable-http', 'sse'] as const).map((transport) => [revision, transport] as const)))(
		'tells a client asking for %s over %s that revision, and serves it',
		async (revision, transport) => {
			const { client, negotiated } = await connectAt(workload.url, transport, revision);
			try {
				expect(negotiated()).toBe(revision);
				expect(textOf(await client.callTool({ name: 'echo', arguments: { message: revision } }))).toBe(`Echo: ${revision}`);
			} finally {
				await client.close();
			}
		},
	);

	it('serves an SDK 2.x client at 2026-07-28, stateless, translating for the 2025 server', async () => {
		const client = await connectModern(workload.url, { sampling: {} });
		try {
			expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
			expect(client.getServerVersion()?.name).toBe('mcp-servers/everything');
			const names = (await client.listTools()).tools.map((tool) => tool.name);
			expect(names).toContain('echo');
			// The server is told the client can sample: its requests reach the client in input rounds.
			expect(names).toContain('trigger-sampling-request');
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'stateless' } }))).toBe('Echo: stateless');
		} finally {
			await client.close();
		}
	});

	it('shows the server only the capabilities each client declared', async () => {
		const sampler = await connect(workload.url, 'streamable-http', { sampling: {} });
		const plain = await connect(workload.url, 'streamable-http');
		const rooted = await connect(workload.url, 'streamable-http', { roots: {} });
		rooted.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///work/project', name: 'project' }] }));
		try {
			const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);
			expect(await names(sampler)).toContain('trigger-sampling-request');
			expect(await names(plain)).not.toContain('trigger-sampling-request');
			expect(await names(plain)).not.toContain('trigger-elicitation-request');
			expect(await names(rooted)).toContain('get-roots-list');
			expect(textOf(await rooted.callTool({ name: 'get-roots-list', arguments: {} }))).toContain('file:///work/project');
		} finally {
			await Promise.all([sampler.close(), plain.close(), rooted.close()]);
		}
	});

	it('sends every server request to the client whose call caused it, under concurrency', async () => {
		const clients = await Promise.all(['first', 'second', 'third'].map(async (who) => {
			const client = await connect(workload.url, 'streamable-http', { sampling: {} });
			client.setRequestHandler(CreateMessageRequestSchema, async (): Promise<CreateMessageResult> => ({ role: 'assistant', model: 'test', content: { type: 'text', text: `sampled by ${who}` } }));
			return { who, client };
		}));
		try {
			const results = await Promise.all(
				clients.flatMap(({ who, client }) =>
					Array.from({ length: 4 }, async () => ({ who, text: JSON.stringify(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } })) })),
				),
			);
			for (const { who, text } of results) expect(text).toContain(`sampled by ${who}`);
		} finally {
			await Promise.all(clients.map(({ client }) => client.close()));
		}
	});

	it('lets other clients list and call while one client leaves an elicitation unanswered', async () => {
		let answer!: () => void;
		const answered = new Promise<void>((resolve) => (answer = resolve));
		let asked!: () => void;
		const elicited = new Promise<void>((resolve) => (asked = resolve));
		const holder = await connect(workload.url, 'streamable-http', { elicitation: {} });
		holder.setRequestHandler(ElicitRequestSchema, async () => {
			asked();
			await answered;
			return { action: 'decline' };
		});
		// The same handshake: the same shared server process.
		const other = await connect(workload.url, 'streamable-http', { elicitation: {} });
		try {
			const held = holder.callTool({ name: 'trigger-elicitation-request', arguments: {} });
			held.catch(() => undefined); // awaited below; never unhandled when the test fails first
			await elicited;
			// Not a timing threshold: without the fix these never answer while the holder is held.
			const stalled = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the other client was stalled by the held call')), 20_000));
			const tools = await Promise.race([other.listTools(), stalled]);
			expect(tools.tools.map((tool) => tool.name)).toContain('echo');
			expect(textOf(await Promise.race([other.callTool({ name: 'echo', arguments: { message: 'not stalled' } }), stalled]))).toBe('Echo: not stalled');
			answer();
			expect(JSON.stringify(await held)).toMatch(/decline/i);
		} finally {
			answer();
			await Promise.all([holder.close(), other.close()]);
		}
	});

	it('keeps each client\'s log level and resource subscriptions its own', async () => {
		const quiet = await connect(workload.url, 'streamable-http');
		const chatty = await connect(workload.url, 'streamable-http');
		const levels = { quiet: [] as string[], chatty: [] as string[] };
		const updates = { quiet: 0, chatty: 0 };
		quiet.setNotificationHandler(LoggingMessageNotificationSchema, (message) => void levels.quiet.push(message.params.level));
		chatty.setNotificationHandler(LoggingMessageNotificationSchema, (message) => void levels.chatty.push(message.params.level));
		quiet.setNotificationHandler(ResourceUpdatedNotificationSchema, () => void updates.quiet++);
		chatty.setNotificationHandler(ResourceUpdatedNotificationSchema, () => void updates.chatty++);
		try {
			await quiet.setLoggingLevel('emergency');
			await chatty.setLoggingLevel('debug');
			const uri = 'demo://resource/static/document/architecture.md';
			await quiet.subscribeResource({ uri });
			await chatty.subscribeResource({ uri });
			// The other client's unsubscribe must not end this one's updates.
			await chatty.unsubscribeResource({ uri });
			await chatty.callTool({ name: 'toggle-simulated-logging', arguments: {} });
			await chatty.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
			await waitFor(async () => levels.chatty.filter((level) => level !== 'emergency').length >= 2 && updates.quiet >= 1, 'log messages and a resource update', 90_000);
			expect(levels.quiet.filter((level) => level !== 'emergency')).toEqual([]);
			expect(updates.chatty).toBe(0);
			await chatty.callTool({ name: 'toggle-simulated-logging', arguments: {} });
			await chatty.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
		} finally {
			await Promise.all([quiet.close(), chatty.close()]);
		}
	});

	it('sends a client that never asked for logs none of another client\'s log messages', async () => {
		const asking = await connect(workload.url, 'streamable-http');
		const silent = await connect(workload.url, 'streamable-http');
		const levels = { asking: [] as string[], silent: [] as string[] };
		asking.setNotificationHandler(LoggingMessageNotificationSchema, (message) => void levels.asking.push(message.params.level));
		silent.setNotificationHandler(LoggingMessageNotificationSchema, (message) => void levels.silent.push(message.params.level));
		try {
			await asking.setLoggingLevel('debug');
			expect(textOf(await silent.callTool({ name: 'echo', arguments: { message: 'here' } }))).toBe('Echo: here');
			// One message while the call is in flight, then one every 5 s that no call is in flight for.
			await asking.callTool({ name: 'toggle-simulated-logging', arguments: {} });
			try {
				await waitFor(async () => levels.asking.length >= 3, 'the asking client to receive log messages', 90_000);
			} finally {
				await asking.callTool({ name: 'toggle-simulated-logging', arguments: {} });
			}
			expect(levels.silent).toEqual([]);
		} finally {
			await Promise.all([asking.close(), silent.close()]);
		}
	});

	it('gives a client the answer of a call whose connection dropped: on a resumed stream, or on its GET stream', async () => {
		const post = (body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
			fetch(workload.url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body), signal });
		const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
		await init.text();
		const headers = { 'Mcp-Session-Id': init.headers.get('mcp-session-id')!, 'MCP-Protocol-Version': '2025-11-25' };
		expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(202);

		// A call with progress streams events with ids; the client drops it after the first and resumes.
		const dropped = new AbortController();
		const call = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 2, steps: 4 }, _meta: { progressToken: 'p' } } }, headers, dropped.signal);
		const first = await readEvents(call, (messages) => messages.length >= 1);
		expect(first[0]!.message.method).toBe('notifications/progress');
		expect(first[0]!.id).toBeTruthy();
		dropped.abort();
		const resumed = await fetch(workload.url, { headers: { ...headers, Accept: 'text/event-stream', 'Last-Event-ID': first[0]!.id! } });
		expect(resumed.status).toBe(200);
		const rest = await readEvents(resumed, (messages) => messages.some((item) => item.message.id === 1));
		expect(rest.map((item) => (item.message.params as { progress?: number } | undefined)?.progress).filter(Boolean)).toEqual([2, 3, 4]);
		expect(JSON.stringify(rest.at(-1)!.message)).toContain('Long running operation completed');

		// A call answered as plain JSON has no event id: its answer goes to the session's GET stream.
		const stream = await fetch(workload.url, { headers: { ...headers, Accept: 'text/event-stream' } });
		const plain = new AbortController();
		const lost = post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 1 } } }, headers, plain.signal);
		setTimeout(() => plain.abort(), 200);
		await lost.catch(() => undefined);
		const late = await readEvents(stream, (messages) => messages.some((item) => item.message.id === 2));
		expect(JSON.stringify(late.at(-1)!.message)).toContain('Long running operation completed');
	});

	it('answers a call in flight when its session ends, with an error rather than silence', async () => {
		const post = (body: unknown, headers: Record<string, string> = {}) =>
			fetch(workload.url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });
		const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
		await init.text();
		const headers = { 'Mcp-Session-Id': init.headers.get('mcp-session-id')!, 'MCP-Protocol-Version': '2025-11-25' };
		await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
		// A plain JSON reply (no progress token) is pending when the session goes.
		const call = post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 1 } } }, headers);
		await new Promise((resolve) => setTimeout(resolve, 300));
		expect((await fetch(workload.url, { method: 'DELETE', headers })).status).toBe(200);
		const answer = (await (await call).json()) as { id: number; error?: { message: string } };
		expect(answer.id).toBe(1);
		expect(answer.error?.message).toMatch(/cancelled|session ended/);
	});
});

describe('held calls on a shared stdio server', { timeout: 180_000 }, () => {
	// A workload of its own: its process count is not disturbed by other tests' processes ending.
	let workload: { name: string; url: string };
	beforeAll(async () => {
		workload = await create({ name: 'held', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'] });
	}, 120_000);

	it('gives one caller at most 4 processes beside the shared one for calls a held call would stall, and ends them', async () => {
		const before = await processCount(workload.name);
		let answer!: () => void;
		const answered = new Promise<void>((resolve) => (answer = resolve));
		const clients = await Promise.all(Array.from({ length: 6 }, async () => {
			const client = await connect(workload.url, 'streamable-http', { elicitation: {} });
			let asked!: () => void;
			const elicited = new Promise<void>((resolve) => (asked = resolve));
			client.setRequestHandler(ElicitRequestSchema, async () => {
				asked();
				await answered;
				return { action: 'decline' };
			});
			return { client, elicited };
		}));
		try {
			// The first holds the shared process; the next four each hold a process of their own.
			const held = [];
			for (const { client, elicited } of clients.slice(0, 5)) {
				const call = client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
				call.catch(() => undefined); // awaited below
				held.push(call);
				await elicited;
			}
			expect(await processCount(workload.name)).toBe(before + 4);
			// The sixth would need a fifth: refused with a clear error, not left waiting.
			await expect(clients[5]!.client.callTool({ name: 'trigger-elicitation-request', arguments: {} })).rejects.toThrow(/-32050.*4 server processes of its own/);
			answer();
			for (const result of await Promise.all(held)) expect(JSON.stringify(result)).toMatch(/decline/i);
			await waitFor(async () => (await processCount(workload.name)) === before, 'the side processes to end', 30_000);
		} finally {
			answer();
			await Promise.all(clients.map(({ client }) => client.close()));
		}
	});
});

describe('the isolated session mode', { timeout: 180_000 }, () => {
	it('runs one server process per client session, ended with the session', async () => {
		const workload = await create({ name: 'isolated', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], session_mode: 'isolated' });
		const detail = (await callRest(serve.url, GetWorkload, { name: workload.name })).body as { session_mode?: string };
		expect(detail.session_mode).toBe('isolated');
		const before = await processCount(workload.name);
		const first = await connectAt(workload.url, 'streamable-http', '2025-06-18', { sampling: {} });
		const second = await connectAt(workload.url, 'streamable-http', '2025-06-18', { sampling: {} });
		try {
			expect(first.negotiated()).toBe('2025-06-18');
			expect(await processCount(workload.name)).toBe(before + 2);
			await first.client.setLoggingLevel('emergency');
			expect(textOf(await second.client.callTool({ name: 'echo', arguments: { message: 'alone' } }))).toBe('Echo: alone');
		} finally {
			await Promise.all([first, second].map(async ({ client }) => {
				await (client.transport as StreamableHTTPClientTransport).terminateSession();
				await client.close();
			}));
		}
		await waitFor(async () => (await processCount(workload.name)) === before, 'the session processes to end', 30_000);
	});
});

describe('request timeouts', { timeout: 180_000 }, () => {
	let workload: { name: string; url: string };
	beforeAll(async () => {
		workload = await create({ name: 'timeouts', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], request_timeout: 4 });
	}, 120_000);

	it('lets progress extend a call past the request timeout', async () => {
		const client = await connect(workload.url, 'streamable-http');
		try {
			const progress: number[] = [];
			const result = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 10, steps: 10 } }, undefined, { onprogress: (update) => progress.push(update.progress) });
			expect(textOf(result)).toContain('completed');
			expect(progress).toHaveLength(10);
		} finally {
			await client.close();
		}
	});

	it('answers a call the server is silent on with a timeout, and the session goes on', async () => {
		const client = await connect(workload.url, 'streamable-http');
		try {
			// No progress token, so no progress: 10 s of silence against the proxy's 4 s timeout (the client's own is 30 s).
			await expect(client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 10, steps: 2 } }, undefined, { timeout: 30_000 })).rejects.toThrow(/Request timed out: the MCP server did not answer within 4 s/);
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'after' } }))).toBe('Echo: after');
		} finally {
			await client.close();
		}
	});

	it('pauses the request timeout while the user answers an elicitation', async () => {
		const client = await connect(workload.url, 'streamable-http', { elicitation: {} });
		client.setRequestHandler(ElicitRequestSchema, async () => {
			await new Promise((resolve) => setTimeout(resolve, 7_000));
			return { action: 'decline' };
		});
		try {
			const result = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
			expect(JSON.stringify(result)).toMatch(/decline/i);
		} finally {
			await client.close();
		}
	});
});

describe('a 2025 HTTP server and a 2026-07-28 client', { timeout: 60_000 }, () => {
	it('translates the stateless requests into a legacy session upstream', async () => {
		const remote = await startRemoteServer('streamable');
		fixtures.push(remote);
		const workload = await create({ name: 'modern-client', url: remote.url });
		const client = await connectModern(workload.url);
		try {
			expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'new' } }))).toBe('remote echo: new');
		} finally {
			await client.close();
		}
	});
});

describe('a server that speaks only 2026-07-28', { timeout: 120_000 }, () => {
	let workload: { name: string; url: string };
	beforeAll(async () => {
		workload = await create({ name: 'modern', image: MODERN, transport: 'streamable-http', target_port: 3001 });
	}, 120_000);

	it.each(['2024-11-05', '2025-11-25'])('serves a %s client, translating the handshake, results and input requests', async (revision) => {
		const { client, negotiated } = await connectAt(workload.url, 'streamable-http', revision, { elicitation: {} });
		client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada' } }));
		try {
			expect(negotiated()).toBe(revision);
			expect(client.getServerVersion()?.name).toBe('hangar-fixture-2026');
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: revision } }))).toBe(`Echo: ${revision}`);
			// The server's input-required result became an elicitation request to this client.
			expect(textOf(await client.callTool({ name: 'ask-name', arguments: {} }))).toBe('Hello, Ada');
		} finally {
			await client.close();
		}
	});

	it('serves a 2026-07-28 client', async () => {
		const client = await connectModern(workload.url);
		try {
			expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'modern' } }))).toBe('Echo: modern');
		} finally {
			await client.close();
		}
	});
});

describe('an HTTP server with SSE polling and a slow handshake', { timeout: 120_000 }, () => {
	let fixture: RemoteServer;
	let workload: { name: string; url: string };
	const received = async () => (await (await fetch(`${origin(fixture.url)}/log`)).json()) as string[];

	beforeAll(async () => {
		fixture = await startPollingServer();
		fixtures.push(fixture);
		workload = await create({ name: 'polling', url: fixture.url, request_timeout: 2 });
	}, 60_000);

	it('delivers notifications/initialized before the request that follows it', async () => {
		const client = await connect(workload.url, 'streamable-http');
		try {
			expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['poll', 'hang']);
		} finally {
			await client.close();
		}
	});

	it('follows a server that primes an event id, closes the stream and answers on the resumed GET', async () => {
		const client = await connect(workload.url, 'streamable-http');
		try {
			expect(textOf(await client.callTool({ name: 'poll', arguments: {} }))).toBe('answered after a poll');
			expect((await received()).some((line) => line.startsWith('resumed poll-'))).toBe(true);
		} finally {
			await client.close();
		}
	});

	it('tells the server when a call times out', async () => {
		const client = await connect(workload.url, 'streamable-http');
		try {
			await expect(client.callTool({ name: 'hang', arguments: {} })).rejects.toThrow(/timed out/i);
			await waitFor(async () => (await received()).some((line) => line.startsWith('notifications/cancelled')), 'notifications/cancelled upstream');
		} finally {
			await client.close();
		}
	});
});

function startPollingServer(): Promise<RemoteServer> {
	return startFixture(fileURLToPath(new URL('./fixtures/proxy/polling-server.mjs', import.meta.url)));
}
