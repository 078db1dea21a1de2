/**
 * Several Hangar processes sharing one configuration: reads in a `hangar serve` and a
 * `hangar daemon` never fail or see a torn state while `hangar registry` processes change the
 * configuration, and concurrent changes are all kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListCatalogServers, ListRegistries } from '../protocol/index.js';
import { embeddedRegistry, fixturePath } from './fixtures/registry/upstream.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar, spawnDaemon, startServe, type DaemonProcess, type ServeProcess } from './support/processes.js';

let home: TestHome;
let serve: ServeProcess;
let daemon: DaemonProcess;

const EMBEDDED_TOTAL = embeddedRegistry().data.servers.length;
/** Servers in each state the configuration goes through. */
const TOTALS = new Set([EMBEDDED_TOTAL, 6, 2]);

beforeAll(async () => {
	home = await createTestHome();
	serve = await startServe(home.env);
	daemon = spawnDaemon(home.env);
	await daemon.client.initialize('concurrency-test');
});

afterAll(async () => {
	await Promise.all([serve?.stop(), daemon?.stop()]);
	await home?.dispose();
});

// Each test runs several `hangar` processes in turn: on a busy machine that takes far longer
// than vitest's 30 s default, and nothing here is about speed.
describe('concurrent reads while the configuration changes', { timeout: 240_000 }, () => {
	it('every read succeeds with one whole state, and every process follows the changes', async () => {
		let writing = true;
		const seen = { rest: new Set<number>(), rpc: new Set<number>() };
		const failures: string[] = [];

		const restReader = async () => {
			while (writing) {
				const response = await fetch(`${serve.url}/registry/default/v0.1/servers?limit=1`);
				const body = (await response.json()) as { metadata?: { total: number } };
				if (response.status !== 200 || !TOTALS.has(body.metadata?.total ?? -1)) failures.push(`REST ${response.status} ${JSON.stringify(body)}`);
				else seen.rest.add(body.metadata!.total);
				const detail = await fetch(`${serve.url}/api/v1beta/registry/default`);
				if (detail.status !== 200) failures.push(`REST detail ${detail.status}`);
				else await detail.arrayBuffer();
			}
		};
		const rpcReader = async () => {
			while (writing) {
				try {
					const page = await daemon.client.request(ListCatalogServers, { registryName: 'default', limit: 1 });
					if (!TOTALS.has(page.metadata.total)) failures.push(`RPC total ${page.metadata.total}`);
					else seen.rpc.add(page.metadata.total);
				} catch (error) {
					failures.push(`RPC ${(error as Error).message}`);
				}
			}
		};

		const writer = async () => {
			try {
				for (let round = 0; round < 2; round++) {
					for (const args of [
						['registry', 'set', fixturePath('team-registry.json')],
						['registry', 'set', fixturePath('second-registry.json')],
						['registry', 'reset'],
					]) {
						const result = await runHangar(args, home.env);
						expect(result.code, result.stderr).toBe(0);
						// Give the readers time to observe each state.
						await new Promise((resolve) => setTimeout(resolve, 150));
					}
				}
				const last = await runHangar(['registry', 'set', fixturePath('second-registry.json')], home.env);
				expect(last.code, last.stderr).toBe(0);
			} finally {
				writing = false;
			}
		};

		await Promise.all([writer(), restReader(), restReader(), rpcReader()]);
		expect(failures).toEqual([]);
		expect(seen.rest.size).toBeGreaterThanOrEqual(2);
		expect(seen.rpc.size).toBeGreaterThanOrEqual(2);
		// Both processes now read the last state.
		const rest = (await (await fetch(`${serve.url}/registry/default/v0.1/servers`)).json()) as { metadata: { total: number } };
		expect(rest.metadata.total).toBe(2);
		expect((await daemon.client.request(ListCatalogServers, { registryName: 'default' })).metadata.total).toBe(2);
	});

	it('concurrent changes from several processes are all kept', async () => {
		const names = ['alpha', 'beta', 'gamma', 'delta'];
		const results = await Promise.all(
			names.map((name, index) =>
				runHangar(['registry', 'add', name, fixturePath(index % 2 ? 'team-registry.json' : 'second-registry.json')], home.env),
			),
		);
		for (const result of results) expect(result.code, result.stderr).toBe(0);
		const { registries } = await daemon.client.request(ListRegistries, {});
		expect(registries.map((entry) => entry.name).sort()).toEqual([...names, 'default'].sort());
		const removals = await Promise.all(names.map((name) => runHangar(['registry', 'rm', name], home.env)));
		for (const result of removals) expect(result.code, result.stderr).toBe(0);
		expect((await daemon.client.request(ListRegistries, {})).registries.map((entry) => entry.name)).toEqual(['default']);
	});
});
