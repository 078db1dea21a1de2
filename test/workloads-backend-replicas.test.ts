/**
 * Several instances of an HTTP server (`scaling_config.backend_replicas`) on real Docker with
 * the everything server: one container per instance under the workload's labels, sessions
 * spread across them (each instance tells who it is by its HOSTNAME, the container's id), an
 * instance killed by the engine replaced while the other sessions go on, the session that was
 * on it ended with an error its client can act on (and a new session served), and stop and
 * delete reaching every container. With a server that speaks 2026-07-28: a client's calls
 * spread one by one, and none lost when an instance is killed. With a stdio server: clients of
 * one handshake spread over N server processes in its container, and an attacker's requests
 * bounded in the processes they start.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeleteWorkloads, GetWorkload, GetWorkloadLogs, ListWorkloads, RestartWorkload, StopWorkloads } from '../protocol/protocol.workloads.js';
import { startRedis, type RedisServer } from './fixtures/security/redis.js';
import { createWorkload, deleteAllWorkloads, INITIALIZE, postMcp, type Workload } from './fixtures/security/support.js';
import { connect, EVERYTHING, textOf, waitFor } from './fixtures/workloads/helpers.js';
import { connectModern } from './support/mcpClients.js';
import { MODERN } from './support/proxyTargets.js';
import { createTestHome, type TestHome } from './support/home.js';
import { startServe, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';

const run = promisify(execFile);

let home: TestHome;
let serve: ServeProcess;

beforeAll(async () => {
	home = await createTestHome();
	serve = await startServe(home.env);
}, 60_000);

afterAll(async () => {
	if (serve) await deleteAllWorkloads(serve.url);
	await serve?.stop();
	await home?.dispose();
}, 120_000);

interface Instance {
	readonly id: string;
	readonly name: string;
	readonly replica: string;
	readonly state: string;
}

/** The workload's containers as the engine lists them, by their labels. */
async function containersOf(name: string): Promise<Instance[]> {
	const { stdout } = await run('docker', ['ps', '-a', '--no-trunc', '--filter', `label=hangar.name=${name}`, '--format', '{{.ID}} {{.Names}} {{.Label "hangar.replica"}} {{.State}}']);
	return stdout
		.trim()
		.split('\n')
		.filter(Boolean)
		.map((line) => {
			const [id, containerName, replica, state] = line.split(' ');
			return { id: id!, name: containerName!, replica: replica!, state: state! };
		})
		.sort((a, b) => a.replica.localeCompare(b.replica));
}

/** The server processes running in the workload's one container (the main one runs under the engine's init, not counted). */
async function serverProcessesOf(name: string): Promise<number> {
	const [container] = await containersOf(name);
	const { stdout } = await run('docker', ['top', container!.id, '-eo', 'pid,args']);
	return stdout.split('\n').filter((line) => /^\s*\d+\s+node\s.*server-everything/.test(line)).length;
}

/** The container (short id) of the instance that serves `client`'s session: the server's HOSTNAME. */
async function instanceOf(callTool: (name: string, args: Record<string, unknown>) => Promise<unknown>): Promise<string> {
	const env = JSON.parse(textOf(await callTool('get-env', {}))) as Record<string, string>;
	return env.HOSTNAME!;
}

const callerOf = (client: Client) => (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
const echoes = async (client: Client, message: string) => textOf(await client.callTool({ name: 'echo', arguments: { message } }));

describe('backend_replicas: several server containers behind one proxy', { timeout: 180_000 }, () => {
	/** server-everything over Streamable HTTP in three instances. */
	const createInstances = (name: string) =>
		createWorkload(serve.url, { name, image: EVERYTHING, transport: 'streamable-http', target_port: 3001, cmd_arguments: ['streamableHttp'], scaling_config: { backend_replicas: 3 } });
	let workload: Workload;
	beforeAll(async () => {
		workload = await createInstances('instances');
	}, 120_000);

	it('run one container per instance under the workload\'s labels, listed as one workload', async () => {
		const containers = await containersOf(workload.name);
		expect(containers.map(({ replica, state }) => [replica, state])).toEqual([
			['1', 'running'],
			['2', 'running'],
			['3', 'running'],
		]);
		const first = containers[0]!.name;
		expect(containers.map(({ name }) => name)).toEqual([first, `${first}-2`, `${first}-3`]);
		const { workloads } = (await callRest(serve.url, ListWorkloads, {})).body as { workloads: Array<{ name: string; status: string }> };
		expect(workloads.filter(({ name }) => name === workload.name)).toEqual([expect.objectContaining({ status: 'running' })]);
	});

	it('give every instance\'s output as one log, in time, each line after its container\'s name', async () => {
		const names = (await containersOf(workload.name)).map(({ name }) => name);
		// Each instance says it listens once it has started.
		const log = await waitFor(async () => {
			const { status, body } = await callRest(serve.url, GetWorkloadLogs, { name: workload.name });
			expect(status).toBe(200);
			const text = body as string;
			return names.every((name) => text.includes(`${name.padEnd(names.at(-1)!.length)} | MCP Streamable HTTP Server listening on port 3001\n`)) ? text : undefined;
		}, 'every instance\'s start in the log', 60_000);
		// Every line is an instance's, without the engine's timestamps (the merging is test/workloads-logs.test.ts's).
		for (const line of log.split('\n').filter(Boolean)) expect(line).toMatch(new RegExp(`^(${names.join('|')}) *\\| (?!\\d{4}-)`));
	});

	it('spread sessions across the instances, each session staying on its own', async () => {
		const containers = await containersOf(workload.name);
		const clients = await Promise.all([0, 1, 2].map(() => connect(workload.url, 'streamable-http')));
		try {
			const hosts: string[] = [];
			for (const client of clients) hosts.push(await instanceOf(callerOf(client)));
			expect(new Set(hosts).size).toBe(3);
			for (const host of hosts) expect(containers.some(({ id }) => id.startsWith(host))).toBe(true);
			// A session's requests all go to its instance.
			for (const [at, client] of clients.entries()) expect(await instanceOf(callerOf(client))).toBe(hosts[at]);
		} finally {
			await Promise.all(clients.map((client) => client.close()));
		}
	});

	it('spread 2026-07-28 clients across the instances too', async () => {
		const containers = await containersOf(workload.name);
		const hosts = new Set<string>();
		// The proxy keeps one upstream session per 2026-07-28 caller and set of capabilities that
		// change what the server may send (an `experimental` key it does not advertise is not one):
		// three sets, three sessions.
		for (const capabilities of [{}, { sampling: {} }, { elicitation: {} }]) {
			const client = await connectModern(workload.url, capabilities);
			try {
				hosts.add(await instanceOf((name, args) => client.callTool({ name, arguments: args })));
			} finally {
				await client.close();
			}
		}
		expect(hosts.size).toBeGreaterThan(1);
		for (const host of hosts) expect(containers.some(({ id }) => id.startsWith(host))).toBe(true);
	});

	it('replace an instance the engine killed; its session ends with an error, the others go on', async () => {
		const clients = await Promise.all([0, 1, 2].map(() => connect(workload.url, 'streamable-http')));
		try {
			const hosts: string[] = [];
			for (const client of clients) hosts.push(await instanceOf(callerOf(client)));
			const victim = (await containersOf(workload.name)).find(({ id }) => id.startsWith(hosts[1]!))!;
			const { stdout: startedBefore } = await run('docker', ['inspect', '-f', '{{.State.StartedAt}}', victim.id]);
			await run('docker', ['kill', victim.id]);

			// The other sessions are not touched.
			expect(await echoes(clients[0]!, 'still here')).toBe('Echo: still here');
			expect(await echoes(clients[2]!, 'still here')).toBe('Echo: still here');

			// The session on the dead instance: an error (never a hang), then the session is gone (404).
			await expect(echoes(clients[1]!, 'lost')).rejects.toThrow(/cannot reach the MCP server/);
			await expect(echoes(clients[1]!, 'lost again')).rejects.toThrow(/404|Session not found/i);

			// A new session is served at once, by an instance that answers.
			const fresh = await connect(workload.url, 'streamable-http');
			expect(await echoes(fresh, 'fresh')).toBe('Echo: fresh');
			await fresh.close();

			// The killed container is started again (its restart policy, unless-stopped, says it comes back).
			await waitFor(async () => {
				const { stdout } = await run('docker', ['inspect', '-f', '{{.State.Status}} {{.State.StartedAt}}', victim.id]);
				const [status, startedAt] = stdout.trim().split(' ');
				return status === 'running' && startedAt !== startedBefore.trim();
			}, 'the killed instance running again', 60_000);
			// And takes sessions again: three new sessions land on three instances.
			const again = await Promise.all([0, 1, 2].map(() => connect(workload.url, 'streamable-http')));
			try {
				await waitFor(async () => {
					const seen = new Set<string>();
					for (const client of again) seen.add(await instanceOf(callerOf(client)));
					if (seen.size === 3) return true;
					// Until the proxy found the instance answering again, sessions went to the others: try new ones.
					await Promise.all(again.splice(0).map((client) => client.close()));
					again.push(...(await Promise.all([0, 1, 2].map(() => connect(workload.url, 'streamable-http')))));
					return false;
				}, 'sessions on all three instances again', 30_000);
			} finally {
				await Promise.all(again.map((client) => client.close()));
			}
		} finally {
			await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
		}
	});

	it('restart every instance with the workload', async () => {
		const before = await containersOf(workload.name);
		const started = async (id: string) => (await run('docker', ['inspect', '-f', '{{.State.StartedAt}}', id])).stdout.trim();
		const startedBefore = await Promise.all(before.map(({ id }) => started(id)));
		expect((await callRest(serve.url, RestartWorkload, { name: workload.name })).status).toBeLessThan(300);
		// Each container stopped and started again (the same containers), and the workload running.
		await waitFor(async () => {
			const after = await containersOf(workload.name);
			if (after.map(({ id, state }) => `${id} ${state}`).join() !== before.map(({ id }) => `${id} running`).join()) return false;
			const restarted = (await Promise.all(after.map(({ id }) => started(id)))).every((at, index) => at !== startedBefore[index]);
			const { workloads } = (await callRest(serve.url, ListWorkloads, {})).body as { workloads: Array<{ name: string; status: string }> };
			return restarted && workloads.some(({ name, status }) => name === workload.name && status === 'running');
		}, 'every instance restarted and the workload running', 60_000);
		const client = await connect(workload.url, 'streamable-http');
		expect(await echoes(client, 'restarted')).toBe('Echo: restarted');
		await client.close();
	});

	it('stop every instance with the workload, and remove every one with it', async () => {
		// A workload of its own: the other tests of this block use theirs, in whatever order they run.
		const ending = await createInstances('ending');
		expect((await callRest(serve.url, StopWorkloads, { names: [ending.name] })).status).toBeLessThan(300);
		await waitFor(async () => (await containersOf(ending.name)).every(({ state }) => state === 'exited'), 'every instance stopped', 60_000);
		expect(await containersOf(ending.name)).toHaveLength(3);
		expect((await callRest(serve.url, DeleteWorkloads, { names: [ending.name] })).status).toBeLessThan(300);
		await waitFor(async () => (await containersOf(ending.name)).length === 0, 'every instance removed', 60_000);
	});
});

describe('backend_replicas with a server that speaks 2026-07-28', { timeout: 180_000 }, () => {
	let workload: Workload;
	beforeAll(async () => {
		workload = await createWorkload(serve.url, { name: 'stateless', image: MODERN, transport: 'streamable-http', target_port: 3001, scaling_config: { backend_replicas: 2 } });
	}, 120_000);
	afterAll(async () => {
		if (workload) await callRest(serve.url, DeleteWorkloads, { names: [workload.name] });
	});

	it('spread a 2026-07-28 client\'s calls across the instances one by one (each instance counts its own bumps)', async () => {
		const client = await connectModern(workload.url);
		try {
			const counts: number[] = [];
			for (let call = 0; call < 6; call++) counts.push(Number(/counter is (\d+)/.exec(textOf(await client.callTool({ name: 'bump', arguments: {} })))?.[1]));
			expect(counts.every(Number.isInteger)).toBe(true);
			// On one instance the counter would have reached 6.
			expect(Math.max(...counts)).toBeLessThan(6);
		} finally {
			await client.close();
		}
	});

	it('lose no call of a 2026-07-28 client when an instance is killed: a refused request goes to the other', async () => {
		const client = await connectModern(workload.url);
		try {
			const call = async (message: string) => textOf(await client.callTool({ name: 'echo', arguments: { message } }));
			expect(await call('before')).toBe('Echo: before');
			// Each instance in turn: whichever the client's calls were on is killed once.
			for (const victim of await containersOf(workload.name)) {
				const { stdout: startedBefore } = await run('docker', ['inspect', '-f', '{{.State.StartedAt}}', victim.id]);
				await run('docker', ['kill', victim.id]);
				for (let at = 0; at < 4; at++) expect(await call(`${victim.replica}/${at}`)).toBe(`Echo: ${victim.replica}/${at}`);
				await waitFor(async () => {
					const { stdout } = await run('docker', ['inspect', '-f', '{{.State.Status}} {{.State.StartedAt}}', victim.id]);
					const [status, startedAt] = stdout.trim().split(' ');
					return status === 'running' && startedAt !== startedBefore.trim();
				}, `instance ${victim.replica} running again`, 60_000);
				// Running is not yet listening: until its server answers, killing the other instance
				// would leave none to take the calls (on a loaded machine, node takes seconds to start).
				const { stdout: published } = await run('docker', ['port', victim.id, '3001/tcp']);
				const address = published.trim().split('\n')[0]!;
				await waitFor(
					async () => (await fetch(`http://${address}/mcp`, { method: 'POST' }).then(() => true, () => false)),
					`instance ${victim.replica} answering again`,
					60_000,
				);
			}
		} finally {
			await client.close();
		}
	});
});

describe('backend_replicas with a stdio server: several server processes per handshake', { timeout: 180_000 }, () => {
	let workload: Workload;
	beforeAll(async () => {
		workload = await createWorkload(serve.url, { name: 'processes', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], scaling_config: { backend_replicas: 2 } });
	}, 120_000);
	afterAll(async () => {
		if (workload) await callRest(serve.url, DeleteWorkloads, { names: [workload.name] });
	});

	const serverProcesses = () => serverProcessesOf(workload.name);

	it('give clients with the same handshake up to N processes, then share them in turn', async () => {
		expect(await containersOf(workload.name)).toHaveLength(1);
		const clients: Client[] = [];
		try {
			clients.push(await connect(workload.url, 'streamable-http'));
			expect(await serverProcesses()).toBe(1);
			clients.push(await connect(workload.url, 'streamable-http'));
			expect(await serverProcesses()).toBe(2);
			clients.push(await connect(workload.url, 'streamable-http'));
			expect(await serverProcesses()).toBe(2);
			for (const [at, client] of clients.entries()) expect(await echoes(client, `c${at}`)).toBe(`Echo: c${at}`);
		} finally {
			await Promise.all(clients.map((client) => client.close()));
		}
	});
});

describe('backend_replicas behind proxy replicas sharing sessions through Redis', { timeout: 180_000 }, () => {
	let redis: RedisServer;
	let workload: Workload;
	beforeAll(async () => {
		redis = await startRedis();
		workload = await createWorkload(serve.url, {
			name: 'both',
			image: EVERYTHING,
			transport: 'streamable-http',
			target_port: 3001,
			cmd_arguments: ['streamableHttp'],
			scaling_config: { replicas: 2, backend_replicas: 2, session_redis: { address: redis.address } },
		});
	}, 120_000);
	afterAll(async () => {
		if (workload) await callRest(serve.url, DeleteWorkloads, { names: [workload.name] });
		await redis?.stop();
	});

	it('serve a session on its own instance whichever proxy replica takes its request', async () => {
		const clients = await Promise.all([0, 1].map(() => connect(workload.url, 'streamable-http')));
		try {
			for (const client of clients) {
				// HAProxy sends the session's requests to both proxies in turn; the one that adopts it goes to the same instance.
				const hosts = new Set<string>();
				for (let call = 0; call < 4; call++) hosts.add(await instanceOf(callerOf(client)));
				expect(hosts.size).toBe(1);
			}
		} finally {
			await Promise.all(clients.map((client) => client.close()));
		}
	});
});

describe('the server processes of a stdio server, bounded against an attacker', { timeout: 180_000 }, () => {
	let shared: Workload;
	let isolated: Workload;
	beforeAll(async () => {
		[shared, isolated] = await Promise.all([
			createWorkload(serve.url, { name: 'bounded', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'] }),
			createWorkload(serve.url, { name: 'isolated', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], session_mode: 'isolated', max_server_processes: 3 }),
		]);
	}, 120_000);

	/** One 2026-07-28 request, as raw JSON-RPC, from a client that declared `capabilities`. */
	const ask2026 = async (url: string, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown>) => {
		const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': capabilities };
		const headers: Record<string, string> = { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...(params.name ? { 'Mcp-Name': String(params.name) } : {}) };
		return (await postMcp(url, { id: 1, method, params: { ...params, _meta: meta } }, headers)).body as { result?: Record<string, unknown>; error?: { code: number; message: string } };
	};

	it('25 2026-07-28 requests, each with an experimental key of its own, start no server process', async () => {
		const before = await serverProcessesOf(shared.name);
		for (let at = 0; at < 25; at++) {
			const answer = await ask2026(shared.url, 'tools/call', { name: 'echo', arguments: { message: `x${at}` } }, { experimental: { [`attacker-${at}`]: {} } });
			expect(textOf(answer.result), JSON.stringify(answer)).toBe(`Echo: x${at}`);
		}
		expect(await serverProcessesOf(shared.name)).toBeLessThanOrEqual(Math.max(before, 1));
	});

	it('capability sets that do matter: a caller gets at most 16 sessions, then a clear JSON-RPC error', async () => {
		// A workload of its own: the sessions it ends with are this caller's for their lifetime.
		const exhausted = await createWorkload(serve.url, { name: 'exhausted', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'] });
		const answers = [];
		for (let at = 0; at < 20; at++) answers.push(await ask2026(exhausted.url, 'tools/list', {}, { sampling: { [`attacker-${at}`]: {} } }));
		// A caller that may be asked things holds a shared session and one per call of its set (pooled): both count.
		const served = answers.findIndex((answer) => answer.result === undefined);
		expect(served, JSON.stringify(answers.map((answer) => answer.error ?? Object.keys(answer)))).toBeGreaterThanOrEqual(3);
		expect(served).toBeLessThan(20);
		for (const answer of answers.slice(served)) {
			expect(answer.error?.code).toBe(-32050);
			// The caller's sessions, or the container's processes (a call that may be asked things has one of its own).
			expect(answer.error?.message).toMatch(/Too many sessions: this caller has 16 sessions open|max_server_processes/);
		}
		expect(await serverProcessesOf(exhausted.name)).toBeLessThanOrEqual(1 + 16);
	});

	it('session_mode isolated: at most max_server_processes processes; past it an idle one is reclaimed, and a session refused only while all are in use', async () => {
		const detail = (await callRest(serve.url, GetWorkload, { name: isolated.name })).body as { max_server_processes?: number };
		expect(detail.max_server_processes).toBe(3);
		// The container's own process counts: two sessions of their own fit beside it, each in use while its client holds its event stream.
		const streams = new AbortController();
		try {
			const opened: string[] = [];
			for (let at = 0; at < 2; at++) {
				const answer = await postMcp(isolated.url, INITIALIZE);
				expect(answer.status, JSON.stringify(answer.body)).toBe(200);
				const session = answer.headers.get('mcp-session-id')!;
				const stream = await fetch(isolated.url, { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': session }, signal: streams.signal });
				expect(stream.status).toBe(200);
				opened.push(session);
			}
			for (let at = 0; at < 3; at++) {
				const refused = (await postMcp(isolated.url, INITIALIZE)).body as { error?: { code: number; message: string } };
				expect(refused.error?.code).toBe(-32050);
				expect(refused.error?.message).toMatch(/max_server_processes.*in use/);
			}
			expect(await serverProcessesOf(isolated.name)).toBe(3);
			// Their clients gone without ending the sessions, the idle processes make room for new sessions.
			streams.abort();
			await waitFor(async () => 'result' in ((await postMcp(isolated.url, INITIALIZE)).body as object), 'a session once the others were idle', 30_000);
			expect('result' in ((await postMcp(isolated.url, INITIALIZE)).body as object)).toBe(true);
			// A reclaimed process ends once its stdin is closed: the count comes back within the bound.
			await waitFor(async () => (await serverProcessesOf(isolated.name)) <= 3, 'the reclaimed processes to end', 30_000);
		} finally {
			streams.abort();
		}
	});

});
