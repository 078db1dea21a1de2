/**
 * The lookups other services use (`RegistryService.findServer`, `findSkill`), which no door
 * exposes directly: called in-process on a real state folder with real registry files.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextFor } from '../server/context.js';
import { createEnvironment } from '../server/environment.js';
import { RegistryService } from '../server/registry/service.js';
import { fixturePath } from './fixtures/registry/upstream.js';
import { hangarErrorOf } from './support/errors.js';
import { createTestHome, type TestHome } from './support/home.js';

let home: TestHome;
let registries: RegistryService;
const context = contextFor(new AbortController().signal);

beforeAll(async () => {
	home = await createTestHome();
	registries = new RegistryService(createEnvironment('test', home.env), { ttlMs: 60_000, timeoutMs: 2_000 });
	await registries.add({ name: 'team', source: fixturePath('team-registry.json'), priority: 10 }, context);
	await registries.add({ name: 'second', source: fixturePath('second-registry.json'), priority: 20 }, context);
});

afterAll(() => home?.dispose());

describe('findServer', () => {
	it('finds image and remote servers by full name, in the legacy shape', async () => {
		expect(await registries.findServer('io.example.team/node-tool')).toEqual({
			is_remote: false,
			server: expect.objectContaining({ name: 'io.example.team/node-tool', image: 'npx://@example/node-tool@2.0.0', transport: 'stdio' }),
		});
		expect(await registries.findServer('io.github.stacklok/notion-remote')).toEqual({
			is_remote: true,
			remote_server: expect.objectContaining({ url: 'https://mcp.notion.com/mcp', transport: 'streamable-http' }),
		});
	});

	it('resolves a short name that one server has; one that names servers in two registries is refused with them', async () => {
		const ambiguous = await hangarErrorOf(registries.findServer('fetch'));
		expect(ambiguous).toMatchObject({ status: 409, code: 'server_ambiguous' });
		expect(ambiguous.message).toBe(
			"server name 'fetch' is ambiguous: io.example.second/fetch (registry 'second'), io.github.stacklok/fetch (registry 'default'); use the full name",
		);
		expect((await registries.findServer('io.example.second/fetch'))?.server?.name).toBe('io.example.second/fetch');
		expect((await registries.findServer('github'))?.server?.name).toBe('io.github.stacklok/github');
		// `time` exists in `second` and in the embedded registry: precedence decides.
		expect((await registries.findServer('io.github.stacklok/time'))?.server?.image).toBe('ghcr.io/example/second-time:9.0.0');
	});

	it('an ambiguous short name is a 409; an unknown one is undefined', async () => {
		const ambiguous = await hangarErrorOf(registries.findServer('hosted'));
		expect(ambiguous).toMatchObject({ status: 409, code: 'server_ambiguous' });
		expect(ambiguous.message).toContain('io.example.team/hosted');
		expect(await registries.findServer('no-such-server')).toBeUndefined();
		expect(await registries.findServer('io.example.team/no-such-server')).toBeUndefined();
	});

	it('a registry that cannot be read is reported rather than a wrong answer', async () => {
		const path = join(home.path, 'soon-broken.json');
		await writeFile(path, JSON.stringify({ data: { servers: [{ name: 'io.example.soon/x' }] } }));
		await registries.add({ name: 'soon', source: path, priority: 1 }, context);
		await writeFile(path, '{ broken');
		// Found elsewhere: the broken registry is skipped.
		expect((await registries.findServer('node-tool'))?.server?.name).toBe('io.example.team/node-tool');
		expect(await hangarErrorOf(registries.findServer('nowhere-at-all'))).toMatchObject({ status: 502, code: 'registry_invalid' });
		await registries.remove('soon');
	});
});

describe('findSkill', () => {
	it('finds a skill by name or namespace/name', async () => {
		expect(await registries.findSkill('deploy')).toMatchObject({ namespace: 'io.example.team', name: 'deploy', version: '2.0.0' });
		expect(await registries.findSkill('io.example.other/review')).toMatchObject({ namespace: 'io.example.other', version: '0.3.0' });
		expect(await registries.findSkill('io.github.anthropics/pdf')).toMatchObject({ license: 'LicenseRef-Anthropic-Proprietary' });
	});

	it('precedence decides between registries; a name in two namespaces of one registry is a 409', async () => {
		expect((await registries.findSkill('mcp-builder'))?.namespace).toBe('io.example.second');
		const ambiguous = await hangarErrorOf(registries.findSkill('review'));
		expect(ambiguous).toMatchObject({ status: 409, code: 'skill_ambiguous' });
		expect(ambiguous.message).toContain('io.example.team/review');
		expect(await registries.findSkill('io.example.nobody/review')).toBeUndefined();
		expect(await registries.findSkill('no-such-skill')).toBeUndefined();
	});

	it('sees configuration written by another process', async () => {
		const other = new RegistryService(createEnvironment('other', home.env), { ttlMs: 60_000, timeoutMs: 2_000 });
		await other.remove('team');
		try {
			expect(await registries.findSkill('deploy')).toBeUndefined();
		} finally {
			// The other tests read `team`, in whatever order they run.
			await other.add({ name: 'team', source: fixturePath('team-registry.json'), priority: 10 }, context);
		}
		expect(await registries.findSkill('deploy')).toMatchObject({ namespace: 'io.example.team' });
	});
});
