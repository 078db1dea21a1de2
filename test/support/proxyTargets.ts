/**
 * Real MCP servers in containers, each reachable both directly and through Hangar's workload
 * proxy, for the proxy fidelity tests: `hangar serve` in a scratch home creates the workloads,
 * and an HTTP-mode container's own published port is the direct baseline.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Docker from 'dockerode';
import { expect } from 'vitest';
import { CreateWorkload, DeleteWorkloads, ListWorkloads } from '../../protocol/protocol.workloads.js';
import { uniqueName, waitFor } from '../fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './home.js';
import { startServe, type ServeProcess } from './processes.js';
import { callRest } from './rest.js';

export { EVERYTHING } from '../fixtures/workloads/helpers.js';
/**
 * test/fixtures/mcp-2026/server.mjs on the SDK 2.x: MCP 2026-07-28 only over Streamable HTTP on
 * port 3001 by default; with `legacy-http` or `stdio` the same tools for 2025-era clients.
 * scripts/test-services.sh tags its image by the fixture's digest.
 */
export const MODERN = `hangar-test/modern:${createHash('sha256')
	.update(readFileSync(new URL('../fixtures/mcp-2026/server.mjs', import.meta.url)))
	.digest('hex')
	.slice(0, 16)}`;

export interface Workload {
	readonly name: string;
	/** The proxy's Streamable HTTP endpoint. */
	readonly url: string;
	/** The proxy's origin, where `/sse` serves legacy SSE clients. */
	readonly origin: string;
}

export interface Hangar {
	readonly home: TestHome;
	readonly serve: ServeProcess;
	/** Creates a workload over REST (the name made unique) and waits for it to run. */
	create(params: Record<string, unknown>): Promise<Workload>;
	/** The server's own URL: the container's published `port`, with `path`. */
	direct(workload: Workload, port: number, path: string): Promise<string>;
	dispose(): Promise<void>;
}

/** The three kinds of server the matrix covers, as workload parameters. */
export const SERVERS = {
	'stdio image': { image: 'hangar-test/everything:1', transport: 'stdio', cmd_arguments: ['stdio'] },
	'HTTP-mode container': { image: 'hangar-test/everything:1', transport: 'streamable-http', target_port: 3001, cmd_arguments: ['streamableHttp'] },
	'2026-07-28 image': { image: MODERN, transport: 'streamable-http', target_port: 3001 },
} as const;

/** The SDK 2.x fixture serving 2025-era clients: it passes the whole 2025-11-25 conformance set. */
export const SDK2_LEGACY_SERVERS = {
	stdio: { image: MODERN, transport: 'stdio', cmd_arguments: ['stdio'] },
	http: { image: MODERN, transport: 'streamable-http', target_port: 3001, cmd_arguments: ['legacy-http'] },
} as const;
export type ServerKind = keyof typeof SERVERS;

/** `hangar serve` in a scratch home (whose folder name starts with `prefix`). */
export async function startHangar(prefix?: string): Promise<Hangar> {
	const home = await createTestHome(prefix);
	const serve = await startServe({ ...home.env, HANGAR_PROXY_KEEPALIVE_MS: '500' });
	const docker = new Docker();
	return {
		home,
		serve,
		async create(params) {
			const name = uniqueName(String(params.name));
			const created = await callRest(serve.url, CreateWorkload, { ...params, name });
			expect(created.status, JSON.stringify(created.body)).toBe(201);
			const { workloads } = (await callRest(serve.url, ListWorkloads, {})).body as { workloads: Array<{ name: string; url: string; status: string }> };
			const listed = workloads.find((workload) => workload.name === name)!;
			expect(listed.status, `workload ${name}: ${JSON.stringify(listed)}`).toBe('running');
			return { name, url: listed.url.split('#')[0]!, origin: new URL(listed.url).origin };
		},
		async direct(workload, port, path) {
			const [container] = await docker.listContainers({ filters: { name: [`hangar-${workload.name}-`] } });
			const published = container?.Ports.find((binding) => binding.PrivatePort === port && binding.PublicPort);
			if (!published) throw new Error(`the container of ${workload.name} publishes no port ${port}`);
			return `http://127.0.0.1:${published.PublicPort}${path}`;
		},
		async dispose() {
			const { body } = await callRest(serve.url, ListWorkloads, { all: true });
			const names = (body as { workloads: Array<{ name: string }> }).workloads.map((workload) => workload.name);
			if (names.length) {
				await callRest(serve.url, DeleteWorkloads, { names });
				await waitFor(
					async () => ((await callRest(serve.url, ListWorkloads, { all: true })).body as { workloads: unknown[] }).workloads.length === 0,
					'the workloads to be deleted',
					60_000,
				);
			}
			await serve.stop();
			await home.dispose();
		},
	};
}
