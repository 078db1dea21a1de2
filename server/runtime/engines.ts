/**
 * Where the container engine is, found the way users expect on each OS: `DOCKER_HOST`; the
 * Docker CLI's current context (`DOCKER_CONTEXT`, else `currentContext` of
 * `$DOCKER_CONFIG/config.json`); then the first address that exists of the OS's known ones:
 * - Linux: the default Docker socket, Docker Desktop's, Colima's, Rancher Desktop's, and
 *   Podman's rootless and rootful ones (`podman system service`);
 * - macOS: the default socket (which Docker Desktop, OrbStack and podman-mac-helper can link),
 *   Docker Desktop's, OrbStack's, Colima's, Rancher Desktop's, and Podman machine's API socket
 *   (Podman 5 in `$TMPDIR/podman`, Podman 4 under `~/.local/share/containers`);
 * - Windows: the named pipes of Docker Desktop and of Podman machine.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { sha256Hex } from '../hash.js';
import { homeOf } from '../store/paths.js';

export interface EngineAddress {
	/** `unix:///path`, `tcp://host:port`, `ssh://…` or `npipe://…`. */
	readonly host: string;
	/** How it was found, for `hangar version` and error messages. */
	readonly foundBy: string;
}

const DEFAULT_SOCKET = '/var/run/docker.sock';
const DOCKER_DESKTOP_PIPE = 'npipe:////./pipe/docker_engine';
const PODMAN_MACHINE_PIPE = 'npipe:////./pipe/podman-machine-default';

/** `exists` is asked about file paths, and on Windows about pipe paths (`\\.\pipe\docker_engine`). */
export function findEngine(
	env: NodeJS.ProcessEnv = process.env,
	exists: (path: string) => boolean = existsSync,
	platform: NodeJS.Platform = process.platform,
): EngineAddress {
	if (env.DOCKER_HOST) return { host: env.DOCKER_HOST, foundBy: 'DOCKER_HOST' };
	const home = homeOf(env, platform);
	const context = dockerContext(env, home);
	if (context) return context;
	if (platform === 'win32') {
		for (const [host, name] of [
			[DOCKER_DESKTOP_PIPE, "Docker Desktop's pipe"],
			[PODMAN_MACHINE_PIPE, "Podman machine's pipe"],
		] as const) {
			if (exists(pipePathOf(host))) return { host, foundBy: name };
		}
		return { host: DOCKER_DESKTOP_PIPE, foundBy: "Docker Desktop's pipe (the default; none answers yet)" };
	}
	for (const [path, name] of platform === 'darwin' ? macSockets(env, home) : linuxSockets(env, home)) {
		if (path && exists(path)) return { host: `unix://${path}`, foundBy: name };
	}
	return { host: `unix://${DEFAULT_SOCKET}`, foundBy: 'the default Docker socket' };
}

type Candidates = Array<[path: string | undefined, name: string]>;

function linuxSockets(env: NodeJS.ProcessEnv, home: string): Candidates {
	const runtimeDir = env.XDG_RUNTIME_DIR || (typeof process.getuid === 'function' ? `/run/user/${process.getuid()}` : undefined);
	return [
		[DEFAULT_SOCKET, 'the default Docker socket'],
		[posix.join(home, '.docker/run/docker.sock'), "Docker Desktop's socket"],
		[colimaSocket(env, home), "Colima's socket"],
		[posix.join(home, '.rd/docker.sock'), "Rancher Desktop's socket"],
		[runtimeDir && posix.join(runtimeDir, 'podman/podman.sock'), "Podman's rootless socket"],
		['/run/podman/podman.sock', "Podman's rootful socket"],
	];
}

function macSockets(env: NodeJS.ProcessEnv, home: string): Candidates {
	const machines = posix.join(env.XDG_DATA_HOME || posix.join(home, '.local/share'), 'containers/podman/machine');
	return [
		[DEFAULT_SOCKET, 'the default Docker socket'],
		[posix.join(home, '.docker/run/docker.sock'), "Docker Desktop's socket"],
		[posix.join(home, '.orbstack/run/docker.sock'), "OrbStack's socket"],
		[colimaSocket(env, home), "Colima's socket"],
		[posix.join(home, '.rd/docker.sock'), "Rancher Desktop's socket"],
		[env.TMPDIR && posix.join(env.TMPDIR, 'podman/podman-machine-default-api.sock'), "Podman machine's socket"],
		[posix.join(machines, 'podman-machine-default/podman.sock'), "Podman machine's socket"],
		[posix.join(machines, 'qemu/podman.sock'), "Podman machine's socket"],
	];
}

function colimaSocket(env: NodeJS.ProcessEnv, home: string): string {
	return posix.join(env.COLIMA_HOME || posix.join(home, '.colima'), 'default/docker.sock');
}

/** The pipe an `npipe://` address names, as Windows spells it: `npipe:////./pipe/docker_engine` is `\\.\pipe\docker_engine`. */
export function pipePathOf(host: string): string {
	return (host.slice('npipe://'.length) || '//./pipe/docker_engine').replaceAll('/', '\\');
}

/** The endpoint of the Docker CLI's current context, unless that is `default` (read from this machine's files). */
function dockerContext(env: NodeJS.ProcessEnv, home: string): EngineAddress | undefined {
	const configDir = env.DOCKER_CONFIG || join(home, '.docker');
	let name = env.DOCKER_CONTEXT;
	if (!name) {
		try {
			name = (JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8')) as { currentContext?: string }).currentContext;
		} catch {
			return undefined;
		}
	}
	if (!name || name === 'default') return undefined;
	const digest = sha256Hex(name);
	try {
		const meta = JSON.parse(readFileSync(join(configDir, 'contexts', 'meta', digest, 'meta.json'), 'utf8')) as { Endpoints?: { docker?: { Host?: string } } };
		const host = meta.Endpoints?.docker?.Host;
		return host ? { host, foundBy: `the Docker context ${name}` } : undefined;
	} catch {
		return undefined;
	}
}
