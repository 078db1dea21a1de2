/**
 * Every server of the built-in catalog either runs on this machine or says precisely why not
 * (`hangar registry check`): no container registry can be reached here, nor PyPI, nor the
 * remotes' hosts; the npm registry can. The npm entries are built on hangar-test/node-base (set
 * as the npx default, as a user without Docker Hub would) and one of them is run by name and
 * answers tools/list. `hangar run` of an entry that cannot run says why and what to do next,
 * and leaves no workload.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar } from './support/processes.js';

const NODE_BASE = 'hangar-test/node-base:1';

interface Checked {
	name: string;
	runs_as: string;
	verdict: 'runs' | 'cannot';
	reason: string;
	next?: string;
	needs: string[];
}

/** The precise reasons this machine gives, one per kind of entry; anything else is a generic failure. */
const REASONS = {
	image: /^the image \S+ is not on this engine and cannot be pulled: cannot reach \S+: the name \S+ does not resolve/,
	pypi: /^the package cannot be had: cannot look up \S+: registry at https:\/\/pypi\.org is unreachable/,
	remote: /^cannot reach \S+: the name \S+ does not resolve/,
	npm: /^npx:\/\/\S+@\d+\.\d+\.\d+ is built on the first run \(hangar-test\/node-base:1\)$|^npx:\/\/\S+ is built \(hangar-build\//,
};

describe('the built-in catalog on this machine', { timeout: 600_000 }, () => {
	let home: TestHome;
	const hangar = (...args: string[]) => runHangar(args, home.env);
	const name = uniqueName('context7');
	let checked: Checked[] = [];

	beforeAll(async () => {
		home = await createTestHome();
		expect((await hangar('config', 'runtime', 'set', 'npx', '--runtime-image', NODE_BASE)).code).toBe(0);
		const result = await hangar('registry', 'check', '--json');
		expect(result.code).toBe(0);
		checked = JSON.parse(result.stdout);
	});

	afterAll(async () => {
		await hangar('rm', name);
		await home?.dispose();
	}, 120_000);

	it('gives each of the 50 entries a run or a precise reason, with a next step for each that cannot', () => {
		expect(checked).toHaveLength(50);
		for (const entry of checked) {
			const kind = entry.runs_as.startsWith('npx://') ? 'npm' : entry.runs_as.startsWith('uvx://') ? 'pypi' : entry.runs_as.startsWith('the remote server') ? 'remote' : 'image';
			expect({ name: entry.name, reason: entry.reason }).toEqual({ name: entry.name, reason: expect.stringMatching(REASONS[kind]) });
			expect(entry.verdict).toBe(kind === 'npm' ? 'runs' : 'cannot');
			if (entry.verdict === 'cannot') expect(entry.next).toBeTruthy();
		}
		const byName = new Map(checked.map((entry) => [entry.name.split('/')[1], entry]));
		expect(byName.get('context7')!.runs_as).toMatch(/^npx:\/\/@upstash\/context7-mcp@2\.1\.0/);
		expect(byName.get('time')!.next).toContain('docker load');
		expect(byName.get('arxiv-mcp-server')!.next).toContain('UV_DEFAULT_INDEX');
		// What an entry needs from the user is named: its secrets, variables and headers.
		expect(byName.get('mcp-clickhouse')!.needs).toContain('CLICKHOUSE_PASSWORD (a secret, required)');
		expect(byName.get('github')!.needs).toContain('GITHUB_PERSONAL_ACCESS_TOKEN (a secret, required)');
		expect(byName.get('github-remote')!.needs).toEqual(expect.arrayContaining(['the Authorization header (a secret, or sign in)']));
	});

	it('names the build image the npm entries lack when the npx default is the official one', async () => {
		const other = await createTestHome();
		try {
			const [entry] = JSON.parse((await runHangar(['registry', 'check', 'context7', '--json'], other.env)).stdout) as Checked[];
			expect(entry).toMatchObject({ verdict: 'cannot', reason: expect.stringContaining("the build's image node:24-slim is not on this engine and cannot be pulled") });
			expect(entry!.next).toContain('hangar config runtime set npx --runtime-image IMAGE');
		} finally {
			await other.dispose();
		}
	});

	it('runs an npm entry of the catalog by name: built from the npm registry, it lists its tools', async () => {
		const result = await hangar('run', 'context7', '--name', name);
		expect(result).toMatchObject({ code: 0, stdout: expect.stringContaining(`Workload ${name} is running`) });
		const tools = await hangar('mcp', 'tools', name, '--json');
		expect(tools.code).toBe(0);
		const names = (JSON.parse(tools.stdout) as Array<{ name: string }>).map((tool) => tool.name);
		expect(names).toEqual(expect.arrayContaining(['resolve-library-id']));
		expect((await hangar('registry', 'check', 'context7', '--json')).stdout).toContain('is built (hangar-build/npx-upstash-context7-mcp:2.1.0-');
	});

	it('`hangar run` of an entry that cannot run says why and what to do, and leaves no workload', async () => {
		const refusedName = uniqueName('time');
		const refused = await hangar('run', 'time', '--name', refusedName);
		expect(refused.code).not.toBe(0);
		expect(refused.stderr).toContain('image docker.io/mcp/time:latest not found: it is not available locally and the pull failed');
		expect(refused.stderr).toContain('next: load it into this engine (docker load -i FILE');
		const listed = JSON.parse((await hangar('ls', '--all', '--json')).stdout) as Array<{ name: string }>;
		// The npm entry's workload may be there, whichever test ran first: the refused one is not.
		expect(listed.map((workload) => workload.name)).not.toContain(refusedName);
	});
});
