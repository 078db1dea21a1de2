/**
 * Finding the container engine as users expect (`DOCKER_HOST`, the Docker context, the sockets
 * of Docker, Docker Desktop, Colima, Rancher Desktop and Podman), and `hangar version` naming it.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineOptions } from '../server/runtime/docker.js';
import { findEngine, pipePathOf } from '../server/runtime/engines.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar } from './support/processes.js';

let home: TestHome;

beforeAll(async () => {
	home = await createTestHome();
});

afterAll(async () => {
	await home?.dispose();
});

/** Only `present` exist, as far as the search can tell. */
const only = (...present: string[]) => (path: string) => present.includes(path);

describe('findEngine', () => {
	it('takes DOCKER_HOST first', () => {
		expect(findEngine({ HOME: '/h', DOCKER_HOST: 'tcp://10.0.0.2:2376' }, only('/var/run/docker.sock'))).toEqual({ host: 'tcp://10.0.0.2:2376', foundBy: 'DOCKER_HOST' });
	});

	it("then the Docker CLI's current context, from DOCKER_CONTEXT or config.json", async () => {
		const config = join(home.path, 'docker');
		const meta = (name: string) => join(config, 'contexts/meta', createHash('sha256').update(name).digest('hex'));
		for (const [name, host] of [['colima', 'unix:///Users/me/.colima/default/docker.sock'], ['remote', 'ssh://me@build-box']] as const) {
			await mkdir(meta(name), { recursive: true });
			await writeFile(join(meta(name), 'meta.json'), JSON.stringify({ Name: name, Endpoints: { docker: { Host: host, SkipTLSVerify: false } } }));
		}
		await writeFile(join(config, 'config.json'), JSON.stringify({ currentContext: 'colima' }));
		const env = { HOME: '/h', DOCKER_CONFIG: config };
		expect(findEngine(env, only('/var/run/docker.sock'))).toEqual({ host: 'unix:///Users/me/.colima/default/docker.sock', foundBy: 'the Docker context colima' });
		expect(findEngine({ ...env, DOCKER_CONTEXT: 'remote' }, only())).toEqual({ host: 'ssh://me@build-box', foundBy: 'the Docker context remote' });
		expect(findEngine({ ...env, DOCKER_CONTEXT: 'default' }, only('/var/run/docker.sock')).foundBy).toBe('the default Docker socket');
	});

	it('then the first socket that exists: Docker, Docker Desktop, Colima, Rancher Desktop, Podman rootless and rootful', () => {
		const env = { HOME: '/h', XDG_RUNTIME_DIR: '/run/user/1000', DOCKER_CONFIG: '/nonexistent' };
		expect(findEngine(env, only('/h/.docker/run/docker.sock', '/run/podman/podman.sock'))).toEqual({ host: 'unix:///h/.docker/run/docker.sock', foundBy: "Docker Desktop's socket" });
		expect(findEngine(env, only('/h/.colima/default/docker.sock'))).toEqual({ host: 'unix:///h/.colima/default/docker.sock', foundBy: "Colima's socket" });
		expect(findEngine({ ...env, COLIMA_HOME: '/c' }, only('/c/default/docker.sock')).foundBy).toBe("Colima's socket");
		expect(findEngine(env, only('/h/.rd/docker.sock')).foundBy).toBe("Rancher Desktop's socket");
		expect(findEngine(env, only('/run/user/1000/podman/podman.sock', '/run/podman/podman.sock'))).toEqual({ host: 'unix:///run/user/1000/podman/podman.sock', foundBy: "Podman's rootless socket" });
		expect(findEngine(env, only('/run/podman/podman.sock'))).toEqual({ host: 'unix:///run/podman/podman.sock', foundBy: "Podman's rootful socket" });
		expect(findEngine(env, only())).toEqual({ host: 'unix:///var/run/docker.sock', foundBy: 'the default Docker socket' });
	});
});

describe('findEngine on macOS', () => {
	const env = { HOME: '/Users/me', TMPDIR: '/var/folders/xy/T/', DOCKER_CONFIG: '/nonexistent' };
	const found = (...present: string[]) => findEngine(env, only(...present), 'darwin');

	it('finds each product where it puts its socket', () => {
		expect(found('/Users/me/.docker/run/docker.sock')).toEqual({ host: 'unix:///Users/me/.docker/run/docker.sock', foundBy: "Docker Desktop's socket" });
		expect(found('/Users/me/.orbstack/run/docker.sock')).toEqual({ host: 'unix:///Users/me/.orbstack/run/docker.sock', foundBy: "OrbStack's socket" });
		expect(found('/Users/me/.colima/default/docker.sock')).toEqual({ host: 'unix:///Users/me/.colima/default/docker.sock', foundBy: "Colima's socket" });
		expect(found('/Users/me/.rd/docker.sock')).toEqual({ host: 'unix:///Users/me/.rd/docker.sock', foundBy: "Rancher Desktop's socket" });
		expect(found('/var/folders/xy/T/podman/podman-machine-default-api.sock')).toEqual({
			host: 'unix:///var/folders/xy/T/podman/podman-machine-default-api.sock',
			foundBy: "Podman machine's socket",
		});
		expect(found('/Users/me/.local/share/containers/podman/machine/podman-machine-default/podman.sock').foundBy).toBe("Podman machine's socket");
		expect(found('/Users/me/.local/share/containers/podman/machine/qemu/podman.sock').foundBy).toBe("Podman machine's socket");
	});

	it('prefers the default socket (which Docker Desktop and OrbStack link), then Docker Desktop over the others', () => {
		expect(found('/var/run/docker.sock', '/Users/me/.orbstack/run/docker.sock').foundBy).toBe('the default Docker socket');
		expect(found('/Users/me/.orbstack/run/docker.sock', '/Users/me/.docker/run/docker.sock').foundBy).toBe("Docker Desktop's socket");
	});

	it("never looks where only Linux puts a socket, and honours DOCKER_HOST as on Linux", () => {
		expect(found('/run/podman/podman.sock')).toEqual({ host: 'unix:///var/run/docker.sock', foundBy: 'the default Docker socket' });
		expect(findEngine({ ...env, DOCKER_HOST: 'unix:///Users/me/.colima/work/docker.sock' }, only(), 'darwin').foundBy).toBe('DOCKER_HOST');
	});
});

describe('findEngine on Windows', () => {
	const env = { USERPROFILE: 'C:\\Users\\me', DOCKER_CONFIG: 'C:\\nonexistent' };

	it("uses Docker Desktop's pipe, else Podman machine's, and Docker Desktop's when neither is there yet", () => {
		expect(findEngine(env, only('\\\\.\\pipe\\docker_engine', '\\\\.\\pipe\\podman-machine-default'), 'win32')).toEqual({
			host: 'npipe:////./pipe/docker_engine',
			foundBy: "Docker Desktop's pipe",
		});
		expect(findEngine(env, only('\\\\.\\pipe\\podman-machine-default'), 'win32')).toEqual({ host: 'npipe:////./pipe/podman-machine-default', foundBy: "Podman machine's pipe" });
		expect(findEngine(env, only('/var/run/docker.sock'), 'win32')).toEqual({ host: 'npipe:////./pipe/docker_engine', foundBy: "Docker Desktop's pipe (the default; none answers yet)" });
	});

	it('honours DOCKER_HOST, npipe:// included, and the Docker context', async () => {
		expect(findEngine({ ...env, DOCKER_HOST: 'npipe:////./pipe/dockerDesktopLinuxEngine' }, only(), 'win32')).toEqual({ host: 'npipe:////./pipe/dockerDesktopLinuxEngine', foundBy: 'DOCKER_HOST' });
		const config = join(home.path, 'docker-windows');
		const meta = join(config, 'contexts/meta', createHash('sha256').update('desktop-linux').digest('hex'));
		await mkdir(meta, { recursive: true });
		await writeFile(join(meta, 'meta.json'), JSON.stringify({ Name: 'desktop-linux', Endpoints: { docker: { Host: 'npipe:////./pipe/dockerDesktopLinuxEngine' } } }));
		await writeFile(join(config, 'config.json'), JSON.stringify({ currentContext: 'desktop-linux' }));
		expect(findEngine({ ...env, DOCKER_CONFIG: config }, only(), 'win32')).toEqual({ host: 'npipe:////./pipe/dockerDesktopLinuxEngine', foundBy: 'the Docker context desktop-linux' });
	});

	it('connects to a pipe by the name Windows gives it, as node:http takes it', () => {
		expect(pipePathOf('npipe:////./pipe/docker_engine')).toBe('\\\\.\\pipe\\docker_engine');
		expect(pipePathOf('npipe://')).toBe('\\\\.\\pipe\\docker_engine');
		expect(engineOptions('npipe:////./pipe/podman-machine-default', {})).toEqual({ socketPath: '\\\\.\\pipe\\podman-machine-default' });
	});
});

describe('hangar version', () => {
	it('names the engine it uses, and where none answers, the address it tried', async () => {
		expect((await runHangar(['version'], home.env)).stdout).toMatch(/\nengine: docker \S+ at unix:\/\/\/var\/run\/docker\.sock \(the default Docker socket\)\n$/);
		const missing = await runHangar(['version', '--json'], { ...home.env, DOCKER_HOST: `unix://${home.path}/no.sock` });
		expect(missing.code).toBe(0);
		expect(JSON.parse(missing.stdout).runtime).toEqual({ name: 'none', error: expect.stringContaining(`no container runtime answers at unix://${home.path}/no.sock (DOCKER_HOST): ENOENT`) });
	});
});
