/**
 * What version a package reference stands for, asked of the package's registry: npm's
 * dist-tags and versions, a Python simple index's file names (PEP 503, or its JSON form, PEP
 * 691/700), the Go module proxy's `@latest` and `.info`. A local Go directory's "version" is
 * the digest of its files. The resolved version goes into the image tag, so a new release
 * builds a new image and the same one does not.
 *
 * Package registries are the user's (a corporate mirror on the LAN, a local index): private
 * and loopback addresses are reached, link-local ones never (registry/fetch.ts's guard).
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import { fetchJson, type FetchedJson } from '../registry/fetch.js';
import { SourceError } from '../registry/errors.js';
import type { PackageReference } from './reference.js';
import type { PackageConfig } from './userConfig.js';

const TIMEOUT_MS = 30_000;
/** Exact versions need no look-up: npm semver, PEP 440 releases, Go's `v` versions. */
const EXACT = { npx: /^\d+\.\d+\.\d+([-+].+)?$/, uvx: /^\d+(\.\d+)*((a|b|rc|\.post|\.dev)\d+)*$/, go: /^v\d+\.\d+\.\d+([-+].+)?$/ } as const;

/**
 * The exact version (or, for a local directory, `local-DIGEST`). An exact version is taken as
 * it is unless `confirm` asks the registry whether it has it.
 */
export async function resolveVersion(reference: PackageReference, config: PackageConfig, signal?: AbortSignal, confirm = false): Promise<string> {
	if (reference.local) return `local-${await directoryDigest(reference.name)}`;
	if (!confirm && reference.version && EXACT[reference.scheme].test(reference.version)) return reference.version;
	switch (reference.scheme) {
		case 'npx':
			return npmVersion(reference, config, signal);
		case 'uvx':
			return pythonVersion(reference, config, signal);
		case 'go':
			return goVersion(reference, config, signal);
	}
}

async function npmVersion(reference: PackageReference, config: PackageConfig, signal?: AbortSignal): Promise<string> {
	const url = `${config.npm.registry}${reference.name.replace('/', '%2f')}`;
	const headers: Record<string, string> = { Accept: 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8' };
	if (config.npm.token) headers.Authorization = `Bearer ${config.npm.token}`;
	const document = (await lookUp(url, reference, headers, signal)).json as { 'dist-tags'?: Record<string, string>; versions?: Record<string, unknown> } | undefined;
	const wanted = reference.version ?? 'latest';
	const tagged = document?.['dist-tags']?.[wanted];
	if (tagged) return tagged;
	const found = newest(Object.keys(document?.versions ?? {}).filter((version) => isPrefixOf(wanted, version) && !version.includes('-')));
	if (found) return found;
	throw noVersion(reference, 'a version, a version prefix (1, 1.2) or a dist-tag');
}

async function pythonVersion(reference: PackageReference, config: PackageConfig, signal?: AbortSignal): Promise<string> {
	const project = reference.name.toLowerCase().replace(/[-_.]+/g, '-');
	const index = new URL(config.python.indexUrl);
	const headers: Record<string, string> = { Accept: 'application/vnd.pypi.simple.v1+json, text/html; q=0.1' };
	if (index.username) headers.Authorization = `Basic ${Buffer.from(`${decodeURIComponent(index.username)}:${decodeURIComponent(index.password)}`).toString('base64')}`;
	index.username = index.password = '';
	const page = await lookUp(new URL(`${project}/`, index).toString(), reference, headers, signal);
	const json = page.json as { versions?: string[]; files?: Array<{ filename: string }> } | undefined;
	const files = json?.files?.map((file) => file.filename) ?? [...page.text.matchAll(/<a[^>]*>([^<]+)<\/a>/g)].map((match) => match[1]!.trim());
	const versions = json?.versions ?? files.map((file) => versionOfDistribution(file, project)).filter((version): version is string => version !== undefined);
	const found = newest(versions.filter((version) => isPrefixOf(reference.version ?? '', version) && /^\d+(\.\d+)*$/.test(version)));
	if (found) return found;
	throw noVersion(reference, 'a release or a release prefix (1, 1.2)');
}

async function goVersion(reference: PackageReference, config: PackageConfig, signal?: AbortSignal): Promise<string> {
	const escaped = reference.name.replace(/[A-Z]/g, (letter) => `!${letter.toLowerCase()}`);
	const path = reference.version && reference.version !== 'latest' ? `@v/${reference.version}.info` : '@latest';
	const info = (await lookUp(`${config.go.proxy}/${escaped}/${path}`, reference, {}, signal)).json as { Version?: string } | undefined;
	if (info?.Version) return info.Version;
	throw noVersion(reference, 'a version or a branch the module proxy knows');
}

async function lookUp(url: string, reference: PackageReference, headers: Record<string, string>, signal?: AbortSignal): Promise<FetchedJson> {
	let response: FetchedJson;
	try {
		response = await fetchJson(url, { allowPrivate: true, timeoutMs: TIMEOUT_MS, signal, maxBytes: 64 * 1024 * 1024 }, headers);
	} catch (error) {
		if (error instanceof SourceError && error.failure === 'cancelled') throw HangarError.cancelled(`the version look-up of ${reference.name}`);
		const status = error instanceof SourceError && error.failure === 'refused' ? 400 : 502;
		throw new HangarError(status, `cannot look up ${reference.name}: ${(error as Error).message}`, 'package_registry_unreachable', { cause: error });
	}
	if (response.status === 404) throw HangarError.notFound(`${reference.scheme}://${reference.name}: no such package at ${new URL(url).origin}`, 'package_not_found');
	if (response.status === 401 || response.status === 403) {
		throw new HangarError(502, `${new URL(url).origin} refused the look-up of ${reference.name} (HTTP ${response.status}): check the registry credentials`, 'package_registry_auth');
	}
	if (response.status !== 200) throw new HangarError(502, `${new URL(url).origin} answered HTTP ${response.status} for ${reference.name}`, 'package_registry_error');
	return response;
}

function noVersion(reference: PackageReference, expected: string): HangarError {
	return HangarError.notFound(`${reference.scheme}://${reference.name} has no version ${JSON.stringify(reference.version ?? 'latest')} (give ${expected})`, 'package_version_not_found');
}

/** `1.2` is a prefix of `1.2.3`, not of `1.20.0`; the empty prefix of everything. */
function isPrefixOf(prefix: string, version: string): boolean {
	return prefix === '' || prefix === 'latest' || version === prefix || version.startsWith(`${prefix}.`);
}

/** The highest of release versions, compared number by number. */
function newest(versions: readonly string[]): string | undefined {
	const parts = (version: string) => version.split(/[.+-]/).map((part) => Number.parseInt(part, 10) || 0);
	return [...versions].sort((a, b) => {
		const [left, right] = [parts(a), parts(b)];
		for (let index = 0; index < Math.max(left.length, right.length); index++) {
			const difference = (left[index] ?? 0) - (right[index] ?? 0);
			if (difference) return difference;
		}
		return 0;
	}).at(-1);
}

/** The version in a wheel or sdist file name (`name-1.2.3-py3-none-any.whl`, `name-1.2.3.tar.gz`). */
function versionOfDistribution(file: string, project: string): string | undefined {
	const normalised = file.toLowerCase().replace(/[-_.]+/g, '-');
	if (!normalised.startsWith(`${project}-`)) return undefined;
	const rest = file.slice(project.length + 1);
	const match = /^([0-9][^-]*?)(-.*\.whl|\.tar\.gz|\.zip)$/.exec(rest);
	return match?.[1];
}

/** A digest of a directory's files (names and contents), for the tag of a local Go module. */
async function directoryDigest(root: string): Promise<string> {
	const hash = createHash('sha256');
	let entries;
	try {
		entries = await readdir(root, { recursive: true, withFileTypes: true });
	} catch (error) {
		throw new HangarError(400, `invalid image: cannot read the Go module directory ${root}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 'invalid_params');
	}
	const files = entries.filter((entry) => entry.isFile() && !entry.parentPath.split('/').includes('.git')).map((entry) => join(entry.parentPath, entry.name)).sort();
	for (const file of files) hash.update(`${relative(root, file)}\0`).update(await readFile(file)).update('\0');
	return hash.digest('hex').slice(0, 12);
}
