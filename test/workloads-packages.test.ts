/**
 * Package references as workloads (`npx://`, `uvx://`, `go://`): parsing, the build plan and its
 * tag, and real builds on the engine: `hangar run npx://@modelcontextprotocol/server-memory`
 * from the npm registry (through this machine's TLS proxy, whose CA the build stage gets), a
 * second run that does not rebuild, credentials that never reach the final image, and a failed
 * build that names its step and leaves no workload.
 *
 * Nothing can be pulled from a container registry here, so the builds start from
 * hangar-test/node-base, python-base and go-base (scripts/test-services.sh), set as each
 * scheme's default with `hangar config runtime set`; a local Go module is built with Debian's
 * Go and runs on scratch.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planBuild, type BuildInputs } from '../server/packages/dockerfile.js';
import { parsePackageReference } from '../server/packages/reference.js';
import { readPackageConfig } from '../server/packages/userConfig.js';
import { describePlan } from '../server/cli/commands/build.js';
import { uniqueName, waitFor } from './fixtures/workloads/helpers.js';
import { freePort } from './support/registry.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar, type CommandResult } from './support/processes.js';

const run = promisify(execFile);
const NODE_BASE = 'hangar-test/node-base:1';
const PYTHON_BASE = 'hangar-test/python-base:1';
const GO_BASE = 'hangar-test/go-base:1';
const MEMORY_PACKAGE = '@modelcontextprotocol/server-memory';
/** A credential of a registry the build never uses: it must reach the build stage and nothing else. */
const CANARY = 'hangar-canary-token-5f1d0c';
/** The same, kept in a Hangar secret. */
const SECRET_CANARY = 'hangar-secret-canary-9a7e21';

describe('package references', () => {
	it('parses npm, PyPI and Go references, with versions and local directories', () => {
		expect(parsePackageReference('npx://@modelcontextprotocol/server-memory@2026.1.2')).toEqual({ scheme: 'npx', name: '@modelcontextprotocol/server-memory', version: '2026.1.2', local: false });
		expect(parsePackageReference('npx://left-pad')).toEqual({ scheme: 'npx', name: 'left-pad', version: undefined, local: false });
		expect(parsePackageReference('uvx://mcp-server-fetch@2025.4')).toMatchObject({ scheme: 'uvx', name: 'mcp-server-fetch', version: '2025.4' });
		expect(parsePackageReference('go://github.com/acme/server/v2@v2.1.0')).toMatchObject({ scheme: 'go', name: 'github.com/acme/server/v2', version: 'v2.1.0' });
		expect(parsePackageReference('go:///src/my-server')).toMatchObject({ scheme: 'go', name: '/src/my-server', local: true });
		expect(() => parsePackageReference('npx://Bad Name')).toThrow(/invalid image: "Bad Name" is not a valid npm package name/);
		expect(() => parsePackageReference('npx://pkg@1.0;rm')).toThrow(/is not a version/);
		expect(() => parsePackageReference('go://notamodule')).toThrow(/not a valid Go module/);
	});

	it('derives the tag from what goes into the image, never from credentials', () => {
		const config = { ...readPackageConfig({ HOME: '/nonexistent' }), caCert: undefined };
		const inputs: BuildInputs = { reference: parsePackageReference(`npx://${MEMORY_PACKAGE}`), version: '1.0.0', settings: {}, config };
		const tag = planBuild(inputs).tag;
		expect(tag).toMatch(/^hangar-build\/npx-modelcontextprotocol-server-memory:1\.0\.0-[0-9a-f]{12}$/);
		expect(planBuild(inputs).tag).toBe(tag);
		expect(planBuild({ ...inputs, version: '1.0.1' }).tag).not.toBe(tag);
		expect(planBuild({ ...inputs, settings: { builder_image: NODE_BASE } }).tag).not.toBe(tag);
		expect(planBuild({ ...inputs, settings: { additional_packages: ['git'] } }).tag).not.toBe(tag);
		expect(planBuild({ ...inputs, config: { ...config, npm: { ...config.npm, npmrc: `//r/:_authToken=${CANARY}\n` } } }).tag).toBe(tag);
		expect(planBuild({ ...inputs, config: { ...config, npm: { ...config.npm, registry: 'https://npm.corp.example/' } } }).tag).not.toBe(tag);
		expect(() => planBuild({ ...inputs, settings: { additional_packages: ['git; rm -rf /'] } })).toThrow(/runtime_config.additional_packages\[0\]/);
	});

	it('keeps only registry settings of the user\'s .npmrc, and the dry run shows no credential', async () => {
		const home = await createTestHome();
		try {
			await writeFile(join(home.path, '.npmrc'), `prefix=/home/me/.npm-global\n@canary:registry=https://npm.canary.invalid/\n//npm.canary.invalid/:_authToken=${CANARY}\n`);
			const config = readPackageConfig({ HOME: home.path });
			expect(config.npm.npmrc).toBe(`registry=https://registry.npmjs.org/\n@canary:registry=https://npm.canary.invalid/\n//npm.canary.invalid/:_authToken=${CANARY}\n`);
			const plan = planBuild({ reference: parsePackageReference('uvx://mcp-server-time'), version: '1.0.0', settings: {}, config });
			expect(plan.dockerfile).toContain('FROM ghcr.io/astral-sh/uv:python3.13-bookworm-slim AS builder');
			expect(plan.dockerfile).toContain('ENTRYPOINT ["/app/bin/mcp-server-time"]');
			const go = planBuild({ reference: parsePackageReference('go://github.com/acme/mcp-server/v2@v2.0.0'), version: 'v2.0.0', settings: {}, config });
			expect(go.dockerfile).toMatch(/^FROM gcr\.io\/distroless\/static-debian12:nonroot$/m);
			expect(go.dockerfile).toContain('COPY --from=builder /out/mcp-server /app/server');
			const npm = planBuild({ reference: parsePackageReference(`npx://${MEMORY_PACKAGE}`), version: '1.0.0', settings: {}, config });
			expect(describePlan(npm)).not.toContain(CANARY);
			expect(describePlan(npm)).toContain('hangar-build/npmrc');
		} finally {
			await home.dispose();
		}
	});
});

describe('hangar run npx://… on Docker', { timeout: 600_000 }, () => {
	let home: TestHome;
	const hangar = (...args: string[]) => runHangar(args, home.env);
	const first = uniqueName('npx');
	const second = uniqueName('npx');
	const fromRegistry = uniqueName('registry');
	let tag = '';
	let firstRun: CommandResult;

	// The first run builds the image the tests after it inspect and run again.
	beforeAll(async () => {
		home = await createTestHome();
		await writeFile(join(home.path, '.npmrc'), `@canary:registry=https://npm.canary.invalid/\n//npm.canary.invalid/:_authToken=${CANARY}\n`);
		home.env.NPM_CONFIG_USERCONFIG = join(home.path, '.npmrc');
		expect((await hangar('config', 'runtime', 'set', 'npx', '--runtime-image', NODE_BASE)).code).toBe(0);
		const dry = await hangar('build', `npx://${MEMORY_PACKAGE}`, '--dry-run');
		expect(dry.code).toBe(0);
		tag = /^# image (\S+)/.exec(dry.stdout)![1]!;
		// Built afresh by the first run (the builder's layer cache keeps it quick).
		await run('docker', ['rmi', '-f', tag]).catch(() => undefined);
		firstRun = await hangar('run', `npx://${MEMORY_PACKAGE}`, '--name', first);
	}, 600_000);

	afterAll(async () => {
		await hangar('rm', first, second, fromRegistry);
		await home?.dispose();
	}, 120_000);

	it('builds the image of an npm package and runs it as a stdio workload', async () => {
		expect(firstRun.stderr).toContain(`building ${tag} for npx://${MEMORY_PACKAGE}@`);
		expect(firstRun.stderr).toMatch(/Step \d+\/\d+ : RUN \["npm","install"/);
		expect(firstRun).toMatchObject({ code: 0, stdout: expect.stringContaining(`Workload ${first} is running`) });
		const info = JSON.parse((await hangar('info', first, '--json')).stdout);
		expect(info).toMatchObject({ image: expect.stringMatching(/^npx:\/\/@modelcontextprotocol\/server-memory@\d+\.\d+\.\d+$/), transport: 'stdio', status: 'running' });
		const call = await hangar('mcp', 'call', first, 'read_graph', '--json');
		expect(call.code).toBe(0);
		expect(JSON.parse(call.stdout).content[0].text).toContain('entities');
	});

	it('runs as a non-root user, and a second run of the package does not rebuild', async () => {
		const [image] = JSON.parse((await run('docker', ['image', 'inspect', tag])).stdout);
		expect(image.Config.User).toBe('65532:65532');
		expect(image.Config.Labels['hangar.package']).toMatch(/^npx:\/\/@modelcontextprotocol\/server-memory@/);
		const again = await hangar('run', `npx://${MEMORY_PACKAGE}`, '--name', second);
		expect(again.code).toBe(0);
		expect(again.stderr).not.toContain('building');
		expect(JSON.parse((await run('docker', ['image', 'inspect', tag])).stdout)[0].Id).toBe(image.Id);
	});

	it('leaves the package configuration in the build stage: no layer or history entry of the final image holds it', async () => {
		const history = (await run('docker', ['history', '--no-trunc', '--format', '{{.CreatedBy}}', tag])).stdout;
		expect(history).toMatch(/COPY dir:[0-9a-f]+ in \/app/); // the classic builder's record of COPY --from=builder
		expect(history).not.toContain('hangar-build');
		const [image] = JSON.parse((await run('docker', ['image', 'inspect', tag])).stdout);
		expect(JSON.stringify(image.Config.Env)).not.toMatch(/NPM_CONFIG_USERCONFIG|hangar-build/);
		// Every layer of the final image, base layers included, as `docker save` writes them.
		const { stdout } = await run('sh', ['-c', `docker save ${tag} | grep -a -c ${CANARY} || true`], { maxBuffer: 1 << 20 });
		expect(stdout.trim()).toBe('0');
	});

	it('runs a registry entry published as an npm package by name, with its arguments and environment; a nuget-only entry is a 400 naming it', async () => {
		const version = /^# npx:\/\/\S+@(\S+), built by Hangar$/m.exec((await hangar('build', `npx://${MEMORY_PACKAGE}`, '--dry-run')).stdout)![1]!;
		const file = join(home.path, 'registry.json');
		const npm = {
			name: 'io.example.packages/memory',
			description: 'The memory server, from npm',
			version,
			packages: [
				{
					registryType: 'npm',
					identifier: MEMORY_PACKAGE,
					version,
					transport: { type: 'stdio' },
					environmentVariables: [{ name: 'MEMORY_FILE_PATH', description: 'Where the graph is kept', default: '/home/hangar/graph.jsonl' }],
				},
			],
		};
		const nuget = { name: 'io.example.packages/dotnet', description: 'Only on NuGet', version: '1.0.0', packages: [{ registryType: 'nuget', identifier: 'Example.Mcp', version: '1.0.0', transport: { type: 'stdio' } }] };
		await writeFile(file, JSON.stringify({ version: '1.0.0', meta: { last_updated: '2026-11-01T00:00:00Z' }, data: { servers: [npm, nuget] } }));
		expect((await hangar('registry', 'set', file)).code).toBe(0);
		expect((await hangar('registry', 'server', 'io.example.packages/memory')).stdout).toContain(`runs as:     npx://${MEMORY_PACKAGE}@${version}, an image built once from the npm package (stdio)`);

		const result = await hangar('run', 'io.example.packages/memory', '--name', fromRegistry);
		expect(result).toMatchObject({ code: 0, stdout: expect.stringContaining('is running') });
		expect(JSON.parse((await hangar('info', fromRegistry, '--json')).stdout)).toMatchObject({ image: `npx://${MEMORY_PACKAGE}@${version}`, env_vars: { MEMORY_FILE_PATH: '/home/hangar/graph.jsonl' } });
		// The non-root user writes where the entry's environment says.
		const created = await hangar('mcp', 'call', fromRegistry, 'create_entities', '--arg', 'entities=[{"name":"hangar","entityType":"tool","observations":["built once"]}]');
		expect(created.code).toBe(0);
		expect((await hangar('mcp', 'call', fromRegistry, 'read_graph')).stdout).toContain('built once');

		const refused = await hangar('run', 'io.example.packages/dotnet');
		expect(refused.code).toBe(2); // a 400: the request, not the machine, is at fault
		expect(refused.stderr).toContain('server io.example.packages/dotnet is published only as a nuget package (registryType nuget), which Hangar cannot run');
	});

	it('a failed build names its step with its last lines, and leaves no workload', async () => {
		const name = uniqueName('broken');
		// An image with node but no npm: the install step fails.
		const result = await hangar('run', `npx://${MEMORY_PACKAGE}`, '--name', name, '--runtime-image', 'hangar-test/memory:1');
		expect(result.code).toBe(1);
		expect(result.stderr).toMatch(/the image build failed at step \d+\/\d+ : RUN \["npm","install"/);
		expect(result.stderr).toContain('last lines of the build:');
		const listed = JSON.parse((await hangar('ls', '--all', '--json')).stdout) as Array<{ name: string }>;
		expect(listed.map((workload) => workload.name)).not.toContain(name);
	});

	it('takes the build stage\'s npm configuration from a Hangar secret (--build-secret), and no layer of the final image holds it', async () => {
		expect((await hangar('secret', 'setup', '--provider', 'environment')).code).toBe(0);
		home.env.HANGAR_SECRET_CORP_NPMRC = `@corp:registry=https://npm.corp.invalid/\n//npm.corp.invalid/:_authToken=${SECRET_CANARY}\n`;
		home.env.HANGAR_SECRET_DEAD_NPMRC = 'registry=http://127.0.0.1:9/\n';
		const dry = await hangar('build', `npx://${MEMORY_PACKAGE}`, '--build-secret', 'npmrc=secret:CORP_NPMRC', '--dry-run');
		expect(dry.stdout).not.toContain(SECRET_CANARY);
		// The secret replaces the user's .npmrc: its registry is the one asked.
		const dead = await hangar('build', `npx://${MEMORY_PACKAGE}`, '--build-secret', 'npmrc=secret:DEAD_NPMRC');
		expect(dead).toMatchObject({ code: 1, stderr: expect.stringContaining(`cannot look up ${MEMORY_PACKAGE}`) });
		expect((await hangar('build', `npx://${MEMORY_PACKAGE}`, '--build-secret', 'npmrc=secret:MISSING')).stderr).toContain('no secret named MISSING');

		const secretTag = `hangar-test/secret-npmrc:${uniqueName('t')}`;
		try {
			const built = await hangar('build', `npx://${MEMORY_PACKAGE}`, '--build-secret', 'npmrc=secret:CORP_NPMRC', '--tag', secretTag);
			expect(built).toMatchObject({ code: 0, stdout: expect.stringContaining(`Built ${secretTag}`) });
			expect((await run('docker', ['history', '--no-trunc', '--format', '{{.CreatedBy}}', secretTag])).stdout).not.toContain('hangar-build');
			const { stdout } = await run('sh', ['-c', `docker save ${secretTag} | grep -a -c ${SECRET_CANARY} || true`], { maxBuffer: 1 << 20 });
			expect(stdout.trim()).toBe('0');
		} finally {
			await run('docker', ['rmi', '-f', secretTag]).catch(() => undefined);
		}
	});
});

describe('hangar run uvx://… from a simple index on this machine', { timeout: 600_000 }, () => {
	let home: TestHome;
	let index: ChildProcess | undefined;
	const hangar = (...args: string[]) => runHangar(args, home.env);
	const name = uniqueName('uvx');

	beforeAll(async () => {
		home = await createTestHome();
		const root = join(home.path, 'index');
		await run('python3', [join(import.meta.dirname, 'fixtures/packages/make-index.py'), root]);
		const port = await freePort();
		index = spawn('python3', ['-m', 'http.server', '--bind', '127.0.0.1', String(port), '--directory', root], { stdio: 'ignore' });
		const url = `http://127.0.0.1:${port}/simple/`;
		await waitFor(async () => (await fetch(url).catch(() => undefined))?.ok, 'the simple index to answer');
		home.env.UV_DEFAULT_INDEX = url;
		// No uv image can be pulled here: the stand-in has Debian's python3, and the build installs with pip.
		// The index listens on this machine's loopback, which the build reaches on the host's network.
		expect((await hangar('config', 'runtime', 'set', 'uvx', '--runtime-image', PYTHON_BASE, '--build-network', 'host')).code).toBe(0);
	});

	afterAll(async () => {
		await hangar('rm', name);
		index?.kill();
		await home?.dispose();
	}, 120_000);

	it('resolves the newest release from the index, builds once and runs the project\'s command', async () => {
		const dry = await hangar('build', 'uvx://hangar-echo-mcp', '--dry-run');
		expect(dry.stdout).toContain('# uvx://hangar-echo-mcp@1.0.0, built by Hangar');
		expect(dry.stdout).toContain('(built on network host)');
		const tag = /^# image (\S+)/.exec(dry.stdout)![1]!;
		await run('docker', ['rmi', '-f', tag]).catch(() => undefined);
		const result = await hangar('run', 'uvx://hangar-echo-mcp', '--name', name);
		expect(result.stderr).toContain(`building ${tag} for uvx://hangar-echo-mcp@1.0.0`);
		expect(result).toMatchObject({ code: 0, stdout: expect.stringContaining(`Workload ${name} is running`) });
		expect(await hangar('mcp', 'call', name, 'echo', '--arg', 'message=from PyPI')).toMatchObject({ code: 0, stdout: 'py-echo 1.0.0: from PyPI\n' });
		const pinned = await hangar('build', 'uvx://hangar-echo-mcp@0.9.0');
		expect(pinned).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Built hangar-build\/uvx-hangar-echo-mcp:0\.9\.0-[0-9a-f]{12} \(uvx:\/\/hangar-echo-mcp@0\.9\.0\)\n$/) });
		expect((await hangar('build', 'uvx://hangar-echo-mcp@0.9.0')).stdout).toMatch(/^Already built: hangar-build\/uvx-hangar-echo-mcp:0\.9\.0-/);
	});
});

describe('hangar run go://./… of a local module', { timeout: 600_000 }, () => {
	let home: TestHome;
	const hangar = (...args: string[]) => runHangar(args, home.env);
	const name = uniqueName('go');
	const source = 'go://./test/fixtures/packages/go-echo';

	beforeAll(async () => {
		home = await createTestHome();
		// Nothing is downloaded: the module uses the standard library only.
		Object.assign(home.env, { GOPROXY: 'off', GOFLAGS: '-mod=mod' });
		// No golang or distroless image can be pulled here: Debian's Go in an imported image builds, and the binary runs on scratch.
		expect((await hangar('config', 'runtime', 'set', 'go', '--runtime-image', GO_BASE, '--final-image', 'scratch')).code).toBe(0);
	});

	afterAll(async () => {
		await hangar('rm', name);
		await home?.dispose();
	}, 120_000);

	it('builds the module in a multi-stage image whose runtime stage holds only the binary, and runs it', async () => {
		const dry = await hangar('build', source, '--dry-run');
		expect(dry.stdout).toContain(`FROM ${GO_BASE} AS builder`);
		expect(dry.stdout).toContain('RUN ["go","build","-o","/out/server","."]');
		const tag = /^# image (\S+)/.exec(dry.stdout)![1]!;
		await run('docker', ['rmi', '-f', tag]).catch(() => undefined);

		const result = await hangar('run', source, '--name', name);
		expect(result.stderr).toContain(`building ${tag} for go://`);
		expect(result).toMatchObject({ code: 0, stdout: expect.stringContaining(`Workload ${name} is running`) });
		const tools = JSON.parse((await hangar('mcp', 'tools', name, '--json')).stdout) as Array<{ name: string }>;
		expect(tools.map((tool) => tool.name)).toEqual(['echo']);
		expect(await hangar('mcp', 'call', name, 'echo', '--arg', 'message=from Go')).toMatchObject({ code: 0, stdout: 'go-echo: from Go\n' });

		// The runtime stage is scratch plus two layers: the binary and the user's home; no toolchain, no sources.
		const [image] = JSON.parse((await run('docker', ['image', 'inspect', tag])).stdout);
		expect(image.RootFS.Layers).toHaveLength(2);
		expect(image.Size).toBeLessThan(10 * 1024 * 1024);
		expect(image.Config.User).toBe('65532:65532');
		expect(JSON.stringify(image.Config.Env)).not.toMatch(/GOROOT|GOPROXY/);
		const history = (await run('docker', ['history', '--no-trunc', '--format', '{{.CreatedBy}}', tag])).stdout;
		expect(history).not.toMatch(/go build|hangar-build|\/src/);
	});
});
