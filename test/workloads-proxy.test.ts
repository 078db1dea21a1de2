/**
 * The workload proxy with real MCP servers and the official SDK client: a stdio server in a
 * container (shared by several clients), sse and streamable-http servers in containers, and
 * remote URLs, each through Streamable HTTP and legacy SSE; tool filters and overrides; the
 * request timeout; and the transport's rules on the wire.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateMessageRequestSchema, type CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import { CreateWorkload, GetWorkloadProxyLogs, ListWorkloads } from '../protocol/protocol.workloads.js';
import { connect, EVERYTHING, MEMORY, removeAllWorkloads, startRemoteServer, textOf, uniqueName, type RemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { startServe, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';

let home: TestHome;
let serve: ServeProcess;
const remotes: RemoteServer[] = [];

beforeAll(async () => {
	home = await createTestHome();
	serve = await startServe({ ...home.env, HANGAR_PROXY_KEEPALIVE_MS: '500' });
});

afterAll(async () => {
	await removeAllWorkloads(serve.url);
	for (const remote of remotes) remote.stop();
	await serve?.stop();
	await home?.dispose();
}, 120_000);

/** Creates a workload over REST and returns its client URL. */
async function create(params: Record<string, unknown>): Promise<{ name: string; port: number; url: string }> {
	const name = uniqueName(String(params.name));
	const created = await callRest(serve.url, CreateWorkload, { ...params, name });
	expect(created.status, JSON.stringify(created.body)).toBe(201);
	const { workloads } = (await callRest(serve.url, ListWorkloads, {})).body as { workloads: Array<{ name: string; url: string; status: string }> };
	const listed = workloads.find((workload) => workload.name === name)!;
	expect(listed.status).toBe('running');
	return { name, port: (created.body as { port: number }).port, url: listed.url };
}

const base = (url: string) => new URL(url).origin;

describe('a stdio server in a container', { timeout: 120_000 }, () => {
	let workload: { name: string; port: number; url: string };
	beforeAll(async () => {
		workload = await create({ name: 'stdio', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'] });
		expect(workload.url).toBe(`http://127.0.0.1:${workload.port}/mcp`);
		// The first client's handshake is the container's own process's: an SDK client's, whichever test comes first.
		await (await connect(workload.url, 'streamable-http')).close();
	}, 120_000);

	/** The pids of the server processes in the workload's container. */
	async function serverPids(): Promise<string[]> {
		const run = promisify(execFile);
		const { stdout: container } = await run('docker', ['ps', '-q', '--filter', `label=hangar.name=${workload.name}`]);
		const { stdout: processes } = await run('docker', ['top', container.trim(), '-eo', 'pid,args']);
		return processes.split('\n').flatMap((line) => /^\s*(\d+)\s+node\s.*server-everything/.exec(line)?.[1] ?? []);
	}

	it.each(['streamable-http', 'sse'] as const)('serves a %s client: initialize, tools/list, tools/call', async (transport) => {
		const client = await connect(transport === 'sse' ? `${base(workload.url)}/sse` : workload.url, transport);
		try {
			expect(client.getServerVersion()?.name).toBe('mcp-servers/everything');
			const { tools } = await client.listTools();
			expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: `via ${transport}` } }))).toBe(`Echo: via ${transport}`);
		} finally {
			await client.close();
		}
	});

	it('multiplexes concurrent clients over the one server, initialised once', async () => {
		// A handshake no other test uses gets a server process of its own beside the container's,
		// whatever processes other tests' clients keep.
		const handshake = { experimental: { multiplexed: {} } };
		const before = await serverPids();
		const clients = await Promise.all([
			connect(workload.url, 'streamable-http', handshake),
			connect(workload.url, 'streamable-http', handshake),
			connect(`${base(workload.url)}/sse`, 'sse', handshake),
		]);
		try {
			// Every SDK client numbers its requests from 0: the same ids travel at once.
			const answers = await Promise.all(
				clients.flatMap((client, index) =>
					Array.from({ length: 20 }, async (_, call) => textOf(await client.callTool({ name: 'get-sum', arguments: { a: index * 1000, b: call } }))),
				),
			);
			const expected = clients.flatMap((_, index) => Array.from({ length: 20 }, (_, call) => `The sum of ${index * 1000} and ${call} is ${index * 1000 + call}.`));
			expect(answers).toEqual(expected);
			// One server process, started for them, served them all (the log no longer shows the protocol on stdout).
			expect((await serverPids()).filter((pid) => !before.includes(pid))).toHaveLength(1);
		} finally {
			await Promise.all(clients.map((client) => client.close()));
		}
		// Twenty calls in flight on one session are no listener leak.
		const proxyLogs = (await callRest(serve.url, GetWorkloadProxyLogs, { name: workload.name })).body as string;
		expect(proxyLogs).not.toContain('MaxListenersExceededWarning');
	});

	it('routes a server request to the client whose call caused it', async () => {
		const caller = await connect(workload.url, 'streamable-http', { sampling: {} });
		const bystander = await connect(workload.url, 'streamable-http', { sampling: {} });
		const asked: string[] = [];
		const answer = (who: string) => async (): Promise<CreateMessageResult> => {
			asked.push(who);
			return { role: 'assistant', model: 'test-model', content: { type: 'text', text: `sampled by ${who}` } };
		};
		caller.setRequestHandler(CreateMessageRequestSchema, answer('caller'));
		bystander.setRequestHandler(CreateMessageRequestSchema, answer('bystander'));
		try {
			const result = await caller.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 10 } });
			expect(JSON.stringify(result)).toContain('sampled by caller');
			expect(asked).toEqual(['caller']);
		} finally {
			await Promise.all([caller.close(), bystander.close()]);
		}
	});

	it('relays progress under the caller\'s own token', async () => {
		const client = await connect(workload.url, 'streamable-http');
		try {
			const progress: number[] = [];
			const result = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 3 } }, undefined, {
				onprogress: (update) => progress.push(update.progress),
			});
			expect(textOf(result)).toContain('completed');
			expect(progress).toEqual([1, 2, 3]);
		} finally {
			await client.close();
		}
	});

	it('follows the Streamable HTTP rules on the wire', async () => {
		const endpoint = workload.url;
		const post = (body: unknown, headers: Record<string, string> = {}) =>
			fetch(endpoint, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });
		const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
		expect(init.status).toBe(200);
		const session = init.headers.get('mcp-session-id')!;
		expect(session).toMatch(/^[\x21-\x7e]+$/);
		// Another revision than the SDK clients': its own server process starts first, which may take
		// long enough for the reply to turn into an event stream.
		const text = await init.text();
		const body = init.headers.get('content-type')?.includes('text/event-stream') ? text.split('\n').filter((line) => line.startsWith('data:')).at(-1)!.slice(5) : text;
		expect((JSON.parse(body) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe('mcp-servers/everything');

		const withSession = { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' };
		expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, withSession)).status).toBe(202);
		expect((await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' })).status).toBe(400); // no session
		expect((await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'Mcp-Session-Id': 'unknown' })).status).toBe(404);
		expect((await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { ...withSession, 'MCP-Protocol-Version': '1999-01-01' })).status).toBe(400);
		const ping = await post({ jsonrpc: '2.0', id: 3, method: 'ping' }, withSession);
		expect(await ping.json()).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
		// A batch (2025-03-26) is answered as one JSON array; initialize never comes in one.
		const batch = await post([{ jsonrpc: '2.0', id: 'a', method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, { jsonrpc: '2.0', id: 'b', method: 'ping' }], withSession);
		expect(batch.headers.get('mcp-session-id')).toBe(session);
		expect(await batch.json()).toEqual([{ jsonrpc: '2.0', id: 'a', result: {} }, { jsonrpc: '2.0', id: 'b', result: {} }]);
		expect((await post([{ jsonrpc: '2.0', method: 'notifications/roots/list_changed' }], withSession)).status).toBe(202);
		expect((await post([], withSession)).status).toBe(400);
		expect((await post([{ jsonrpc: '2.0', id: 'c', method: 'initialize', params: {} }], withSession)).status).toBe(400);
		expect((await post([{ jsonrpc: '2.0', id: 'd', method: 'ping' }, { not: 'json-rpc' }], withSession)).status).toBe(400);
		const stray = await fetch(endpoint, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'x' });
		expect(stray.status).toBe(415);
		const foreign = await post({ jsonrpc: '2.0', id: 4, method: 'ping' }, { ...withSession, Origin: 'https://evil.example' });
		expect(foreign.status).toBe(403);
		// A page on another port of this machine is another origin: no portless loopback origin passes.
		for (const origin of ['http://localhost', 'https://localhost', 'http://127.0.0.1']) {
			expect((await post({ jsonrpc: '2.0', id: 4, method: 'ping' }, { ...withSession, Origin: origin })).status, origin).toBe(403);
		}
		expect((await post({ jsonrpc: '2.0', id: 4, method: 'ping' }, { ...withSession, Origin: base(endpoint) })).status).toBe(200);

		expect((await fetch(endpoint, { method: 'DELETE', headers: withSession })).status).toBe(200);
		expect((await post({ jsonrpc: '2.0', id: 5, method: 'ping' }, withSession)).status).toBe(404);

		const health = await fetch(`${base(endpoint)}/health`);
		expect(health.status).toBe(200);
		expect(await health.json()).toMatchObject({ status: 'ok', backend: 'connected' });
	});
});

describe('sse and streamable-http servers in containers', { timeout: 120_000 }, () => {
	it.each([
		['sse', 'sse'],
		['streamable-http', 'streamableHttp'],
	] as const)('a %s server answers clients of both protocols', async (transport, mode) => {
		const workload = await create({ name: transport, image: EVERYTHING, transport, target_port: 3001, cmd_arguments: [mode] });
		expect(workload.url).toBe(transport === 'sse' ? `http://127.0.0.1:${workload.port}/sse#${workload.name}` : `http://127.0.0.1:${workload.port}/mcp`);
		for (const client of [await connect(`${base(workload.url)}/mcp`, 'streamable-http'), await connect(`${base(workload.url)}/sse`, 'sse')]) {
			try {
				expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
				expect(textOf(await client.callTool({ name: 'echo', arguments: { message: transport } }))).toBe(`Echo: ${transport}`);
			} finally {
				await client.close();
			}
		}
	});
});

describe('remote servers', { timeout: 60_000 }, () => {
	it('proxies a remote Streamable HTTP server on its own path, adding configured headers', async () => {
		const remote = await startRemoteServer('streamable');
		remotes.push(remote);
		const workload = await create({ name: 'remote', url: remote.url, header_forward: { add_plaintext_headers: { 'X-Tenant': 'acme' } } });
		expect(workload.url).toBe(`http://127.0.0.1:${workload.port}/api/mcp`);
		const token = { Authorization: 'Bearer the-client-token' };
		for (const client of [await connect(workload.url, 'streamable-http', {}, token), await connect(`${base(workload.url)}/sse`, 'sse', {}, token)]) {
			try {
				expect(client.getServerVersion()?.name).toBe('remote-fixture');
				expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo', 'whoami', 'authorization']);
				// The client's own credentials never travel upstream.
				expect(textOf(await client.callTool({ name: 'authorization', arguments: {} }))).toBe('none');
				expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'hi' } }))).toBe('remote echo: hi');
				expect(textOf(await client.callTool({ name: 'whoami', arguments: {} }))).toBe('acme');
			} finally {
				await client.close();
			}
		}
	});

	it('accepts a browser origin listed in allowed_origins, and still refuses the others; refuses a malformed origin by its field', async () => {
		const remote = await startRemoteServer('streamable');
		remotes.push(remote);
		const workload = await create({ name: 'origins', url: remote.url, allowed_origins: ['http://localhost:6274'] });
		const ping = (origin: string) =>
			fetch(workload.url, {
				method: 'POST',
				headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Origin: origin },
				body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'web', version: '1' } } }),
			});
		expect((await ping('http://localhost:6274')).status).toBe(200);
		expect((await ping('http://localhost:6275')).status).toBe(403);
		expect((await ping('https://evil.example')).status).toBe(403);

		const refused = await callRest(serve.url, CreateWorkload, { name: uniqueName('origins-bad'), url: remote.url, allowed_origins: ['http://localhost:6274/app'] });
		expect(refused.status).toBe(400);
		expect(JSON.stringify(refused.body)).toContain('allowed_origins[0]');
	});

	it('proxies a remote legacy SSE server', async () => {
		const remote = await startRemoteServer('sse');
		remotes.push(remote);
		const workload = await create({ name: 'remote-sse', url: remote.url, transport: 'sse' });
		expect(workload.url).toBe(`http://127.0.0.1:${workload.port}/sse#${workload.name}`);
		for (const client of [await connect(`${base(workload.url)}/mcp`, 'streamable-http'), await connect(workload.url, 'sse')]) {
			try {
				expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'old' } }))).toBe('remote echo: old');
			} finally {
				await client.close();
			}
		}
	});
});

describe('tools filter and override, request timeout', { timeout: 120_000 }, () => {
	it('shows only the allowed tools, renamed, and refuses the others', async () => {
		const workload = await create({
			name: 'tools',
			image: EVERYTHING,
			transport: 'stdio',
			cmd_arguments: ['stdio'],
			tools: ['say', 'get-sum'],
			tools_override: { echo: { name: 'say', description: 'Says it back' } },
		});
		const client = await connect(workload.url, 'streamable-http');
		try {
			const { tools } = await client.listTools();
			expect(tools.map((tool) => tool.name).sort()).toEqual(['get-sum', 'say']);
			expect(tools.find((tool) => tool.name === 'say')?.description).toBe('Says it back');
			expect(textOf(await client.callTool({ name: 'say', arguments: { message: 'renamed' } }))).toBe('Echo: renamed');
			for (const hidden of ['echo', 'get-env']) {
				await expect(client.callTool({ name: hidden, arguments: { message: 'x' } })).rejects.toThrow(/not found/);
			}
		} finally {
			await client.close();
		}
	});

	it('times a slow call out, keeping the connection alive meanwhile', async () => {
		const workload = await create({ name: 'slow', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], request_timeout: 2 });
		const client = await connect(workload.url, 'streamable-http');
		try {
			// The proxy's 2 s, not the client's 60 s: its message names the workload's timeout.
			await expect(client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 8, steps: 8 } })).rejects.toThrow(/did not answer within 2 s/);
			// The server was told to stop, and still answers the next call.
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'after' } }))).toBe('Echo: after');
		} finally {
			await client.close();
		}
		// On the wire: a call longer than the keep-alive interval turns into an event stream with comments.
		const init = await fetch(workload.url, {
			method: 'POST',
			headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
			body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
		});
		// Another revision than the SDK client's: a server process of its own starts first.
		expect(await init.text()).toContain('"protocolVersion":"2025-06-18"');
		const session = init.headers.get('mcp-session-id')!;
		const slow = await fetch(workload.url, {
			method: 'POST',
			headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': session },
			body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 1.5, steps: 1 } } }),
		});
		expect(slow.headers.get('content-type')).toContain('text/event-stream');
		const text = await slow.text();
		expect(text).toContain(': keep-alive');
		expect(text).toContain('"id":2');
	});
});

describe('another real server: server-memory', { timeout: 120_000 }, () => {
	it('stores and reads back a knowledge graph through the proxy', async () => {
		const workload = await create({ name: 'memory', image: MEMORY, transport: 'stdio' });
		const client = await connect(workload.url, 'streamable-http');
		try {
			expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['create_entities', 'read_graph']));
			await client.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Hangar', entityType: 'project', observations: ['runs MCP servers'] }] } });
			expect(textOf(await client.callTool({ name: 'read_graph', arguments: {} }))).toContain('runs MCP servers');
		} finally {
			await client.close();
		}
	});
});
