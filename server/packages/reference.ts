/**
 * Package references run as workloads: `npx://PKG[@VERSION]` (npm), `uvx://PKG[@VERSION]`
 * (PyPI), `go://MODULE[@VERSION]` and `go://./local/dir` (Go). Parsing only; what a version
 * resolves to is `resolve.ts`'s job.
 */
import { isAbsolute } from 'node:path';
import { HangarError } from '../../protocol/errors.js';

export type Scheme = 'npx' | 'uvx' | 'go';
export const SCHEMES: readonly Scheme[] = ['npx', 'uvx', 'go'];

export interface PackageReference {
	readonly scheme: Scheme;
	/** npm package (`@scope/name`), PyPI project, or Go module path; for a local Go directory, its absolute path. */
	readonly name: string;
	/** As asked for: absent means the latest. */
	readonly version?: string;
	/** A Go module in a directory of this machine. */
	readonly local: boolean;
}

const SCHEME = /^(npx|uvx|go):\/\/(.*)$/s;
const NPM_NAME = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
/** PEP 508 names, with extras (`pkg[extra]`) left out: a server is run by its project name. */
const PYPI_NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const GO_MODULE = /^[a-zA-Z0-9][a-zA-Z0-9._~-]*(\/[a-zA-Z0-9._~+-]+)+$/;
/** Exact versions, dist-tags and version prefixes; no spaces, shell or path characters. */
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$/;

export function isPackageReference(image: string): boolean {
	return SCHEME.test(image);
}

/** Parses a reference; a 400 names `field` and what is wrong. */
export function parsePackageReference(raw: string, field = 'image'): PackageReference {
	const match = SCHEME.exec(raw);
	if (!match) throw bad(field, `${JSON.stringify(raw)} is not an npx://, uvx:// or go:// reference`);
	const scheme = match[1] as Scheme;
	const rest = match[2]!;
	if (scheme === 'go' && (rest.startsWith('.') || isAbsolute(rest))) {
		// Relative to the service's working directory; the CLI sends an absolute path.
		return { scheme, name: rest, local: true };
	}
	// The version is after the last @ that is not the first character (npm scopes start with @).
	const at = rest.lastIndexOf('@');
	const name = at > 0 ? rest.slice(0, at) : rest;
	const version = at > 0 ? rest.slice(at + 1) : undefined;
	const valid = scheme === 'npx' ? NPM_NAME.test(name) : scheme === 'uvx' ? PYPI_NAME.test(name) : GO_MODULE.test(name);
	if (!valid) throw bad(field, `${JSON.stringify(name)} is not a valid ${scheme === 'npx' ? 'npm package' : scheme === 'uvx' ? 'PyPI project' : 'Go module'} name`);
	if (version !== undefined && !VERSION.test(version)) throw bad(field, `${JSON.stringify(version)} is not a version`);
	return { scheme, name, version, local: false };
}

export function formatReference(reference: PackageReference): string {
	return `${reference.scheme}://${reference.name}${reference.version ? `@${reference.version}` : ''}`;
}

function bad(field: string, message: string): HangarError {
	return new HangarError(400, `invalid ${field}: ${message}`, 'invalid_params');
}
