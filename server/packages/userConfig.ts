/**
 * The user's package configuration, as npm, pip/uv and Go find it: the npm registry and its
 * credentials (`~/.npmrc` or `NPM_CONFIG_USERCONFIG`, `NPM_CONFIG_REGISTRY`), the Python index
 * (`UV_DEFAULT_INDEX`, `UV_INDEX_URL`, `PIP_INDEX_URL`), the Go module proxy and its settings
 * (`GOPROXY`, `GOPRIVATE`, `GONOSUMDB`, `GOSUMDB`, `GOINSECURE`, `GOFLAGS`), and a CA certificate
 * for a corporate TLS proxy (`HANGAR_BUILD_CA_CERT`, npm's `cafile`, `NODE_EXTRA_CA_CERTS`,
 * `SSL_CERT_FILE`). Credentials found here go only into the build stage of an image.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface PackageConfig {
	readonly npm: {
		/** The default registry, ending in `/`. */
		readonly registry: string;
		/** `.npmrc` lines for the build stage: registries and their credentials, nothing machine-specific. */
		readonly npmrc: string;
		/** The `_authToken` of the default registry, for version look-ups. */
		readonly token?: string;
	};
	readonly python: {
		/** A simple index (PEP 503), ending in `/`; may carry credentials. */
		readonly indexUrl: string;
	};
	readonly go: {
		readonly proxy: string;
		/** Go settings passed to the build stage as they are. */
		readonly env: Readonly<Record<string, string>>;
	};
	/** PEM certificates trusted by the build stage besides the image's own. */
	readonly caCert?: string;
}

export const DEFAULT_NPM_REGISTRY = 'https://registry.npmjs.org/';
export const DEFAULT_PYTHON_INDEX = 'https://pypi.org/simple/';
export const DEFAULT_GO_PROXY = 'https://proxy.golang.org';

/** npmrc keys that say where packages come from and how to sign in there. */
const NPMRC_KEYS = /^(registry|@[^:]+:registry|\/\/.+:(_authToken|_auth|_password|username|email|always-auth|certfile|keyfile)|always-auth|strict-ssl)$/;
const GO_KEYS = ['GOPRIVATE', 'GONOPROXY', 'GONOSUMDB', 'GOSUMDB', 'GOINSECURE', 'GOFLAGS'];

export function readPackageConfig(env: NodeJS.ProcessEnv = process.env): PackageConfig {
	const npmrcPath = env.NPM_CONFIG_USERCONFIG || env.npm_config_userconfig || join(env.HOME || homedir(), '.npmrc');
	const entries = parseIni(readOptional(npmrcPath) ?? '', env);
	const caFile = env.HANGAR_BUILD_CA_CERT || entries.find(([key]) => key === 'cafile')?.[1] || env.NODE_EXTRA_CA_CERTS || env.SSL_CERT_FILE;
	const goEnv: Record<string, string> = {};
	for (const key of GO_KEYS) if (env[key]) goEnv[key] = env[key]!;
	return {
		npm: npmSettings(entries, env.NPM_CONFIG_REGISTRY || env.npm_config_registry),
		python: { indexUrl: withSlash(env.UV_DEFAULT_INDEX || env.UV_INDEX_URL || env.PIP_INDEX_URL || DEFAULT_PYTHON_INDEX) },
		go: { proxy: (env.GOPROXY || DEFAULT_GO_PROXY).split(/[,|]/)[0]!.replace(/\/$/, ''), env: goEnv },
		caCert: caFile ? readOptional(caFile) : undefined,
	};
}

/** Values of the build's package configuration taken from Hangar secrets (`runtime_config.build_secrets`). */
export interface SecretPackageConfig {
	readonly npmrc?: string;
	readonly indexUrl?: string;
	readonly caCert?: string;
}

/**
 * The configuration with what secrets give in place of the user's files: a whole `.npmrc`
 * (kept to its registry and credential lines, as a user's is), an index URL, a CA certificate.
 */
export function withSecretConfig(config: PackageConfig, secrets: SecretPackageConfig): PackageConfig {
	return {
		...config,
		...(secrets.npmrc !== undefined && { npm: npmSettings(parseIni(secrets.npmrc, {}), undefined) }),
		...(secrets.indexUrl !== undefined && { python: { indexUrl: withSlash(secrets.indexUrl.trim()) } }),
		...(secrets.caCert !== undefined && { caCert: secrets.caCert }),
	};
}

/** The npm part of the configuration from an npmrc's entries (and a registry that overrides it). */
function npmSettings(entries: ReadonlyArray<[string, string]>, registryOverride: string | undefined): PackageConfig['npm'] {
	const kept = entries.filter(([key]) => NPMRC_KEYS.test(key));
	const registry = withSlash(registryOverride || kept.find(([key]) => key === 'registry')?.[1] || DEFAULT_NPM_REGISTRY);
	const lines = kept.filter(([key]) => key !== 'registry').map(([key, value]) => `${key}=${value}`);
	lines.unshift(`registry=${registry}`);
	const tokenKey = `${registry.replace(/^https?:/, '')}:_authToken`;
	const token = kept.find(([key]) => key === tokenKey)?.[1];
	return { registry, npmrc: `${lines.join('\n')}\n`, token };
}

/** `key=value` lines of an npmrc, with `${VAR}` taken from the environment as npm does. */
function parseIni(text: string, env: NodeJS.ProcessEnv): Array<[string, string]> {
	const entries: Array<[string, string]> = [];
	for (const raw of text.split(/\r?\n/)) {
		const line = raw.trim();
		if (!line || line.startsWith('#') || line.startsWith(';')) continue;
		const at = line.indexOf('=');
		if (at <= 0) continue;
		const value = line.slice(at + 1).trim().replace(/\$\{([^}]+)\}/g, (_, name: string) => env[name] ?? '');
		entries.push([line.slice(0, at).trim(), value.replace(/^"(.*)"$/, '$1')]);
	}
	return entries;
}

function readOptional(path: string): string | undefined {
	try {
		return readFileSync(path, 'utf8');
	} catch {
		return undefined;
	}
}

function withSlash(url: string): string {
	return url.endsWith('/') ? url : `${url}/`;
}
