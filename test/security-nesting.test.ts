/**
 * Deeply nested JSON, sent as an attacker would, to every door: 400,000 nested arrays and
 * 100,000 nested objects to REST, to the daemon and to a workload's proxy. Each refuses it with
 * 400 (REST, the proxy) or a JSON-RPC parse error (daemon, proxy) naming the limit, and stays up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListGroups } from '../protocol/protocol.groups.js';
import { MAX_JSON_DEPTH } from '../server/json.js';
import { createWorkload, deleteAllWorkloads, INITIALIZE, postMcp, type Workload } from './fixtures/security/support.js';
import { startRemoteServer, type RemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { startServe, type ServeProcess } from './support/processes.js';
import { spawnRawDaemon, type RawDaemon } from './support/raw-daemon.js';

const ARRAYS = `${'['.repeat(400_000)}${']'.repeat(400_000)}`;
const OBJECTS = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
/** Deep, inside an otherwise ordinary message. */
const inside = (deep: string) => `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":${deep}}}}`;
const LIMIT = String(MAX_JSON_DEPTH);

let home: TestHome;
let serve: ServeProcess;
let remote: RemoteServer;

beforeAll(async () => {
	home = await createTestHome();
	[serve, remote] = await Promise.all([startServe(home.env), startRemoteServer('streamable')]);
}, 60_000);

afterAll(async () => {
	await deleteAllWorkloads(serve.url);
	remote?.stop();
	await serve?.stop();
	await home?.dispose();
}, 60_000);

describe('deeply nested JSON', { timeout: 60_000 }, () => {
	it('is a 400 naming the limit over REST, and the server stays up', async () => {
		for (const deep of [ARRAYS, OBJECTS, `{"name":"deep","env_vars":{"A":${OBJECTS}}}`]) {
			const response = await fetch(`${serve.url}/api/v1beta/workloads`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: deep });
			expect(response.status).toBe(400);
			expect(await response.text()).toContain(`deeper than ${LIMIT} levels`);
		}
		expect((await fetch(`${serve.url}/api/v1beta/groups`)).status).toBe(200);
	});

	it('is a parse error naming the limit over the daemon\'s JSON-RPC, and the daemon stays up', async () => {
		const daemon: RawDaemon = spawnRawDaemon(home.env);
		try {
			daemon.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: process.pid, capabilities: {} } });
			await daemon.next((message) => message.id === 1);
			daemon.send({ jsonrpc: '2.0', method: 'initialized', params: {} });
			for (const deep of [ARRAYS, inside(OBJECTS)]) {
				daemon.write(Buffer.concat([Buffer.from(`Content-Length: ${Buffer.byteLength(deep)}\r\n\r\n`), Buffer.from(deep)]));
				const refusal = await daemon.next((message) => message.id === null && (message.error as { code?: number } | undefined)?.code === -32700, 20_000);
				expect((refusal.error as { message: string }).message).toContain(`deeper than ${LIMIT} levels`);
			}
			daemon.send({ jsonrpc: '2.0', id: 2, method: ListGroups.method, params: {} });
			expect(await daemon.next((message) => message.id === 2)).toHaveProperty('result');
		} finally {
			daemon.child.kill();
			await daemon.exited();
		}
	});

	it('is a 400 parse error naming the limit at a workload\'s proxy, which stays up', async () => {
		const workload: Workload = await createWorkload(serve.url, { name: 'nesting', url: remote.url });
		const { url } = workload;
		for (const deep of [ARRAYS, inside(OBJECTS)]) {
			const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: deep });
			expect(response.status).toBe(400);
			const body = (await response.json()) as { error: { code: number; message: string } };
			expect(body.error).toMatchObject({ code: -32700, message: expect.stringContaining(`deeper than ${LIMIT} levels`) });
		}
		expect((await postMcp(url, INITIALIZE)).status).toBe(200);
	});
});
