/**
 * Where the container engine is, found the way users expect: `DOCKER_HOST`; the Docker CLI's
 * current context (`DOCKER_CONTEXT`, else `currentContext` of `$DOCKER_CONFIG/config.json`);
 * then the first socket that exists of the default Docker socket, Docker Desktop's, Colima's,
 * Rancher Desktop's, and Podman's rootless and rootful ones (`podman system service`).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface EngineAddress {
	/** `unix:///path`, `tcp://host:port`, `ssh://…` or `npipe://…`. */
	readonly host: string;
	/** How it was found, for `hangar version` and error messages. */
	readonly foundBy: string;
}

const DEFAULT_SOCKET = '/var/run/docker.sock';

export function findEngine(env: NodeJS.ProcessEnv = process.env, exists: (path: string) => boolean = existsSync): EngineAddress {
	if (env.DOCKER_HOST) return { host: env.DOCKER_HOST, foundBy: 'DOCKER_HOST' };
	const home = env.HOME || homedir();
	const context = dockerContext(env, home);
	if (context) return context;
	const runtimeDir = env.XDG_RUNTIME_DIR || (typeof process.getuid === 'function' ? `/run/user/${process.getuid()}` : undefined);
	const candidates: Array<[string | undefined, string]> = [
		[DEFAULT_SOCKET, 'the default Docker socket'],
		[join(home, '.docker/run/docker.sock'), "Docker Desktop's socket"],
		[join(env.COLIMA_HOME || join(home, '.colima'), 'default/docker.sock'), "Colima's socket"],
		[join(home, '.rd/docker.sock'), "Rancher Desktop's socket"],
		[runtimeDir && join(runtimeDir, 'podman/podman.sock'), "Podman's rootless socket"],
		['/run/podman/podman.sock', "Podman's rootful socket"],
	];
	for (const [path, name] of candidates) if (path && exists(path)) return { host: `unix://${path}`, foundBy: name };
	return { host: `unix://${DEFAULT_SOCKET}`, foundBy: 'the default Docker socket' };
}

/** The endpoint of the Docker CLI's current context, unless that is `default`. */
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
	const digest = createHash('sha256').update(name).digest('hex');
	try {
		const meta = JSON.parse(readFileSync(join(configDir, 'contexts/meta', digest, 'meta.json'), 'utf8')) as { Endpoints?: { docker?: { Host?: string } } };
		const host = meta.Endpoints?.docker?.Host;
		return host ? { host, foundBy: `the Docker context ${name}` } : undefined;
	} catch {
		return undefined;
	}
}
