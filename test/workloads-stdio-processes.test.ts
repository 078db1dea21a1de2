/**
 * The server processes of a stdio workload under real use, with the official SDK client: a
 * server that writes a line without end (a fixture script, the one fault a real server does not
 * produce on demand) has its process ended, its calls answered with why, and the next client a
 * fresh process; on a process two clients share, each hears only its own logs.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, EVERYTHING, textOf, waitFor } from './fixtures/workloads/helpers.js';
import { startHangar, type Hangar, type Workload } from './support/proxyTargets.js';

const run = promisify(execFile);
let hangar: Hangar;

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
