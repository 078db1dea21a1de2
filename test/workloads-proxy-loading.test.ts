/**
 * A workload's proxy loads only what its configuration uses: the modules a plain stdio
 * workload's proxy loads, read by a module hook (test/support/loadedModules.ts, which the proxy
 * inherits through NODE_OPTIONS), leave out the engine client of the management calls (dockerode, with gRPC,
 * protobuf and ssh2), the MCP SDK of the aggregate backend, jose, Cedar, Redis and
 * OpenTelemetry, the features' own modules, and zod (it reads its records with checks generated
 * from the zod schemas: server/runspec/records.ts). And it holds V8's optimising compiler off
 * until it is busy (server/proxy/chain/compiler/compiler.ts), so an idle proxy does not keep the compiler's code.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { modulesOf, packagesOf, writeModuleHook } from './support/loadedModules.js';
import { REQUESTS_BEFORE_OPTIMISING } from '../server/proxy/chain/compiler/compiler.js';
import { isAlive } from '../server/store/lock.js';
import { connectLegacy } from './support/mcpClients.js';
import { HANGAR_BIN, runHangar } from './support/processes.js';

let home: TestHome;
let loadedFile: string;
const name = uniqueName('loading');

beforeAll(async () => {
	home = await createTestHome();
	loadedFile = join(home.path, 'loaded.txt');
	// The proxy process, and only it, writes what it loads.
	home.env.NODE_OPTIONS = await writeModuleHook(home.path, "process.argv.includes('proxy')");
	home.env.LOADED_MODULES = loadedFile;
});

afterAll(async () => {
	await runHangar(['rm', name], home.env).catch(() => undefined);
	await home?.dispose();
}, 120_000);

describe('the proxy of a plain stdio workload', { timeout: 180_000 }, () => {
	it('serves its calls without loading the modules of features it does not use', async () => {
		expect(await runHangar(['run', 'hangar-test/everything:1', '--name', name, '--transport', 'stdio', '--', 'stdio'], home.env)).toMatchObject({ code: 0 });
		expect(await runHangar(['mcp', 'call', name, 'echo', '--arg', 'message=plain'], { ...home.env, NODE_OPTIONS: '' })).toMatchObject({ code: 0, stdout: 'Echo: plain\n' });
		const loaded = await modulesOf((await readFile(loadedFile, 'utf8')).split('\n'));
		// The hook saw the proxy's own modules.
		expect(loaded.some((url) => url.endsWith('/server/proxy/main.js'))).toBe(true);
		expect(loaded.some((url) => url.endsWith('/server/proxy/backends/stdio.js'))).toBe(true);
		const packages = packagesOf(loaded);
		for (const unused of ['dockerode', 'docker-modem', 'ssh2', '@grpc/grpc-js', 'protobufjs', '@modelcontextprotocol/sdk', 'ajv', 'minisearch', 'jose', '@cedar-policy/cedar-wasm', 'ioredis', 'commander', 'zod', '@secretlint/secretlint-rule-preset-recommend']) {
			expect(packages, unused).not.toContain(unused);
		}
		expect([...packages].filter((name) => name.startsWith('@opentelemetry/'))).toEqual([]);
		const features = ['/chain/authentication/', '/chain/authorization/', '/chain/audit/', '/chain/rateLimits/', '/chain/upstreamAuth/', '/chain/guardrails/', '/chain/webhooks/', '/chain/telemetry/proxyTelemetry', '/backends/aggregate/', '/backends/http.js', '/scale/', '/net/egress.js', '/secrets/', '/server/cli/program.js'];
		for (const feature of features) expect(loaded.filter((url) => url.includes(feature)), feature).toEqual([]);
	});
});

describe("the proxy's start", { timeout: 180_000 }, () => {
	it('optimises nothing while it starts and answers a handshake and its tools, and optimises the code of a busy proxy', async () => {
		const proxyFile = join(home.path, 'data', 'proxies', `${name}.json`);
		const started = JSON.parse(await readFile(proxyFile, 'utf8')) as { pid: number; port: number };
		process.kill(started.pid, 'SIGTERM');
		await expect.poll(() => isAlive(started.pid), { timeout: 15_000 }).toBe(false);

		// The same proxy, started by hand with V8 telling what it optimises.
		const proxy = spawn(process.execPath, ['--trace-opt', HANGAR_BIN, 'proxy', name], { env: { ...home.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'ignore'] });
		let trace = '';
		proxy.stdout.on('data', (chunk: Buffer) => (trace += chunk.toString()));
		try {
			const optimised = () => [...trace.matchAll(/completed optimizing \S+ <JSFunction (\S*)/g)].map((match) => match[1]);
			const client = await connectWhenListening(`http://127.0.0.1:${started.port}/mcp`);
			expect((await client.listTools()).tools.length).toBeGreaterThan(5);
			// Before the fix, loading the proxy's modules made V8 optimise two of Node's path
			// functions, and the tools' list the scan of its depth.
			expect(optimised()).toEqual([]);
			for (let call = 0; call < REQUESTS_BEFORE_OPTIMISING + 700; call++) await client.callTool({ name: 'echo', arguments: { message: 'warm' } });
			await client.close();
			expect(optimised().length).toBeGreaterThan(0);
		} finally {
			proxy.kill('SIGTERM');
			await once(proxy, 'exit');
		}
	});
});

async function connectWhenListening(url: string): Promise<Client> {
	for (let attempt = 1; ; attempt++) {
		try {
			return (await connectLegacy(url, { revision: '2025-06-18', transport: 'streamable-http' })).client;
		} catch (error) {
			if (attempt === 150) throw error;
			await sleep(200);
		}
	}
}
