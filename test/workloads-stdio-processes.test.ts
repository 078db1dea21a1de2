/**
 * The server processes of a stdio workload under real use, with the official SDK client: a
 * server that writes a line without end (a fixture script, the one fault a real server does not
 * produce on demand) has its process ended, its calls answered with why, and the next client a
 * fresh process; on a process two clients share, each hears only its own logs; clients that come
 * and go with capability sets of their own have idle processes reclaimed, refused only when
 * every process is in use, and idle processes end by themselves well before their sessions.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetWorkloadStats } from '../protocol/protocol.workloads.js';
import { connect, EVERYTHING, textOf, waitFor } from './fixtures/workloads/helpers.js';
import { runHangar } from './support/processes.js';
import { startHangar, type Hangar, type Workload } from './support/proxyTargets.js';
import { callRest } from './support/rest.js';

const run = promisify(execFile);
let hangar: Hangar;

/** The server processes running in the workload's container. */
async function serverProcesses(workload: Workload): Promise<number> {
	const { stdout: container } = await run('docker', ['ps', '-q', '--filter', `label=hangar.name=${workload.name}`]);
	const { stdout } = await run('docker', ['top', container.trim(), '-eo', 'pid,args']);
	return stdout.split('\n').filter((line) => /^\s*\d+\s+node\s.*server-everything/.test(line)).length;
}

/** When the workload's container last started, as the engine says. */
async function startedAt(workload: Workload): Promise<string> {
	const { stdout: container } = await run('docker', ['ps', '-q', '--filter', `label=hangar.name=${workload.name}`]);
	return (await run('docker', ['inspect', '-f', '{{.State.StartedAt}}', container.trim()])).stdout.trim();
}

beforeAll(async () => {
	hangar = await startHangar();
}, 60_000);

afterAll(async () => {
	await hangar?.dispose();
}, 120_000);

describe('a stdio server that writes a line without end', { timeout: 120_000 }, () => {
	const fixtures = fileURLToPath(new URL('./fixtures/workloads/', import.meta.url));
	let workload: Workload;
	beforeAll(async () => {
		workload = await hangar.create({
			name: 'endless',
			image: 'hangar-test/node-base:1',
			transport: 'stdio',
			cmd_arguments: ['node', '/fixtures/endless-line-server.mjs'],
			volumes: [`${fixtures}:/fixtures:ro`],
			// Before the bound, a flood was answered by this timeout alone, if the proxy lived that long.
			request_timeout: 15,
		});
	}, 120_000);

	const echo = async (client: Awaited<ReturnType<typeof connect>>) => textOf(await client.callTool({ name: 'echo', arguments: {} }));

	it.each([
		['the container\'s own process', {}],
		['a process started beside it', { experimental: { beside: {} } }],
	])('%s: ended, the call in flight answered with why, the next client served by a fresh process', async (_, capabilities) => {
		const flooded = await connect(workload.url, 'streamable-http', capabilities);
		const before = await echo(flooded);
		const started = await startedAt(workload);
		await expect(flooded.callTool({ name: 'flood', arguments: {} })).rejects.toThrow(/wrote a line of over 4194304 characters.*the process was ended/);
		await flooded.close().catch(() => undefined);
		const next = await connect(workload.url, 'streamable-http', capabilities);
		try {
			expect(await echo(next)).toMatch(/^echo from \d+$/);
			// A process beside the container's own is run anew (another pid); the container's own, with a restart of the container.
			if (Object.keys(capabilities).length) expect(await echo(next)).not.toBe(before);
			else expect(await startedAt(workload)).not.toBe(started);
		} finally {
			await next.close();
		}
	});
});

describe('a stdio server two clients share', { timeout: 180_000 }, () => {
	let workload: Workload;
	beforeAll(async () => {
		workload = await hangar.create({ name: 'shared', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'] });
	}, 120_000);

	it('sends a client busy with its own call none of the logs another client asked for', async () => {
		const asking = await connect(workload.url, 'streamable-http');
		const busy = await connect(workload.url, 'streamable-http');
		const logs = { asking: [] as string[], busy: [] as string[] };
		asking.setNotificationHandler(LoggingMessageNotificationSchema, (message) => void logs.asking.push(String(message.params.data)));
		busy.setNotificationHandler(LoggingMessageNotificationSchema, (message) => void logs.busy.push(String(message.params.data)));
		const stop = new AbortController();
		try {
			await asking.setLoggingLevel('debug');
			// From now on the server logs every 5 s for the asking client, calls in flight or not.
			await asking.callTool({ name: 'toggle-simulated-logging', arguments: {} });
			let started!: () => void;
			const inFlight = new Promise<void>((resolve) => (started = resolve));
			const call = busy.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 120, steps: 120 } }, undefined, { signal: stop.signal, onprogress: () => started() });
			call.catch(() => undefined); // cancelled below
			await inFlight;
			// Two more of the asking client's logs while the busy client's call is the only one in flight.
			const heard = logs.asking.length;
			await waitFor(async () => logs.asking.length + logs.busy.length >= heard + 2, 'two logs during the busy client\'s call', 60_000);
			expect(logs.busy).toEqual([]);
			expect(logs.asking.length).toBeGreaterThanOrEqual(heard + 2);
		} finally {
			stop.abort();
			await asking.callTool({ name: 'toggle-simulated-logging', arguments: {} });
			await Promise.all([asking.close(), busy.close()]);
		}
	});
});

describe('the server processes of a shared stdio server', { timeout: 180_000 }, () => {
	/** A capability set of its own: a process of its own beside the container's. */
	const own = (name: string) => ({ experimental: { [name]: {} } });

	it('are reclaimed when idle, and refused only when all are in use, with why', async () => {
		const workload = await hangar.create({ name: 'reclaim', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], max_server_processes: 3 });
		await (await connect(workload.url, 'streamable-http')).close(); // the container's own process, for the default set
		// Clients that come and go, each with a set of its own, their sessions left behind (no DELETE).
		for (let at = 0; at < 5; at++) {
			const client = await connect(workload.url, 'streamable-http', own(`come-and-go-${at}`));
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: `${at}` } }))).toBe(`Echo: ${at}`);
			await client.close();
		}
		expect(await serverProcesses(workload)).toBeLessThanOrEqual(3);
		// Two clients whose calls wait for their answer hold the two processes beside the container's own.
		let answer!: () => void;
		const answered = new Promise<void>((resolve) => (answer = resolve));
		const holders = await Promise.all(['held-1', 'held-2'].map((name) => connect(workload.url, 'streamable-http', { elicitation: {}, ...own(name) })));
		try {
			const asked = holders.map(
				(holder) =>
					new Promise<void>((resolve) =>
						holder.setRequestHandler(ElicitRequestSchema, async () => {
							resolve();
							await answered;
							return { action: 'decline' };
						}),
					),
			);
			const calls = holders.map((holder) => holder.callTool({ name: 'trigger-elicitation-request', arguments: {} }));
			await Promise.all(asked);
			await expect(connect(workload.url, 'streamable-http', own('refused'))).rejects.toThrow(/-32050.*all 3 server processes.*max_server_processes.*in use/);
			// The statistics and `hangar info` count them: the container's own process has no client now.
			const stats = (await callRest(hangar.serve.url, GetWorkloadStats, { name: workload.name })).body as { server_processes?: unknown };
			expect(stats.server_processes).toEqual({ running: 3, in_use: 2, max: 3 });
			expect((await runHangar(['info', workload.name], hangar.home.env)).stdout).toMatch(/^processes:\s+3 running, 2 in use \(at most 3\)$/m);
			answer();
			await Promise.all(calls);
			// A client still connected holds its event stream open, and its process in use, with no call in flight: one goes away.
			await holders[0]!.close();
			const served = await waitFor(() => connect(workload.url, 'streamable-http', own('after')), 'a process once its client went away');
			expect(textOf(await served.callTool({ name: 'echo', arguments: { message: 'after' } }))).toBe('Echo: after');
			await served.close();
		} finally {
			answer();
			await Promise.all(holders.map((holder) => holder.close()));
		}
	});

	it('end once idle for server_process_idle_timeout, however long their sessions live', async () => {
		const workload = await hangar.create({ name: 'expiring', image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], server_process_idle_timeout: 1 });
		await (await connect(workload.url, 'streamable-http')).close();
		const before = await serverProcesses(workload);
		const client = await connect(workload.url, 'streamable-http', own('expiring'));
		expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'once' } }))).toBe('Echo: once');
		expect(await serverProcesses(workload)).toBe(before + 1);
		await client.close(); // its session stays behind
		await waitFor(async () => (await serverProcesses(workload)) === before, 'the idle process to end', 60_000);
	});
});
