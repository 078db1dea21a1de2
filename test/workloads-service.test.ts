/**
 * The workloads service with its ports filled by stand-ins, as the lead will fill them with
 * the registries, secrets and clients services: creates from registry entries (a registry
 * file in the upstream format), secrets injected at start and never shown, and the clients
 * hook. Real Docker Engine and real proxy processes.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HangarError } from '../protocol/errors.js';
import { contextFor } from '../server/context.js';
import { Notifier } from '../server/environment.js';
import { GroupStore } from '../server/groups/store.js';
import { createLogger } from '../server/log.js';
import { DockerRuntime } from '../server/runtime/docker.js';
import { resolvePaths } from '../server/store/paths.js';
import { WorkloadService } from '../server/workloads/service.js';
import { RegistryFileCatalog } from './fixtures/workloads/catalog.js';
import { connect, EVERYTHING, startRemoteServer, textOf, uniqueName } from './fixtures/workloads/helpers.js';
import { hangarErrorOf } from './support/errors.js';
import { createTestHome, type TestHome } from './support/home.js';
import { HANGAR_BIN } from './support/processes.js';

const EXAMPLE_REGISTRY = fileURLToPath(new URL('../../shared/reference/data/registry-upstream-example.json', import.meta.url));
const SECRET_VALUE = 's3cr3t-value-7f1c';

let home: TestHome;
let service: WorkloadService;
let syncs = 0;
const context = () => contextFor(new AbortController().signal);

/** A registry file in the upstream format naming the locally built test image. */
async function localRegistry(): Promise<string> {
	const file = join(home.path, 'registry.json');
	await writeFile(
		file,
		JSON.stringify({
			version: '1.0.0',
			meta: { last_updated: '2026-01-01T00:00:00Z' },
			data: {
				servers: [
					{
						name: 'io.github.hangar-test/everything',
						description: 'The MCP reference server',
						version: '1.0.0',
						packages: [
							{
								registryType: 'oci',
								identifier: EVERYTHING,
								transport: { type: 'stdio' },
								environmentVariables: [
									{ name: 'GREETING', default: 'from the registry' },
									{ name: 'API_KEY', isRequired: true, isSecret: true },
								],
							},
						],
						_meta: { 'io.modelcontextprotocol.registry/publisher-provided': { 'io.github.stacklok': { [EVERYTHING]: { args: ['stdio'], tools: ['echo'] } } } },
					},
				],
			},
		}),
	);
	return file;
}

beforeAll(async () => {
	home = await createTestHome();
	const paths = resolvePaths(home.env);
	const groups = new GroupStore(paths);
	service = new WorkloadService({
		environment: { paths, log: createLogger('test', 'warn'), notifier: new Notifier() },
		runtime: new DockerRuntime(),
		catalog: new RegistryFileCatalog([EXAMPLE_REGISTRY, await localRegistry()]),
		secrets: {
			resolve: async (name) => {
				if (name === 'api-key') return SECRET_VALUE;
				throw HangarError.notFound(`secret ${name} not found`);
			},
		},
		clients: {
			syncWorkloads: async () => {
				syncs++;
			},
		},
		groups: { exists: async (name) => (await groups.find(name)) !== undefined },
		proxyEntry: HANGAR_BIN,
		env: home.env,
	});
});

afterAll(async () => {
	const { workloads } = await service.list({ all: true });
	await service.deleteMany({ names: workloads.map((workload) => workload.name) });
	await service.idle();
	await home.dispose();
}, 120_000);

describe('creates from a registry entry', { timeout: 120_000 }, () => {
	it('fills image, transport, arguments and env from the entry and injects secrets at start, never showing them', async () => {
		const name = uniqueName('registry');
		const missing = await hangarErrorOf(service.create({ name, image: 'everything' }, context()));
		expect(missing).toMatchObject({ status: 400, message: expect.stringContaining('env_vars.API_KEY') });

		syncs = 0;
		const { port } = await service.create({ name, image: 'everything', secrets: [{ name: 'api-key', target: 'API_KEY' }] }, context());
		expect(syncs).toBeGreaterThan(0);
		const detail = await service.get(name);
		expect(detail).toMatchObject({ image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], registry: 'default', server: 'io.github.hangar-test/everything', secrets: [{ name: 'api-key', target: 'API_KEY' }] });
		const exported = await service.export(name);
		expect(exported).toMatchObject({ registry_server_name: 'io.github.hangar-test/everything', secrets: ['api-key,target=API_KEY'], env_vars: { GREETING: 'from the registry' } });

		const client = await connect(`http://127.0.0.1:${port}/mcp`, 'streamable-http');
		try {
			const env = textOf(await client.callTool({ name: 'get-env', arguments: {} }));
			expect(env).toContain(`"API_KEY": "${SECRET_VALUE}"`);
			expect(env).toContain('"GREETING": "from the registry"');
		} finally {
			await client.close();
		}
		const shown = JSON.stringify([detail, exported, await service.list({ all: true }), await service.proxyLogs(name)]);
		expect(shown).not.toContain(SECRET_VALUE);
		expect(await readFile(join(home.path, 'state', 'runconfigs', `${name}.json`), 'utf8')).not.toContain(SECRET_VALUE);
	});

	it('with registry and server: a remote entry brings its URL, transport, headers and OAuth settings', async () => {
		const name = uniqueName('example-remote');
		await service.create({ name, registry: 'default', server: 'io.github.stacklok/example-remote' }, context());
		expect(await service.get(name)).toMatchObject({
			url: 'https://api.example.com/mcp',
			transport: 'sse',
			headers: [{ name: 'X-API-Key', required: true, secret: true }],
			oauth_config: { client_id: 'example-client-id', issuer: 'https://accounts.example.com' },
		});
		expect((await service.list({ all: true })).workloads.find((workload) => workload.name === name)).toMatchObject({ remote: true, package: 'https://api.example.com/mcp' });
	});

	it('404 when the entry\'s image cannot be had, naming it; 400 for a registry other than default', async () => {
		const error = await hangarErrorOf(service.create({ name: uniqueName('example'), registry: 'default', server: 'io.github.stacklok/example-container' }, context()));
		expect(error).toMatchObject({ status: 404, code: 'image_not_found', message: expect.stringContaining('example/mcp-server:latest') });
		const other = await hangarErrorOf(service.create({ name: uniqueName('other'), registry: 'corporate', server: 'io.github.stacklok/example-container' }, context()));
		expect(other).toMatchObject({ status: 400, message: expect.stringContaining('registry') });
	});

	it('a secret the provider does not have is its 404, and nothing is left behind', async () => {
		const name = uniqueName('nosecret');
		const error = await hangarErrorOf(service.create({ name, image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], secrets: [{ name: 'absent', target: 'TOKEN' }] }, context()));
		expect(error).toMatchObject({ status: 404, message: 'secret absent not found' });
		expect((await service.list({ all: true })).workloads.map((workload) => workload.name)).not.toContain(name);
		expect(await new DockerRuntime().list({ 'hangar.name': name })).toEqual([]);
	});
});

describe('headers from secrets', { timeout: 60_000 }, () => {
	it('reach a remote server (and its bearer token) without being written anywhere', async () => {
		const remote = await startRemoteServer('streamable');
		try {
			const name = uniqueName('secret-header');
			const { port } = await service.create(
				{ name, url: remote.url, header_forward: { add_headers_from_secret: { 'X-Tenant': 'api-key' } }, oauth_config: { bearer_token: { name: 'api-key', target: 'Authorization' } } },
				context(),
			);
			const client = await connect(`http://127.0.0.1:${port}/api/mcp`, 'streamable-http');
			try {
				expect(textOf(await client.callTool({ name: 'whoami', arguments: {} }))).toBe(SECRET_VALUE);
				expect(textOf(await client.callTool({ name: 'authorization', arguments: {} }))).toBe(`Bearer ${SECRET_VALUE}`);
			} finally {
				await client.close();
			}
			expect(JSON.stringify([await service.get(name), await service.export(name), await service.proxyLogs(name)])).not.toContain(SECRET_VALUE);
			expect(await service.get(name)).toMatchObject({ header_forward: { add_headers_from_secret: { 'X-Tenant': 'api-key' } } });
		} finally {
			remote.stop();
		}
	});
});

describe('the clients hook', { timeout: 60_000 }, () => {
	it('lists running workloads as clients reference them, and syncs clients on stop and delete', async () => {
		const name = uniqueName('endpoint');
		const { port } = await service.create({ name, image: EVERYTHING, transport: 'stdio', cmd_arguments: ['stdio'], proxy_mode: 'sse' }, context());
		expect(await service.listEndpoints()).toContainEqual({ name, group: 'default', url: `http://127.0.0.1:${port}/sse#${name}`, transport: 'sse' });
		syncs = 0;
		await service.stop(name);
		await service.idle();
		expect(syncs).toBeGreaterThan(0);
		expect((await service.listEndpoints()).map((endpoint) => endpoint.name)).not.toContain(name);
		syncs = 0;
		await service.delete(name);
		await service.idle();
		expect(syncs).toBeGreaterThan(0);
	});
});
