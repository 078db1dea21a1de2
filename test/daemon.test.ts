/**
 * `hangar daemon` as an editor meets it: the LSP lifecycle, and robustness against frames
 * no correct client sends. Every bad frame gets a JSON-RPC error and the daemon stays up.
 */
import { spawn } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ListGroups, operations } from '../protocol/index.js';
import { createTestHome, type TestHome } from './support/home.js';
import { frame, spawnRawDaemon, type RawDaemon } from './support/raw-daemon.js';

let home: TestHome;
let daemon: RawDaemon;
let nextId = 1;

beforeEach(async () => {
	home = await createTestHome();
	daemon = spawnRawDaemon(home.env);
});

afterEach(async () => {
	if (daemon.child.exitCode === null) daemon.child.kill();
	await daemon.exited();
	await home.dispose();
});

async function request(method: string, params?: unknown): Promise<Record<string, unknown>> {
	const id = nextId++;
	daemon.send({ jsonrpc: '2.0', id, method, params });
	return daemon.next((message) => message.id === id);
}

async function initialize(): Promise<Record<string, unknown>> {
	const response = await request('initialize', { processId: process.pid, capabilities: {} });
	daemon.send({ jsonrpc: '2.0', method: 'initialized', params: {} });
	return response;
}

/** The daemon still answers a normal request. */
async function expectAlive(): Promise<void> {
	const response = await request(ListGroups.method, {});
	expect(response.result).toEqual({ groups: [{ name: 'default', registered_clients: [], skills: [] }] });
}

const errorWith = (code: number) => (message: Record<string, unknown>) =>
	message.id === null && (message.error as { code?: number } | undefined)?.code === code;

describe('lifecycle', () => {
	it('initialize names the server and every method of the table', async () => {
		const { result } = await initialize();
		const { serverInfo, capabilities } = result as { serverInfo: { name: string; version: string }; capabilities: { methods: string[]; notifications: string[] } };
		expect(serverInfo.name).toBe('hangar');
		expect(serverInfo.version).toMatch(/^\d+\.\d+\.\d+/);
		expect(capabilities.methods.sort()).toEqual(operations.map((row) => row.method).sort());
	});

	it('refuses requests before initialize with ServerNotInitialized', async () => {
		const response = await request(ListGroups.method, {});
		expect(response.error).toMatchObject({ code: -32002 });
	});

	it('shutdown, then exit with code 0; later requests are refused', async () => {
		await initialize();
		expect((await request('shutdown')).result).toBeNull();
		expect((await request(ListGroups.method, {})).error).toMatchObject({ code: -32600 });
		daemon.send({ jsonrpc: '2.0', method: 'exit' });
		expect(await daemon.exited()).toBe(0);
	});

	it('exit without shutdown ends with code 1', async () => {
		await initialize();
		daemon.send({ jsonrpc: '2.0', method: 'exit' });
		expect(await daemon.exited()).toBe(1);
	});

	it('exits when the process that started it is gone, even one that was never reaped (a zombie)', async () => {
		// `sleep 30` takes the place of the shell and never reaps the shell's other child.
		const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'inherit'] });
		try {
			const pid = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (data: Buffer) => resolve(String(data)))));
			await request('initialize', { processId: pid, capabilities: {} });
			await expectAlive();
			expect(await daemon.exited()).toBe(1);
		} finally {
			parent.kill();
		}
	}, 15_000);

	it('exits when its stdin closes', async () => {
		await initialize();
		daemon.child.stdin!.end();
		expect(await daemon.exited()).toBe(1);
	});

	// `printf '…' | hangar daemon`: every request before the end of input is answered.
	const batch = (...messages: object[]) => {
		daemon.write(Buffer.concat(messages.map((message) => frame(message))));
		daemon.child.stdin!.end();
	};
	// Answers may come in any order (a quick shutdown before a slower request).
	const answered = () => daemon.messages.map((message) => (message as { id?: number }).id).sort();
	const answerTo = (id: number) => daemon.messages.find((message) => (message as { id?: number }).id === id) as { result?: unknown };

	it('answers a whole batch up to exit, then exits 0 after shutdown', async () => {
		batch(
			{ jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: null, capabilities: {} } },
			{ jsonrpc: '2.0', method: 'initialized', params: {} },
			{ jsonrpc: '2.0', id: 2, method: ListGroups.method, params: {} },
			{ jsonrpc: '2.0', id: 3, method: 'shutdown' },
			{ jsonrpc: '2.0', method: 'exit' },
		);
		expect(await daemon.exited()).toBe(0);
		expect(answered()).toEqual([1, 2, 3]);
		expect(answerTo(2).result).toEqual({ groups: [{ name: 'default', registered_clients: [], skills: [] }] });
	});

	it('answers what it read before the end of input, then exits by the exit rule (1 without shutdown)', async () => {
		batch(
			{ jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: null, capabilities: {} } },
			{ jsonrpc: '2.0', id: 2, method: ListGroups.method, params: {} },
			{ jsonrpc: '2.0', id: 3, method: 'groups/create', params: { name: 'late' } },
		);
		expect(await daemon.exited()).toBe(1);
		expect(answered()).toEqual([1, 2, 3]);
		expect(answerTo(3).result).toBeDefined();
	});

	it('exits 0 at the end of input after shutdown, its answers written', async () => {
		batch(
			{ jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: null, capabilities: {} } },
			{ jsonrpc: '2.0', id: 2, method: ListGroups.method, params: {} },
			{ jsonrpc: '2.0', id: 3, method: 'shutdown' },
		);
		expect(await daemon.exited()).toBe(0);
		expect(answered()).toEqual([1, 2, 3]);
	});
});

describe('robustness', () => {
	beforeEach(initialize);

	it('unknown methods get MethodNotFound', async () => {
		expect((await request('nope/nothing', {})).error).toMatchObject({ code: -32601 });
		await expectAlive();
	});

	it('invalid params get InvalidParams with status 400 and the field named', async () => {
		const response = await request('groups/create', { name: 42 });
		expect(response.error).toMatchObject({ code: -32602, data: { status: 400, code: 'invalid_params' } });
		expect((response.error as { message: string }).message).toContain('name');
		await expectAlive();
	});

	it('a frame without Content-Length gets a parse error', async () => {
		daemon.write('this is not a header\r\n\r\n');
		await daemon.next(errorWith(-32700));
		await expectAlive();
	});

	it('a body that is not JSON gets a parse error that does not quote it', async () => {
		daemon.write(frame('{"jsonrpc": "2.0", "id": 9, "method": '));
		await daemon.next(errorWith(-32700));
		daemon.write(frame('{"jsonrpc": "2.0", "id": 10, "method": "secrets/create", "params": {"value": planted-secret}}'));
		const error = await daemon.next(errorWith(-32700));
		expect(JSON.stringify(error)).not.toContain('planted-secret');
		await expectAlive();
	});

	it('JSON that is not a JSON-RPC message, or a batch, gets InvalidRequest', async () => {
		daemon.write(frame({ hello: 'world' }));
		await daemon.next(errorWith(-32600));
		daemon.write(frame([{ jsonrpc: '2.0', id: 1, method: 'groups/list' }]));
		await daemon.next(errorWith(-32600));
		await expectAlive();
	});

	it('an oversized message is skipped and answered with InvalidRequest', async () => {
		const huge = JSON.stringify({ jsonrpc: '2.0', id: 77, method: 'groups/create', params: { name: 'x'.repeat(9 * 1024 * 1024) } });
		daemon.write(frame(huge));
		const error = await daemon.next(errorWith(-32600), 15_000);
		expect((error.error as { message: string }).message).toMatch(/exceeds the limit/);
		await expectAlive();
	});

	it('endless garbage without a header end is dropped with a parse error', async () => {
		daemon.write('x'.repeat(20_000));
		await daemon.next(errorWith(-32700));
		await expectAlive();
	});

	it('survives messages of every shape, $/cancelRequest without params.id included', async () => {
		const shapes: unknown[] = [
			{ jsonrpc: '2.0', method: '$/cancelRequest' },
			{ jsonrpc: '2.0', method: '$/cancelRequest', params: {} },
			{ jsonrpc: '2.0', method: '$/cancelRequest', params: null },
			{ jsonrpc: '2.0', method: '$/cancelRequest', params: [] },
			{ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: { nested: true } } },
			{ jsonrpc: '2.0', method: '$/cancelRequest', params: 'x' },
			{ jsonrpc: '2.0', method: '$/progress' },
			{ jsonrpc: '2.0', method: '$/progress', params: {} },
			{ jsonrpc: '2.0', method: '$/setTrace' },
			{ jsonrpc: '2.0', method: 'initialized', params: 'x' },
			{ jsonrpc: '2.0', id: 9_001, result: 1 },
			{ jsonrpc: '2.0', id: 9_002, error: 'no' },
			{ jsonrpc: '2.0', id: { x: 1 } },
			{ jsonrpc: '2.0', id: null, method: 'groups/list' },
			{ jsonrpc: '2.0', id: 9_003, method: 'groups/create', params: 'dev' },
			{ jsonrpc: '2.0', id: 9_004, method: 'groups/create', params: [1, 2] },
			{ jsonrpc: '2.0', id: 9_005, method: '$/cancelRequest', params: {} },
			{ jsonrpc: '2.0', id: 9_006, method: 'initialize', params: null },
			{ jsonrpc: '2.0', method: 7 },
		];
		for (const shape of shapes) {
			daemon.write(frame(shape as object));
			await expectAlive();
		}
		expect(daemon.child.exitCode).toBeNull();
	});

	it('resynchronises at the next header after stray text', async () => {
		daemon.write('hello\n');
		await expectAlive();
		daemon.write('hello\n');
		daemon.write(frame({ jsonrpc: '2.0', id: 501, method: ListGroups.method, params: {} }));
		expect((await daemon.next((message) => message.id === 501)).result).toBeDefined();
		await expectAlive();
	});

	it('resynchronises at the next header after binary bytes', async () => {
		daemon.write(Buffer.from([0x00, 0xff, 0x13, 0x37, 0x0a, 0x0d, 0x7f]));
		await expectAlive();
		daemon.write(Buffer.from([0xc3, 0x28, 0x0d, 0x0a, 0x0d, 0x0a, 0x01]));
		await expectAlive();
	});

	it('an absurd Content-Length does not swallow the frames after it', async () => {
		daemon.write('Content-Length: 99999999999999999999\r\n\r\n{"jsonrpc":"2.0"');
		await daemon.next(errorWith(-32600));
		await expectAlive();
		// A length under the limit but longer than what was sent.
		daemon.write('Content-Length: 4000000\r\n\r\n{"jsonrpc":"2.0","id":1');
		await expectAlive();
		await daemon.next(errorWith(-32700));
		await expectAlive();
	});

	it('writes nothing but frames to stdout', async () => {
		await request(ListGroups.method, {});
		await request('groups/create', { name: 'tidy' });
		// Every collected message parsed as a frame, and all of them are JSON-RPC 2.0.
		expect(daemon.messages.every((message) => message.jsonrpc === '2.0')).toBe(true);
	});
});
