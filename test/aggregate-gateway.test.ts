/**
 * The gateway on servers nobody here wrote (issue #46): a member whose definitions a validating
 * client would reject costs only those definitions; find_tool answers so a model can act, from
 * an index built once per list change; call_tool of an unknown name offers the closest; an
 * approval of a member's held tools reaches a running aggregate and its clients. Members are a
 * real npm server in a container (hangar-test/memory), recorded definitions of published servers
 * replayed by the official SDK's server (test/fixtures/search-eval/), and a drifting SDK server;
 * clients are the official SDKs, 1.x and 2.x, whose own validation judges every list.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCorpus } from '../bench/searchQuality.js';
import { CreateGroup } from '../protocol/protocol.groups.js';
import { ApproveWorkloadTools, CreateWorkload, GetWorkloadTools, ListWorkloads, type WorkloadPinsResult } from '../protocol/protocol.workloads.js';
import { connect, createRunning, MEMORY, removeAllWorkloads, startFixture, textOf, uniqueName, waitFor, type RemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { connectModern } from './support/mcpClients.js';
import { runHangar, startServe, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';

const REPLAY = fileURLToPath(new URL('./fixtures/workloads/replay-server.mjs', import.meta.url));
const DRIFTING = fileURLToPath(new URL('./fixtures/workloads/drifting-server.mjs', import.meta.url));

/** Definitions a validating client rejects, each with what the aggregate should do with it. */
const ODD_TOOLS = [
	{ name: 'fine', description: 'Nothing odd', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
	// As a published GitLab server lists one: a schema that forgot its type.
	{ name: 'untyped', description: 'No type', inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', properties: { id: { type: 'string' } } } },
	{ name: 'no_schema', description: 'No input schema at all' },
	{ name: 'string_input', description: 'A string where an object schema belongs', inputSchema: { type: 'string' } },
	{ name: 'array_properties', description: 'Properties as a list', inputSchema: { type: 'object', properties: [{ type: 'string' }] } },
	{ name: 'unresolved_output', description: 'An output schema referring to what it lacks', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { n: { $ref: '#/$defs/missing' } } } },
	// As published servers list them: clients accept a 2020-12 output schema.
	{ name: 'new_dialect_output', description: 'An output schema of JSON Schema 2020-12', inputSchema: { type: 'object' }, outputSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { n: { $ref: '#/$defs/count' } }, $defs: { count: { type: 'integer' } } } },
	{ name: 'bad_output_type', description: 'An output schema with an unknown type', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { n: { type: 'int' } } } },
];

let home: TestHome;
let serve: ServeProcess;
let scratch: string;
const fixtures: RemoteServer[] = [];
const clients: Array<{ close(): Promise<unknown> }> = [];

const create = (params: Record<string, unknown>) => createRunning(serve.url, params);

async function group(): Promise<string> {
	const name = uniqueName('gw');
	expect((await callRest(serve.url, CreateGroup, { name })).status).toBe(201);
	return name;
}

async function client(url: string): Promise<Client> {
	const connected = await connect(url, 'streamable-http');
	clients.push(connected);
	return connected;
}

async function replay(servers: Record<string, unknown>): Promise<string> {
	const file = join(scratch, `${uniqueName('servers')}.json`);
	await writeFile(file, JSON.stringify({ servers }));
	const fixture = await startFixture(REPLAY, [file]);
	fixtures.push(fixture);
	return fixture.url;
}

beforeAll(async () => {
	home = await createTestHome();
	scratch = await mkdtemp(join(tmpdir(), 'hangar-gateway-'));
	serve = await startServe({ ...home.env, HANGAR_PROXY_KEEPALIVE_MS: '500', HANGAR_SECRET_embed_key: 'k-embed-123' });
}, 60_000);

afterAll(async () => {
	await Promise.allSettled(clients.map((each) => each.close()));
	if (serve) await removeAllWorkloads(serve.url).catch(() => undefined);
	await serve?.stop();
	for (const fixture of fixtures) fixture.stop();
	await rm(scratch, { recursive: true, force: true });
	await home?.dispose();
}, 120_000);

describe("a member's odd definitions cost only themselves", { timeout: 180_000 }, () => {
	let aggregate: { name: string; url: string };
	let odd: { name: string; url: string };

	beforeAll(async () => {
		const members = await group();
		const replayed = await replay({ odd: { serverInfo: { name: 'odd', version: '1.0.0' }, tools: ODD_TOOLS } });
		[odd] = await Promise.all([
			create({ name: uniqueName('odd'), url: `${replayed}/odd/mcp`, group: members, tool_pinning: 'off' }),
			create({ name: uniqueName('mem'), image: MEMORY, transport: 'stdio', group: members }),
		]);
		aggregate = await create({ name: uniqueName('agg'), image: `group://${members}`, group: members });
	}, 180_000);

	it('a validating client rejects the member itself: the definitions are as odd as they look', async () => {
		await expect((await client(odd.url)).listTools()).rejects.toThrow(/inputSchema|type/);
	});

	it('SDK 1.x and 2.x clients list the aggregate: repaired tools kept, the rest left out, every other member whole', async () => {
		const expected = ['fine', 'new_dialect_output', 'no_schema', 'untyped'].map((tool) => `${odd.name}_${tool}`);
		const legacy = (await (await client(aggregate.url)).listTools()).tools;
		const modernClient = await connectModern(aggregate.url);
		clients.push(modernClient);
		const modern = (await modernClient.listTools()).tools;
		for (const tools of [legacy, modern]) {
			const names = tools.map((tool) => tool.name);
			expect(names.filter((name) => name.startsWith(`${odd.name}_`)).sort()).toEqual(expected);
			expect(names.some((name) => name.endsWith('_read_graph'))).toBe(true);
		}
		expect(legacy.find((tool) => tool.name === `${odd.name}_untyped`)?.inputSchema).toMatchObject({ type: 'object', properties: { id: { type: 'string' } } });
		expect(legacy.find((tool) => tool.name === `${odd.name}_no_schema`)?.inputSchema).toEqual({ type: 'object' });
		// A repaired tool is callable as any other.
		expect(textOf(await modernClient.callTool({ name: `${odd.name}_untyped`, arguments: { id: '7' } }))).toBe('odd untyped {"id":"7"}');
	});

	it("the aggregate's status names each member tool repaired or left out", async () => {
		const status = await waitFor(async () => {
			const { workloads } = (await callRest(serve.url, ListWorkloads, { all: true })).body as { workloads: Array<{ name: string; status_context?: string }> };
			const context = workloads.find((workload) => workload.name === aggregate.name)?.status_context;
			return context?.includes('string_input') ? context : undefined;
		}, "the aggregate's status context");
		for (const tool of ['string_input', 'array_properties', 'unresolved_output', 'bad_output_type']) expect(status).toContain(`${odd.name}/${tool} left out`);
		for (const tool of ['untyped', 'no_schema']) expect(status).toContain(`${odd.name}/${tool} repaired`);
		expect(status).not.toContain('/fine');
		expect(status).not.toContain('new_dialect_output');
	});
});

describe('find_tool and call_tool answer so the model can act', { timeout: 180_000 }, () => {
	let search: Client;
	let memory: string;

	beforeAll(async () => {
		const members = await group();
		memory = uniqueName('mem');
		await create({ name: memory, image: MEMORY, transport: 'stdio', group: members });
		const aggregate = await create({ name: uniqueName('search'), image: `group://${members}`, group: members, aggregation: { mode: 'search' } });
		search = await client(aggregate.url);
	}, 180_000);

	const hits = (result: unknown) => (result as { structuredContent: { tools: Array<Record<string, unknown>> } }).structuredContent.tools;

	it('each hit gives the exposed name, the member, the description and the input schema', async () => {
		const found = hits(await search.callTool({ name: 'find_tool', arguments: { query: 'add observations to an entity in the knowledge graph' } }));
		expect(found.length).toBeGreaterThan(0);
		expect(found.length).toBeLessThanOrEqual(5);
		const [best] = found;
		expect(best).toMatchObject({ name: `${memory}_add_observations`, member: memory, description: expect.any(String), inputSchema: { type: 'object' } });
		const called = await search.callTool({ name: 'call_tool', arguments: { name: best!.name, arguments: { observations: [] } } });
		expect(called.isError ?? false).toBe(false);
	});

	it('the number of hits is a parameter with a cap; a bad one is an error naming it', async () => {
		expect(hits(await search.callTool({ name: 'find_tool', arguments: { query: 'entity', limit: 2 } }))).toHaveLength(2);
		expect(hits(await search.callTool({ name: 'find_tool', arguments: { query: 'graph entity relation observation node', limit: 500 } })).length).toBeLessThanOrEqual(50);
		await expect(search.callTool({ name: 'find_tool', arguments: { query: 'entity', limit: 0 } })).rejects.toThrow(/limit/);
		await expect(search.callTool({ name: 'find_tool', arguments: {} })).rejects.toThrow(/query/);
	});

	it('call_tool of an unknown name is an error that offers the closest visible names', async () => {
		await expect(search.callTool({ name: 'call_tool', arguments: { name: `${memory}_read_grahp`, arguments: {} } })).rejects.toThrow(new RegExp(`Unknown tool: ${memory}_read_grahp; the closest this aggregate has: .*${memory}_read_graph`));
	});
});

describe("an approval of a member's held tools reaches a running aggregate", { timeout: 180_000 }, () => {
	const stable = { name: 'stable', description: 'Never changes', inputSchema: { type: 'object' } };
	const lookup = { name: 'lookup', description: 'Looks a word up', inputSchema: { type: 'object', properties: { word: { type: 'string' } } } };

	it('the member proxy says its list changed (SDK 1.x and a 2026-07-28 listen); the aggregate and its clients see the approved tool, a client that came later too', async () => {
		const fixture = await startFixture(DRIFTING);
		fixtures.push(fixture);
		const control = (lists: object) => fetch(new URL('/control', fixture.url), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(lists) });
		expect((await control({ tools: [stable] })).status).toBe(204);
		const members = await group();
		const member = await create({ name: uniqueName('drift'), url: fixture.url, group: members, tool_pinning: 'block' });
		const aggregate = await create({ name: uniqueName('agg'), image: `group://${members}`, group: members });
		const direct = await client(member.url);
		const through = await client(aggregate.url);
		const names = async (each: Client) => (await each.listTools()).tools.map((tool) => tool.name).sort();
		expect(await names(direct)).toEqual(['stable']);
		expect(await names(through)).toEqual([`${member.name}_stable`]);

		// A new tool: the server says so, the member's proxy holds it back.
		expect((await control({ tools: [stable, lookup] })).status).toBe(204);
		const stateOf = async (tool: string) => ((await callRest(serve.url, GetWorkloadTools, { name: member.name })).body as WorkloadPinsResult).tools.find((each) => each.name === tool)?.state;
		await waitFor(async () => (await names(direct)).join() === 'stable' && (await stateOf('lookup')) === 'new', 'the new tool held');
		expect(await names(through)).toEqual([`${member.name}_stable`]);

		// Approved over REST: no word from the server this time; the proxy tells every client, a
		// 2026-07-28 one on its subscriptions/listen stream.
		const modern = await connectModern(member.url);
		clients.push(modern);
		const heard = { direct: 0, through: 0, modern: 0 };
		direct.setNotificationHandler(ToolListChangedNotificationSchema, async () => void heard.direct++);
		through.setNotificationHandler(ToolListChangedNotificationSchema, async () => void heard.through++);
		modern.setNotificationHandler('notifications/tools/list_changed', () => void heard.modern++);
		const listening = await modern.listen({ toolsListChanged: true });
		clients.push(listening);
		const approved = await callRest(serve.url, ApproveWorkloadTools, { name: member.name, tools: ['lookup'] });
		expect(approved.status, JSON.stringify(approved.body)).toBe(200);
		await waitFor(async () => heard.direct > 0 && heard.through > 0 && heard.modern > 0, 'notifications/tools/list_changed from the approval');
		expect((await modern.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['lookup', 'stable']);
		expect(await names(direct)).toEqual(['lookup', 'stable']);
		expect(await names(through)).toEqual([`${member.name}_lookup`, `${member.name}_stable`]);
		expect(textOf(await through.callTool({ name: `${member.name}_lookup`, arguments: { word: 'x' } }))).toBe('called lookup');

		// With no client of the aggregate connected, an approval still reaches its next client.
		await through.close();
		expect((await control({ tools: [stable, lookup, { ...lookup, name: 'define' }] })).status).toBe(204);
		// Seen by the member's proxy (a client lists), then approved.
		await waitFor(async () => (await names(direct)).join() === 'lookup,stable' && (await stateOf('define')) === 'new', 'define held');
		expect((await callRest(serve.url, ApproveWorkloadTools, { name: member.name, tools: ['define'] })).status).toBe(200);
		const later = await client(aggregate.url);
		await waitFor(async () => (await names(later)).includes(`${member.name}_define`), 'the approved tool through the aggregate');
	});
});

describe('hybrid search: an OpenAI-compatible embeddings endpoint blended into find_tool', { timeout: 180_000 }, () => {
	const EMBEDDINGS = fileURLToPath(new URL('./fixtures/workloads/embeddings-server.mjs', import.meta.url));
	/** Words the stand-in endpoint takes for one meaning: what a model would do for these. */
	const CONCEPTS = [['memorize', 'remember', 'store', 'memory', 'recall', 'fact']];
	const NOTES = [
		{ name: 'remember_fact', description: 'Store a fact about a person in long-term memory', inputSchema: { type: 'object', properties: { fact: { type: 'string' } } } },
		{ name: 'write_file', description: 'Write text to a file on disk', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
	];
	let endpoint: RemoteServer & { stats(): Promise<{ requests: number; inputs: number }>; mode(mode: string): Promise<void> };
	let search: Client;
	let members: string;
	let notes: string;
	let control: (lists: object) => Promise<Response>;
	let drifting: string;
	const found = async (query: string) => ((await search.callTool({ name: 'find_tool', arguments: { query } })) as unknown as { structuredContent: { tools: Array<{ name: string }> } }).structuredContent.tools.map((tool) => tool.name);

	beforeAll(async () => {
		const server = await startFixture(EMBEDDINGS, [JSON.stringify(CONCEPTS), 'k-embed-123']);
		fixtures.push(server);
		const origin = new URL(server.url).origin;
		endpoint = {
			...server,
			stats: async () => (await fetch(`${origin}/stats`)).json() as Promise<{ requests: number; inputs: number }>,
			mode: async (mode) => void (await fetch(`${origin}/control`, { method: 'POST', body: JSON.stringify({ mode }) })),
		};
		const secret = await runHangar(['secret', 'setup', '--provider', 'environment'], home.env);
		expect(secret.code, secret.stderr).toBe(0);
		members = await group();
		const replayed = await replay({ notes: { serverInfo: { name: 'notes', version: '1.0.0' }, tools: NOTES } });
		const fixture = await startFixture(DRIFTING);
		fixtures.push(fixture);
		control = (lists: object) => fetch(new URL('/control', fixture.url), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(lists) });
		expect((await control({ tools: [{ name: 'forecast', description: 'Tells the weather for a city', inputSchema: { type: 'object' } }] })).status).toBe(204);
		notes = uniqueName('notes');
		drifting = uniqueName('weather');
		await Promise.all([
			create({ name: notes, url: `${replayed}/notes/mcp`, group: members }),
			create({ name: drifting, url: fixture.url, group: members, tool_pinning: 'off' }),
		]);
		const aggregate = await create({
			name: uniqueName('hybrid'),
			image: `group://${members}`,
			group: members,
			aggregation: { mode: 'search', search: { embeddings: { url: server.url, model: 'stand-in', api_key_secret: 'embed_key', weight: 0.5 } } },
		});
		search = await client(aggregate.url);
	}, 180_000);

	it('finds by meaning what no word of the request names, with the API key from a Hangar secret', async () => {
		// The stand-in endpoint hashes the words it has no meaning for, the tools' names with their
		// random member names among them, so an unrelated tool may share a word's slot and score a
		// little (as any tool does with a real model): what is asserted is the order.
		await waitFor(async () => (await found('memorize that Ada likes tea'))[0] === `${notes}_remember_fact`, 'the semantic match first');
	});

	it('embeds each definition once: a search costs one input (the request), a changed tool one more', async () => {
		await waitFor(async () => (await found('memorize that Ada likes tea'))[0] === `${notes}_remember_fact`, 'the tools embedded');
		const before = await endpoint.stats();
		await found('remember my dentist is on Friday');
		await found('tell the weather in Lyon');
		expect((await endpoint.stats()).inputs - before.inputs).toBe(2);
		const windy = { tools: [{ name: 'forecast', description: 'Tells the weather and the wind for a city', inputSchema: { type: 'object' } }] };
		const changed = await endpoint.stats();
		// Told again while waiting: the server's list_changed reaches the member's proxy only once its stream to the server is open.
		let asked = 0;
		await waitFor(async () => (await control(windy)).status === 204 && (asked++, (await found('wind in Lyon'))[0] === `${drifting}_forecast`), 'the changed tool found');
		await waitFor(async () => (await endpoint.stats()).inputs - changed.inputs === asked + 1, 'the changed tool embedded, and it alone');
		const after = await endpoint.stats();
		await found('memorize the wind speed');
		expect((await endpoint.stats()).inputs - after.inputs).toBe(1);
	});

	it('when the endpoint is down, find_tool answers lexically and the status says so', async () => {
		await endpoint.mode('down');
		try {
			expect((await found('write text to a file'))[0]).toBe(`${notes}_write_file`);
			const context = await waitFor(async () => {
				const { workloads } = (await callRest(serve.url, ListWorkloads, { group: members })).body as { workloads: Array<{ name: string; status_context?: string }> };
				return workloads.find((workload) => workload.name.startsWith('hybrid'))?.status_context?.match(/embeddings unavailable[^;]*/)?.[0];
			}, 'the status naming the embeddings');
			expect(context).toContain('503');
			expect(context).not.toContain('k-embed-123');
		} finally {
			await endpoint.mode('ok');
		}
	});

	it('refuses an endpoint outside the outbound-address policy, or outside search mode, with a 400 naming the field', async () => {
		const refused = async (aggregation: object) => {
			const { status, body } = await callRest(serve.url, CreateWorkload, { name: uniqueName('bad'), image: `group://${members}`, group: members, aggregation });
			return { status, message: JSON.stringify(body) };
		};
		const embeddings = { url: endpoint.url, model: 'm' };
		expect(await refused({ search: { embeddings } })).toMatchObject({ status: 400, message: expect.stringContaining('aggregation.search.embeddings') });
		expect(await refused({ mode: 'search', search: { embeddings: { ...embeddings, url: 'http://embeddings.example/v1' } } })).toMatchObject({ status: 400, message: expect.stringMatching(/aggregation\.search\.embeddings\.url.*https/) });
		expect(await refused({ mode: 'search', search: { embeddings: { ...embeddings, url: 'https://10.1.2.3/v1' } } })).toMatchObject({ status: 400, message: expect.stringContaining('allow_private_ip') });
		expect(await refused({ mode: 'search', search: { embeddings: { ...embeddings, url: 'https://169.254.169.254/v1', allow_private_ip: true } } })).toMatchObject({ status: 400, message: expect.stringContaining('link-local') });
		expect(await refused({ mode: 'search', search: { embeddings: { ...embeddings, weight: 2 } } })).toMatchObject({ status: 400, message: expect.stringContaining('weight') });
	});
});

describe("an aggregate over every published server of the search evaluation's corpus", { timeout: 300_000 }, () => {
	const CORPUS = fileURLToPath(new URL('./fixtures/search-eval/corpus.json', import.meta.url));
	const MEMBERS = 4;

	it('lists every definition to validating SDK clients (1.x and 2.x), and find_tool searches them over HTTP', async () => {
		const servers = loadCorpus(dirname(CORPUS));
		const ids = Object.keys(servers);
		const total = Object.values(servers).reduce((sum, server) => sum + server.tools.length, 0);
		const fixture = await startFixture(REPLAY, [CORPUS]);
		fixtures.push(fixture);
		const members = await group();
		// Each member replays a quarter of the corpus's servers as one, every tool as its server recorded it.
		const chunks = Array.from({ length: MEMBERS }, (_, at) => ids.filter((_, index) => index % MEMBERS === at));
		await Promise.all(chunks.map((chunk, at) => create({ name: `corpus${at}-${members}`, url: `${fixture.url}/${chunk.join('+')}/mcp`, group: members })));
		const all = await create({ name: uniqueName('corpus-all'), image: `group://${members}`, group: members });
		const legacy = (await (await client(all.url)).listTools()).tools;
		const modernClient = await connectModern(all.url);
		clients.push(modernClient);
		const modern = (await modernClient.listTools()).tools;
		expect(legacy.length).toBe(total);
		expect(modern.map((tool) => tool.name).sort()).toEqual(legacy.map((tool) => tool.name).sort());

		const search = await client((await create({ name: uniqueName('corpus-search'), image: `group://${members}`, group: members, aggregation: { mode: 'search' } })).url);
		const found = (await search.callTool({ name: 'find_tool', arguments: { query: 'open an issue on GitHub' } })) as unknown as { structuredContent: { tools: Array<{ name: string; member: string }> } };
		expect(found.structuredContent.tools.some((tool) => tool.name.endsWith('github_create_issue'))).toBe(true);
	});
});
