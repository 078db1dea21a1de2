/**
 * A workload's proxy as replicas behind a real HAProxy, with sessions shared through a real
 * Redis: clients of every revision through the load balancer, a 2025 session served by every
 * replica in turn (no sticky routing) and ended on all of them, a replica killed mid-run with
 * no failed call, sessions kept on their replica without Redis, a stdio server whose replicas
 * each run the server, and nothing left behind by a deleted workload.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateWorkload, ListWorkloads, RestartWorkload } from '../protocol/protocol.workloads.js';
import { renderConfig } from '../server/proxy/scale/haproxy.js';
import { startRedis, type RedisServer } from './fixtures/security/redis.js';
import { createWorkload, deleteAllWorkloads, postMcp, type Workload } from './fixtures/security/support.js';
import { EVERYTHING, startRemoteServer, textOf, waitFor, type RemoteServer } from './fixtures/workloads/helpers.js';
import { connectAt, connectLegacy, connectModern, LEGACY_REVISIONS, REVISIONS } from './support/mcpClients.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar, startServe, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';

let home: TestHome;
let serve: ServeProcess;
let redis: RedisServer;
let remote: RemoteServer;

beforeAll(async () => {
	home = await createTestHome();
	[serve, redis, remote] = await Promise.all([startServe(home.env), startRedis(), startRemoteServer('streamable')]);
}, 60_000);

afterAll(async () => {
	await deleteAllWorkloads(serve.url);
	remote?.stop();
	await Promise.allSettled([serve?.stop(), redis?.stop()]);
	await home?.dispose();
}, 120_000);

const balancerConfigOf = (name: string) => join(home.path, 'data', 'proxies', `${name}.haproxy.cfg`);

/** The replicas' loopback ports, as the load balancer's configuration names them. */
async function replicaPorts(name: string): Promise<number[]> {
	const config = await readFile(balancerConfigOf(name), 'utf8');
	return [...config.matchAll(/^\s*server r\d+ 127\.0\.0\.1:(\d+)/gm)].map((match) => Number(match[1]));
}

interface Health {
	status: string;
	backend: string;
	sessions: number;
	sessions_shared?: boolean;
}

async function healthOf(port: number): Promise<Health> {
	return (await fetch(`http://127.0.0.1:${port}/health`)).json() as Promise<Health>;
}

/** Pids of the processes whose command line has every one of `parts`. */
async function pidsOf(...parts: string[]): Promise<number[]> {
	const pids: number[] = [];
	for (const entry of await readdir('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		const argv = (await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).split('\0');
		if (parts.every((part) => argv.includes(part))) pids.push(Number(entry));
	}
	return pids;
}

const echo = async (call: (name: string, args: Record<string, unknown>) => Promise<unknown>, message: string) => textOf(await call('echo', { message }));

describe('replicas sharing sessions through Redis', { timeout: 120_000 }, () => {
	let workload: Workload;
	beforeAll(async () => {
		workload = await createWorkload(serve.url, { name: 'replicas', url: remote.url, scaling_config: { replicas: 3, session_redis: { address: redis.address } } });
	}, 60_000);

	it('run three proxies behind HAProxy on the workload\'s own port', async () => {
		const ports = await replicaPorts(workload.name);
		expect(ports).toHaveLength(3);
		expect(new Set([...ports, workload.port]).size).toBe(4);
		for (const port of ports) expect(await healthOf(port)).toMatchObject({ status: 'ok', backend: 'connected', sessions_shared: true });
		expect(await pidsOf('proxy', workload.name, '--replica')).toHaveLength(3);
		expect(await pidsOf('-f', balancerConfigOf(workload.name))).not.toHaveLength(0);
	});

	it('serve a 2025 session on every replica in turn, and end it on all of them', async () => {
		const ports = await replicaPorts(workload.name);
		const before = await Promise.all(ports.map(async (port) => (await healthOf(port)).sessions));
		const { client } = await connectLegacy(workload.url, { revision: '2025-11-25', transport: 'streamable-http' });
		for (let call = 0; call < 6; call++) expect(textOf(await client.callTool({ name: 'echo', arguments: { message: `m${call}` } }))).toBe(`remote echo: m${call}`);
		// Round-robin: each replica took a share of the session's requests, so each holds it now.
		const during = await Promise.all(ports.map(async (port) => (await healthOf(port)).sessions));
		expect(during).toEqual(before.map((count) => count + 1));

		const transport = client.transport as unknown as { sessionId?: string; terminateSession(): Promise<void> };
		const id = transport.sessionId!;
		await transport.terminateSession();
		await waitFor(async () => (await Promise.all(ports.map(async (port) => (await healthOf(port)).sessions))).every((count, at) => count === before[at]), 'the session ended on every replica');
		for (let attempt = 0; attempt < 3; attempt++) {
			const answer = await postMcp(workload.url, { id: 1, method: 'tools/list' }, { 'Mcp-Session-Id': id, 'MCP-Protocol-Version': '2025-11-25' });
			expect(answer.status).toBe(404);
		}
		await client.close();
	});

	it('answer clients of every revision, over Streamable HTTP and legacy SSE', async () => {
		for (const revision of REVISIONS) {
			const client = await connectAt(workload.url, revision, 'streamable-http');
			for (let call = 0; call < 3; call++) expect(await echo(client.callTool, `${revision}/${call}`)).toBe(`remote echo: ${revision}/${call}`);
			await client.close();
		}
		// A legacy SSE session's posts go to the replica holding its stream.
		const sse = await connectAt(`${new URL(workload.url).origin}/sse`, '2024-11-05', 'sse');
		for (let call = 0; call < 4; call++) expect(await echo(sse.callTool, `sse/${call}`)).toBe(`remote echo: sse/${call}`);
		await sse.close();
	});

	it('lose no call when a replica is killed, and start it again', async () => {
		const [victim] = await pidsOf('proxy', workload.name, '--replica', '2');
		expect(victim).toBeDefined();
		const modern = await connectModern(workload.url);
		const legacy = await Promise.all(LEGACY_REVISIONS.slice(1).map((revision) => connectLegacy(workload.url, { revision, transport: 'streamable-http' })));
		const callers = [
			(message: string) => modern.callTool({ name: 'echo', arguments: { message } }),
			...legacy.map(({ client }) => (message: string) => client.callTool({ name: 'echo', arguments: { message } })),
		];
		let killed = false;
		const failures: string[] = [];
		let calls = 0;
		await Promise.all(
			callers.map(async (call, caller) => {
				for (let round = 0; round < 40; round++) {
					if (caller === 0 && round === 10) {
						process.kill(victim!, 'SIGKILL');
						killed = true;
					}
					const message = `${caller}/${round}`;
					await call(message).then(
						(result) => (textOf(result) === `remote echo: ${message}` ? calls++ : failures.push(`${message}: ${JSON.stringify(result)}`)),
						(error: Error) => failures.push(`${message}: ${error.message}`),
					);
				}
			}),
		);
		expect(killed).toBe(true);
		expect(failures).toEqual([]);
		expect(calls).toBe(callers.length * 40);

		const [replacement] = await waitFor(async () => {
			const pids = await pidsOf('proxy', workload.name, '--replica', '2');
			return pids.length === 1 && pids[0] !== victim ? pids : undefined;
		}, 'replica 2 started again');
		expect(replacement).not.toBe(victim);
		const port = (await replicaPorts(workload.name))[1]!;
		await waitFor(async () => (await healthOf(port)).backend === 'connected', 'replica 2 serving again on its port');
		await Promise.all([modern.close(), ...legacy.map(({ client }) => client.close())]);
	});

	it('keep each session on its replica while Redis is down, and say so', async () => {
		// A Redis and a workload of its own: it stops that Redis, which the other tests need up.
		const own = await startRedis();
		const workload = await createWorkload(serve.url, { name: 'redis-down', url: remote.url, scaling_config: { replicas: 3, session_redis: { address: own.address } } });
		await own.stop();
		const ports = await replicaPorts(workload.name);
		await waitFor(async () => (await Promise.all(ports.map(healthOf))).every((replica) => replica.sessions_shared === false), 'every replica seeing Redis gone');
		const listed = await waitFor(async () => {
			const { workloads } = (await callRest(serve.url, ListWorkloads, {})).body as { workloads: Array<{ name: string; status: string; status_context?: string }> };
			const found = workloads.find((candidate) => candidate.name === workload.name);
			return found?.status_context?.includes('Redis') ? found : undefined;
		}, 'the workload saying its replicas cannot reach Redis');
		expect(listed.status).toBe('running');
		const before = await Promise.all(ports.map(async (port) => (await healthOf(port)).sessions));
		// HAProxy checks Redis itself; give its check a moment to fail too.
		await new Promise((resolve) => setTimeout(resolve, 2_500));
		const { client } = await connectLegacy(workload.url, { revision: '2025-11-25', transport: 'streamable-http' });
		for (let call = 0; call < 6; call++) expect(textOf(await client.callTool({ name: 'echo', arguments: { message: `d${call}` } }))).toBe(`remote echo: d${call}`);
		const after = await Promise.all(ports.map(async (port) => (await healthOf(port)).sessions));
		expect(after.map((count, at) => count - before[at]!).sort()).toEqual([0, 0, 1]);
		await client.close();
	});
});

describe('replicas without Redis', { timeout: 120_000 }, () => {
	it('keep a 2025 session on the replica that opened it', async () => {
		const workload = await createWorkload(serve.url, { name: 'sticky', url: remote.url, scaling_config: { replicas: 2 } });
		const ports = await replicaPorts(workload.name);
		const { client } = await connectLegacy(workload.url, { revision: '2025-06-18', transport: 'streamable-http' });
		for (let call = 0; call < 4; call++) expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'x' } }))).toBe('remote echo: x');
		const health = await Promise.all(ports.map(healthOf));
		expect(health.map((replica) => replica.sessions).sort()).toEqual([0, 1]);
		expect(health.every((replica) => replica.sessions_shared === undefined)).toBe(true);
		await client.close();
	});

	it('give a stdio server\'s replicas a server process each', async () => {
		const workload = await createWorkload(serve.url, { name: 'stdio-replicas', image: EVERYTHING, transport: 'stdio', scaling_config: { replicas: 2 } });
		const ports = await replicaPorts(workload.name);
		for (const port of ports) await waitFor(async () => (await healthOf(port)).backend === 'connected', `the replica on ${port} connected`);
		// A 2026-07-28 client's requests are stateless: round-robin takes them to both replicas.
		const client = await connectModern(workload.url);
		for (let call = 0; call < 4; call++) expect(textOf(await client.callTool({ name: 'echo', arguments: { message: `s${call}` } }))).toBe(`Echo: s${call}`);
		await client.close();
	});

	it('keep the workload\'s port when their supervisor was killed: the HAProxy it left is stopped', async () => {
		const workload = await createWorkload(serve.url, { name: 'orphan', url: remote.url, scaling_config: { replicas: 2 } });
		const record = JSON.parse(await readFile(join(home.path, 'data', 'proxies', `${workload.name}.json`), 'utf8')) as { pid: number };
		process.kill(record.pid, 'SIGKILL');
		// The replicas end with their supervisor; HAProxy does not, and holds the port.
		await waitFor(async () => (await pidsOf('proxy', workload.name)).length === 0, 'the replicas gone with their supervisor');
		expect(await pidsOf('-f', balancerConfigOf(workload.name))).not.toHaveLength(0);
		const restarted = await callRest(serve.url, RestartWorkload, { name: workload.name });
		expect(restarted.status, JSON.stringify(restarted.body)).toBeLessThan(300);
		const detail = await waitFor(async () => {
			const { workloads } = (await callRest(serve.url, ListWorkloads, {})).body as { workloads: Array<{ name: string; status: string; port: number }> };
			return workloads.find((candidate) => candidate.name === workload.name && candidate.status === 'running');
		}, 'the workload running again');
		expect(detail.port).toBe(workload.port);
		const client = await connectModern(workload.url);
		expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'back' } }))).toBe('remote echo: back');
		await client.close();
	});

	it('leave nothing behind once the workload is deleted', async () => {
		const workload = await createWorkload(serve.url, { name: 'gone', url: remote.url, scaling_config: { replicas: 2 } });
		const config = balancerConfigOf(workload.name);
		expect(await pidsOf('-f', config)).not.toHaveLength(0);
		await deleteAllWorkloads(serve.url);
		expect(await pidsOf('proxy', workload.name)).toEqual([]);
		expect(await pidsOf('-f', config)).toEqual([]);
		await expect(fetch(workload.url, { method: 'POST' })).rejects.toThrow();
	});
});

describe('replica settings', { timeout: 60_000 }, () => {
	it('are refused out of range, naming the field', async () => {
		for (const replicas of [0, 17]) {
			const answer = await callRest(serve.url, CreateWorkload, { name: 'bad-replicas', url: remote.url, scaling_config: { replicas } });
			expect(answer.status).toBe(400);
			expect(JSON.stringify(answer.body)).toContain('scaling_config.replicas');
		}
	});

	it('refuse instances of a remote server, naming the field', async () => {
		const answer = await callRest(serve.url, CreateWorkload, { name: 'remote-instances', url: remote.url, scaling_config: { backend_replicas: 2 } });
		expect(answer.status).toBe(400);
		expect(JSON.stringify(answer.body)).toContain('scaling_config.backend_replicas');
	});

	it('refuse a session_redis address outside host:port, so nothing from a request reaches haproxy.cfg', async () => {
		// An attacker's addresses: a newline carrying HAProxy directives (an admin socket anyone may
		// write), spaces, a quote, a comment, an unclosed bracket, a port out of range.
		const crafted = [
			`redis\n\tstats socket /tmp/hangar-pwn.sock mode 777 level admin\n#:6379`,
			'127.0.0.1 check:6379',
			'redis"host:6379',
			'redis#x:6379',
			'[::1:6379',
			'[not-v6]:6379',
			'redis:0',
			'redis:65536',
			' redis:6379',
		];
		for (const address of crafted) {
			const answer = await callRest(serve.url, CreateWorkload, { name: 'crafted-redis', url: remote.url, scaling_config: { replicas: 2, session_redis: { address } } });
			expect(answer.status, address).toBe(400);
			expect(JSON.stringify(answer.body)).toContain('scaling_config.session_redis.address');
		}
		await expect(readFile(balancerConfigOf('crafted-redis'), 'utf8')).rejects.toThrow(/ENOENT/);
		expect(() => renderConfig({ name: 'w', host: '127.0.0.1', port: 8080, replicaPorts: [1, 2], sessionRedis: { host: 'r\n\tstats socket /tmp/x', port: 6379 } })).toThrow(/not a host/);
		expect(() => renderConfig({ name: 'w\nlisten x', host: '127.0.0.1', port: 8080, replicaPorts: [1, 2] })).toThrow(/not a name/);
		expect(renderConfig({ name: 'w', host: '127.0.0.1', port: 8080, replicaPorts: [1, 2], sessionRedis: { host: '::1', port: 6379 } })).toContain('server redis [::1]:6379 ');
	});

	it('need HAProxy, and say how to get it', async () => {
		const result = await runHangar(['run', remote.url, '--name', 'no-balancer', '--replicas', '2'], { ...home.env, HANGAR_HAPROXY: join(home.path, 'no-haproxy') });
		expect(result.code).not.toBe(0);
		expect(result.stderr).toMatch(/needs HAProxy.*install it/);
	});
});
