/**
 * No call lost behind the load balancer: a stdio server's workload as two replicas behind a
 * real HAProxy in round robin, sessions shared through a real Redis, and thousands of calls
 * from clients that keep opening new sessions between their calls, over Streamable HTTP and
 * legacy SSE. Every answer is counted, and every one that is not the call's result is named.
 *
 * A new Streamable HTTP session reaches the replica that did not open it within its first
 * requests (round robin), and the SDK client sends its first calls while its GET stream is
 * still being opened: that replica restores the session with requests of it already waiting.
 * Every other session declares capabilities of its own, so that each replica starts a server
 * process for it (a stdio server is initialised once per handshake): a restore then waits for one.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisServer } from './fixtures/security/redis.js';
import { createWorkload, deleteAllWorkloads, type Workload } from './fixtures/security/support.js';
import { EVERYTHING, textOf, waitFor } from './fixtures/workloads/helpers.js';
import { connectLegacy, type ClientTransport } from './support/mcpClients.js';
import { createTestHome, type TestHome } from './support/home.js';
import { startServe, type ServeProcess } from './support/processes.js';

/** Clients calling at once, each opening its sessions one after the other. */
const CLIENTS = 6;
/** Calls per session, sent two at a time. */
const CALLS_PER_SESSION = 8;

let home: TestHome;
let serve: ServeProcess;
let redis: RedisServer;
let workload: Workload;

beforeAll(async () => {
	home = await createTestHome();
	[serve, redis] = await Promise.all([startServe(home.env), startRedis()]);
	workload = await createWorkload(serve.url, { name: 'stress', image: EVERYTHING, transport: 'stdio', scaling_config: { replicas: 2, session_redis: { address: redis.address } } });
	const config = await readFile(join(home.path, 'data', 'proxies', `${workload.name}.haproxy.cfg`), 'utf8');
	const ports = [...config.matchAll(/^\s*server r\d+ 127\.0\.0\.1:(\d+)/gm)].map((match) => Number(match[1]));
	expect(ports).toHaveLength(2);
	for (const port of ports) {
		await waitFor(async () => ((await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as { backend: string }).backend === 'connected', `the replica on ${port} connected`);
	}
}, 120_000);

afterAll(async () => {
	if (serve) await deleteAllWorkloads(serve.url);
	await Promise.allSettled([serve?.stop(), redis?.stop()]);
	await home?.dispose();
}, 120_000);

/** What every call and session opening answered that was not its result, by answer, with how often. */
class Tally {
	answered = 0;
	readonly wrong: Record<string, number> = {};

	async call(client: Client, message: string): Promise<void> {
		const answer = await client.callTool({ name: 'echo', arguments: { message } }).then(
			(result) => (textOf(result) === `Echo: ${message}` ? undefined : `result ${JSON.stringify(result)}`),
			(error: Error) => `error ${error.message}`,
		);
		this.answered++;
		if (answer !== undefined) this.failed(answer.replaceAll(message, 'MESSAGE'));
	}

	failed(answer: string): void {
		this.wrong[answer] = (this.wrong[answer] ?? 0) + 1;
	}
}

/** `sessions` sessions from each of CLIENTS clients at once, each session's calls two at a time. */
async function stress(transport: ClientTransport, sessions: number): Promise<Tally> {
	const tally = new Tally();
	const url = transport === 'sse' ? `${new URL(workload.url).origin}/sse` : workload.url;
	await Promise.all(
		Array.from({ length: CLIENTS }, async (_, caller) => {
			for (let session = 0; session < sessions; session++) {
				const capabilities = session % 2 === 0 ? {} : { experimental: { [`stress-${caller}`]: {} } };
				const opened = await connectLegacy(url, { revision: transport === 'sse' ? '2024-11-05' : '2025-11-25', transport, capabilities }).catch((error: Error) => {
					tally.failed(`cannot open a session: ${error.message}`);
				});
				if (!opened) continue;
				const { client } = opened;
				for (let call = 0; call < CALLS_PER_SESSION; call += 2) {
					await Promise.all([call, call + 1].map((at) => tally.call(client, `${caller}/${session}/${at}`)));
				}
				if (transport === 'streamable-http') await (client.transport as unknown as { terminateSession(): Promise<void> }).terminateSession();
				await client.close();
			}
		}),
	);
	return tally;
}

describe('two replicas behind HAProxy in round robin, sessions shared through Redis', { timeout: 600_000 }, () => {
	it.each([
		['Streamable HTTP', 'streamable-http', 50],
		['legacy SSE', 'sse', 25],
	] as const)('answer every call over %s with its result, new sessions opened between the calls', async (_, transport, sessions) => {
		const tally = await stress(transport, sessions);
		expect(tally.wrong).toEqual({});
		expect(tally.answered).toBe(CLIENTS * sessions * CALLS_PER_SESSION);
	});
});
