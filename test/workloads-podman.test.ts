/**
 * The core workload cases on Podman (Debian's 4.3, its Docker-compatible service on the
 * rootful socket, started by scripts/test-services.sh): the engine named, an HTTP server run
 * from an image, tools called through the proxy, logs, stop, restart and removal.
 *
 * What Podman 4.3 does not do here: its compat attach delivers no stdin over the hijacked
 * connection, so stdio servers start but never answer (docs/packages.md, Engines).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar } from './support/processes.js';

const run = promisify(execFile);
const SOCKET = 'unix:///run/podman/podman.sock';

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

	it('names the engine', async () => {
		expect((await hangar('version')).stdout).toMatch(/\nengine: podman 4\.\S+ at unix:\/\/\/run\/podman\/podman\.sock \(DOCKER_HOST\)\n$/);
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
});
