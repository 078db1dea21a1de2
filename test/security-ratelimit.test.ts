/**
 * Rate limiting on a workload's proxy with the official MCP SDK client: 429 with Retry-After
 * and a JSON-RPC error, shared, per-tool and per-user buckets taken all or none, continuous
 * refill, buckets shared by two proxies through a real Redis, failing open when Redis is
 * gone, and configuration mistakes.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateWorkload } from '../protocol/protocol.workloads.js';
import { TestIssuer } from './fixtures/security/issuer.js';
import { startRedis, type RedisServer } from './fixtures/security/redis.js';
import { auditFileOf, bearer, type AuditEvent, createWorkload, deleteAllWorkloads, openSession, postMcp, readAudit } from './fixtures/security/support.js';
import { connect, startRemoteServer, textOf, uniqueName, waitFor, type RemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { startServe, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';

let home: TestHome;
let serve: ServeProcess;
let remote: RemoteServer;
let issuer: TestIssuer;
const clients: Client[] = [];

async function client(url: string, headers: Record<string, string> = {}): Promise<Client> {
	const connected = await connect(url, 'streamable-http', {}, headers);
	clients.push(connected);
	return connected;
}

/** The text of an echo, or the error message of a refused one. */
const echo = (caller: Client, tool = 'echo') => caller.callTool({ name: tool, arguments: { message: 'x' } }).then(textOf, (error: Error) => error.message);
const LIMITED = /Rate limit exceeded/;

beforeAll(async () => {
	home = await createTestHome();
	serve = await startServe(home.env);
	remote = await startRemoteServer('streamable');
	issuer = await TestIssuer.start();
}, 60_000);

afterAll(async () => {
	await Promise.allSettled(clients.map((connected) => connected.close()));
	await deleteAllWorkloads(serve.url);
	remote?.stop();
	await serve?.stop();
	await issuer?.stop();
	await home?.dispose();
}, 120_000);

describe('in-process buckets', { timeout: 60_000 }, () => {
	it('refuses the call past the shared bucket with 429, Retry-After and a JSON-RPC error; lists are not limited', async () => {
		const workload = await createWorkload(serve.url, { name: 'rl-shared', url: remote.url, rate_limit_config: { shared: { maxTokens: 3, refillPeriod: '1m' } }, audit_config: { enabled: true } });
		const caller = await client(workload.url);
		expect([await echo(caller), await echo(caller), await echo(caller)]).toEqual(['remote echo: x', 'remote echo: x', 'remote echo: x']);
		expect(await echo(caller)).toMatch(LIMITED);
		expect((await caller.listTools()).tools.length).toBe(3);

		const session = await openSession(workload.url, {});
		const refused = await postMcp(workload.url, { id: 5, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } }, { 'Mcp-Session-Id': session });
		expect(refused.status).toBe(429);
		const retryAfter = Number(refused.headers.get('retry-after'));
		// One token per 20 s, the last one taken moments ago.
		expect(retryAfter).toBeGreaterThanOrEqual(19);
		expect(retryAfter).toBeLessThanOrEqual(20);
		expect(refused.body).toEqual({ jsonrpc: '2.0', id: 5, error: { code: 429, message: 'Rate limit exceeded', data: { retryAfterSeconds: retryAfter } } });

		const toolCalls = (events: AuditEvent[]) => events.filter((event) => event.type === 'mcp_tool_call');
		const { events } = await readAudit(auditFileOf(home.path, workload.name), (events) => toolCalls(events).length >= 5);
		expect(toolCalls(events).map((event) => event.outcome)).toEqual(['success', 'success', 'success', 'failure', 'failure']);
	});

	it('takes a token from every applicable bucket or from none', async () => {
		const workload = await createWorkload(serve.url, {
			name: 'rl-tools',
			url: remote.url,
			rate_limit_config: { shared: { maxTokens: 5, refillPeriod: '1h' }, tools: [{ name: 'whoami', shared: { maxTokens: 1, refillPeriod: '1h' } }] },
		});
		const caller = await client(workload.url);
		expect(await echo(caller, 'whoami')).toBe('none');
		expect(await echo(caller, 'whoami')).toMatch(LIMITED);
		expect(await echo(caller, 'whoami')).toMatch(LIMITED);
		// The refused whoami calls took nothing from the shared bucket: four tokens are left.
		for (let index = 0; index < 4; index++) expect(await echo(caller)).toBe('remote echo: x');
		expect(await echo(caller)).toMatch(LIMITED);
	});

	it('gives each caller its own bucket, by the token\'s sub', async () => {
		const workload = await createWorkload(serve.url, {
			name: 'rl-users',
			url: remote.url,
			oidc: { issuer: issuer.issuer, audience: issuer.audience },
			rate_limit_config: { perUser: { maxTokens: 2, refillPeriod: '1h' }, tools: [{ name: 'whoami', perUser: { maxTokens: 1, refillPeriod: '1h' } }] },
		});
		const alice = await client(workload.url, bearer(await issuer.token('alice')));
		const aliceAgain = await client(workload.url, bearer(await issuer.token('alice')));
		const bob = await client(workload.url, bearer(await issuer.token('bob')));
		expect(await echo(alice)).toBe('remote echo: x');
		expect(await echo(aliceAgain)).toBe('remote echo: x');
		expect(await echo(alice)).toMatch(LIMITED);
		expect(await echo(bob, 'whoami')).toBe('none');
		expect(await echo(bob, 'whoami')).toMatch(LIMITED);
		expect(await echo(bob)).toBe('remote echo: x');
	});

	it('refills continuously', async () => {
		const workload = await createWorkload(serve.url, { name: 'rl-refill', url: remote.url, rate_limit_config: { shared: { maxTokens: 2, refillPeriod: '2s' } } });
		const caller = await client(workload.url);
		expect([await echo(caller), await echo(caller)]).toEqual(['remote echo: x', 'remote echo: x']);
		expect(await echo(caller)).toMatch(LIMITED);
		await new Promise((resolve) => setTimeout(resolve, 1_100)); // one token back after 1 s
		expect(await echo(caller)).toBe('remote echo: x');
		expect(await echo(caller)).toMatch(LIMITED);
	});

	it.each([
		[{ shared: { maxTokens: 0, refillPeriod: '1m' } }, /invalid rate_limit_config\.shared\.maxTokens: must be 1 or more/],
		[{ shared: { maxTokens: 5, refillPeriod: 'a minute' } }, /invalid rate_limit_config\.shared\.refillPeriod: must be a duration/],
		[{ tools: [{ shared: { maxTokens: 1, refillPeriod: '1m' } }] }, /invalid rate_limit_config\.tools\[0\]\.name/],
		[{}, /invalid rate_limit_config: give shared, perUser or tools/],
	])('refuses %j with a 400 naming the field', async (config, message) => {
		const created = await callRest(serve.url, CreateWorkload, { name: 'rl-bad', url: remote.url, rate_limit_config: config });
		expect(created.status).toBe(400);
		expect((created.body as { message: string }).message).toMatch(message);
	});
});

describe('buckets shared through Redis', { timeout: 120_000 }, () => {
	let redis: RedisServer;
	let otherHome: TestHome;
	let otherServe: ServeProcess;
	const name = uniqueName('rl-replicas');
	const urls: string[] = [];

	beforeAll(async () => {
		redis = await startRedis();
		otherHome = await createTestHome();
		otherServe = await startServe(otherHome.env);
		// The same workload run by two Hangar installations: two proxies, one Redis.
		for (const server of [serve, otherServe]) {
			const params = { name, url: remote.url, rate_limit_config: { shared: { maxTokens: 4, refillPeriod: '1h' } }, scaling_config: { session_redis: { address: redis.address } } };
			const created = await callRest(server.url, CreateWorkload, params);
			expect(created.status, JSON.stringify(created.body)).toBe(201);
			urls.push(`http://127.0.0.1:${(created.body as { port: number }).port}/api/mcp`);
		}
	}, 60_000);

	afterAll(async () => {
		await deleteAllWorkloads(otherServe.url);
		await otherServe?.stop();
		await otherHome?.dispose();
		await redis?.stop();
	}, 60_000);

	it('counts the calls of both proxies against one bucket', async () => {
		const [first, second] = [await client(urls[0]!), await client(urls[1]!)];
		// Each proxy connects to Redis in the background: wait until the first has its buckets there.
		const probe = new Redis(Number(redis.address.split(':')[1]), '127.0.0.1');
		try {
			expect(await echo(first)).toBe('remote echo: x');
			const keys = await waitFor(async () => {
				const found = await probe.keys('hangar:rl:*');
				return found.length ? found : undefined;
			}, 'a bucket in Redis');
			expect(keys).toEqual([`hangar:rl:{default:${name}}:shared`]);
			expect(await probe.pttl(keys[0]!)).toBeGreaterThan(3_600_000);
			expect(await echo(second)).toBe('remote echo: x');
			expect(await echo(first)).toBe('remote echo: x');
			expect(await echo(second)).toBe('remote echo: x');
			expect(await echo(first)).toMatch(LIMITED);
			expect(await echo(second)).toMatch(LIMITED);
		} finally {
			probe.disconnect();
		}
	});

	it('lets calls through when Redis is gone (fail open)', async () => {
		// A Redis of its own to stop, which the other test of this block needs up.
		const own = await startRedis();
		const workload = await createWorkload(serve.url, { name: uniqueName('rl-open'), url: remote.url, rate_limit_config: { shared: { maxTokens: 1, refillPeriod: '1h' } }, scaling_config: { session_redis: { address: own.address } } });
		const caller = await client(workload.url);
		const probe = new Redis(Number(own.address.split(':')[1]), '127.0.0.1', { maxRetriesPerRequest: 1 });
		try {
			expect(await echo(caller)).toBe('remote echo: x');
			await waitFor(async () => (await probe.keys('hangar:rl:*')).length > 0, 'the bucket in Redis');
			expect(await echo(caller)).toMatch(LIMITED);
		} finally {
			probe.disconnect();
		}
		await own.stop();
		for (let index = 0; index < 3; index++) expect(await echo(caller)).toBe('remote echo: x');
	});
});
