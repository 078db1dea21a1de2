/**
 * The core workload cases on Podman (Debian's 4.3, its Docker-compatible service on the
 * rootful socket, started by scripts/test-services.sh): the engine named, HTTP and stdio
 * servers run from an image, tools called through the proxy, logs, stop, restart and removal.
 *
 * Podman 4.3's compat attach hands the request's body to the container's stdin (Docker
 * ignores it), so the attach sends none: with a body, a stdio server's first request would
 * arrive prefixed and never be answered.
 *
 * An npm package is built through Podman's compat build (Buildah) from hangar-test/node-base,
 * loaded into Podman's own image store by scripts/test-services.sh.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerRuntime } from '../server/runtime/docker.js';
import { modemEngine } from '../server/runtime/engineApi.js';
import { connect, textOf, uniqueName, waitFor } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar } from './support/processes.js';

const run = promisify(execFile);
const SOCKET = 'unix:///run/podman/podman.sock';
const MEMORY_PACKAGE = '@modelcontextprotocol/server-memory';

let home: TestHome;
const hangar = (...args: string[]) => runHangar(args, home.env);

beforeAll(async () => {
	home = await createTestHome();
	home.env.DOCKER_HOST = SOCKET;
});

afterAll(async () => {
	const listed = JSON.parse((await hangar('ls', '--all', '--json')).stdout) as Array<{ name: string }>;
	if (listed.length) await hangar('rm', ...listed.map((workload) => workload.name));
	await home?.dispose();
}, 120_000);

describe('workloads on Podman', { timeout: 300_000 }, () => {
	const name = uniqueName('podman');

	it('names the engine, with the version its /version answer gives', async () => {
		const { stdout } = await run('podman', ['version', '--format', '{{.Server.Version}}']);
		expect((await hangar('version')).stdout).toMatch(new RegExp(`\nengine: podman ${stdout.trim().replaceAll('.', '\\.')} at unix:///run/podman/podman\\.sock \\(DOCKER_HOST\\)\n$`));
	});

	it('runs an HTTP server from an image, calls it, shows its logs, stops, restarts and removes it', async () => {
		const result = await hangar('run', 'hangar-test/everything:1', '--name', name, '--transport', 'streamable-http', '--target-port', '3001', '--', 'streamableHttp');
		expect(result).toMatchObject({ code: 0, stdout: expect.stringContaining(`Workload ${name} is running`) });
		const containers = (await run('podman', ['ps', '--format', '{{.Names}}'])).stdout;
		expect(containers).toContain(`hangar-${name}-`);
		expect(await hangar('mcp', 'call', name, 'echo', '--arg', 'message=on podman')).toMatchObject({ code: 0, stdout: 'Echo: on podman\n' });
		expect((await hangar('logs', name)).stdout.length).toBeGreaterThan(0);
		expect(await hangar('stop', name)).toMatchObject({ code: 0, stdout: `${name}: stopped\n` });
		expect(await hangar('restart', name)).toMatchObject({ code: 0, stdout: `${name}: running\n` });
		expect(await hangar('mcp', 'call', name, 'echo', '--arg', 'message=again')).toMatchObject({ code: 0, stdout: 'Echo: again\n' });
		expect(await hangar('rm', name)).toMatchObject({ code: 0, stdout: `${name}: gone\n` });
		expect((await run('podman', ['ps', '-a', '--format', '{{.Names}}'])).stdout).not.toContain(`hangar-${name}-`);
	});

	it('runs a stdio server from an image: the SDK client through the proxy, stderr-only logs, stop, restart, a container restarted behind the proxy, removal', async () => {
		const stdio = uniqueName('podman-stdio');
		// No --transport: the probe attaches to the container's stdin too.
		const result = await hangar('run', 'hangar-test/everything:1', '--name', stdio, '--json', '--', 'stdio');
		expect(result.stderr).toContain('transport stdio, found by a probe');
		expect(result.code).toBe(0);
		const { url } = JSON.parse(result.stdout) as { url: string };
		const message = `through podman's attach ${stdio}`;
		const client = await connect(url, 'streamable-http');
		try {
			expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message } }))).toBe(`Echo: ${message}`);
		} finally {
			await client.close();
		}
		const logs = (await hangar('logs', stdio)).stdout;
		expect(logs).toContain('Starting default (STDIO) server');
		expect(logs).not.toContain(message);
		expect(logs).not.toContain('"jsonrpc"');

		expect(await hangar('stop', stdio)).toMatchObject({ code: 0, stdout: `${stdio}: stopped\n` });
		expect(await hangar('restart', stdio)).toMatchObject({ code: 0, stdout: `${stdio}: running\n` });
		expect(await hangar('mcp', 'call', stdio, 'echo', '--arg', 'message=restarted')).toMatchObject({ code: 0, stdout: 'Echo: restarted\n' });

		// The engine restarts the container under the proxy: the attach is lost, and made again.
		const container = (await run('podman', ['ps', '--format', '{{.Names}}'])).stdout.split('\n').find((line) => line.startsWith(`hangar-${stdio}-`))!;
		await run('podman', ['restart', container]);
		await waitFor(async () => (await hangar('mcp', 'call', stdio, 'echo', '--arg', 'message=reattached')).stdout === 'Echo: reattached\n', 'the proxy to attach again', 60_000);

		expect(await hangar('rm', stdio)).toMatchObject({ code: 0, stdout: `${stdio}: gone\n` });
		expect((await run('podman', ['ps', '-a', '--format', '{{.Names}}'])).stdout).not.toContain(`hangar-${stdio}-`);
	});

	it('attaches without a request body through dockerode\'s transport too (the one `ssh://` engines use)', async () => {
		const runtime = new DockerRuntime({ DOCKER_HOST: SOCKET });
		const id = await runtime.create({ name: uniqueName('hangar-podman-modem'), image: 'hangar-test/everything:1', args: ['stdio'], env: {}, labels: {}, interactive: true, mounts: [], network: 'none', restartPolicy: 'no' });
		try {
			const socket = await modemEngine(new Docker({ socketPath: '/run/podman/podman.sock' })).hijack(`/containers/${id}/attach?stream=1&stdin=1&stdout=1&stderr=1`);
			let output = '';
			socket.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
			await runtime.start(id);
			socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`);
			await waitFor(async () => output.includes('"id":7'), 'the answer to initialize');
			socket.destroy();
		} finally {
			await runtime.remove(id);
		}
	});

	it('builds an npm package with Podman, runs it, runs it again without a rebuild; a failed build names its step and leaves no workload', async () => {
		const [first, second, broken] = [uniqueName('podman-npx'), uniqueName('podman-npx'), uniqueName('podman-broken')];
		expect((await hangar('config', 'runtime', 'set', 'npx', '--runtime-image', 'hangar-test/node-base:1')).code).toBe(0);
		const tag = /^# image (\S+)/m.exec((await hangar('build', `npx://${MEMORY_PACKAGE}`, '--dry-run')).stdout)![1]!;
		await run('podman', ['rmi', '-f', tag]).catch(() => undefined); // built by this test (Buildah's layer cache keeps it quick)
		const built = await hangar('run', `npx://${MEMORY_PACKAGE}`, '--name', first);
		expect(built.stderr).toContain(`building ${tag} for npx://${MEMORY_PACKAGE}@`);
		expect(built.stderr).toMatch(/STEP \d+\/\d+: RUN \["npm","install"/);
		expect(built).toMatchObject({ code: 0, stdout: expect.stringContaining(`Workload ${first} is running`) });
		expect((await hangar('mcp', 'call', first, 'read_graph')).stdout).toContain('entities');
		const imageId = async () => (await run('podman', ['image', 'inspect', '--format', '{{.Id}} {{.Config.User}}', tag])).stdout.trim();
		const before = await imageId();
		expect(before).toMatch(/ 65532:65532$/);

		const again = await hangar('run', `npx://${MEMORY_PACKAGE}`, '--name', second);
		expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining(`Workload ${second} is running`) });
		expect(again.stderr).not.toContain('building');
		expect(await imageId()).toBe(before);
		expect((await hangar('mcp', 'call', second, 'read_graph')).stdout).toContain('entities');
		expect(await hangar('rm', first, second)).toMatchObject({ code: 0 });

		// An image with node but no npm: the install step fails.
		const failed = await hangar('run', `npx://${MEMORY_PACKAGE}`, '--name', broken, '--runtime-image', 'hangar-test/memory:1');
		expect(failed.code).toBe(1);
		expect(failed.stderr).toMatch(/the image build failed at step \[1\/2\] \d+\/\d+: RUN \["npm","install"/);
		const listed = JSON.parse((await hangar('ls', '--all', '--json')).stdout) as Array<{ name: string }>;
		expect(listed.map((workload) => workload.name)).not.toContain(broken);
	});
});
