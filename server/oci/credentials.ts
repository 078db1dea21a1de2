/**
 * Registry credentials the way Docker keeps them: `auths` entries of `config.json`
 * (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`, plus the containers
 * `auth.json` named by `REGISTRY_AUTH_FILE`), and credential helpers (`credHelpers`,
 * `credsStore`) run as `docker-credential-<name> get`.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { homeOf } from '../store/paths.js';
import { DOCKER_HUB } from './reference.js';

export interface RegistryCredential {
	readonly username?: string;
	readonly password?: string;
	/** An OAuth2 refresh token (`identitytoken`), exchanged at the token endpoint. */
	readonly identityToken?: string;
	/** A bearer token to send as is (`registrytoken`). */
	readonly registryToken?: string;
}

interface AuthEntry {
	auth?: string;
	username?: string;
	password?: string;
	identitytoken?: string;
	registrytoken?: string;
}

interface DockerConfig {
	auths?: Record<string, AuthEntry>;
	credHelpers?: Record<string, string>;
	credsStore?: string;
}

const HELPER_TIMEOUT_MS = 10_000;

/** `https://index.docker.io/v1/` → `docker.io`; `http://host:5000/v2` → `host:5000`. */
export function normaliseRegistryKey(key: string): string {
	const host = key.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '').toLowerCase();
	return host === 'index.docker.io' || host === 'registry-1.docker.io' ? DOCKER_HUB : host;
}

export class CredentialStore {
	private readonly cache = new Map<string, Promise<RegistryCredential | undefined>>();

	constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

	/** Credentials for `registry` (host[:port]), or undefined to go anonymous. */
	lookup(registry: string): Promise<RegistryCredential | undefined> {
		const key = normaliseRegistryKey(registry);
		let found = this.cache.get(key);
		if (!found) {
			found = this.find(key).catch(() => undefined);
			this.cache.set(key, found);
		}
		return found;
	}

	private configFiles(): string[] {
		const home = homeOf(this.env);
		const docker = join(this.env.DOCKER_CONFIG || join(home, '.docker'), 'config.json');
		return this.env.REGISTRY_AUTH_FILE ? [docker, this.env.REGISTRY_AUTH_FILE] : [docker];
	}

	private async find(registry: string): Promise<RegistryCredential | undefined> {
		for (const file of this.configFiles()) {
			const config = await readConfig(file);
			if (!config) continue;
			const helper = config.credHelpers?.[registry] ?? config.credsStore;
			if (helper) {
				const fromHelper = await runHelper(helper, registry === DOCKER_HUB ? 'https://index.docker.io/v1/' : registry);
				if (fromHelper) return fromHelper;
			}
			for (const [key, entry] of Object.entries(config.auths ?? {})) {
				if (normaliseRegistryKey(key) === registry) {
					const credential = fromEntry(entry);
					if (credential) return credential;
				}
			}
		}
		return undefined;
	}
}

async function readConfig(path: string): Promise<DockerConfig | undefined> {
	try {
		const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
		return typeof parsed === 'object' && parsed !== null ? (parsed as DockerConfig) : undefined;
	} catch {
		return undefined;
	}
}

function fromEntry(entry: AuthEntry): RegistryCredential | undefined {
	if (entry.identitytoken) return { identityToken: entry.identitytoken, ...(entry.username && { username: entry.username }) };
	if (entry.registrytoken) return { registryToken: entry.registrytoken };
	if (entry.username && entry.password) return { username: entry.username, password: entry.password };
	if (entry.auth) {
		const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
		const colon = decoded.indexOf(':');
		if (colon > 0) return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
	}
	return undefined;
}

/** `docker-credential-<helper> get`: `{Username, Secret}`; `<token>` as user means an identity token. */
function runHelper(helper: string, server: string): Promise<RegistryCredential | undefined> {
	if (!/^[\w.-]+$/.test(helper)) return Promise.resolve(undefined);
	return new Promise((resolve) => {
		const child = execFile(`docker-credential-${helper}`, ['get'], { timeout: HELPER_TIMEOUT_MS, windowsHide: true }, (error, stdout) => {
			if (error) return resolve(undefined);
			try {
				const { Username, Secret } = JSON.parse(stdout) as { Username?: string; Secret?: string };
				if (!Secret) return resolve(undefined);
				resolve(Username === '<token>' ? { identityToken: Secret } : { username: Username ?? '', password: Secret });
			} catch {
				resolve(undefined);
			}
		});
		child.stdin?.end(server);
	});
}
