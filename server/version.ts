/** Hangar's version, read once from its package.json. */
import { readFileSync } from 'node:fs';

function readVersion(): string {
	// Build (dist/server/) and source (server/) sit at different depths below the package root;
	// the build, which users run, is tried first.
	for (const relative of ['../../package.json', '../package.json']) {
		try {
			const manifest = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as { name?: string; version?: string };
			if (manifest.name === 'hangar' && manifest.version) return manifest.version;
		} catch {
			// Try the next candidate.
		}
	}
	return '0.0.0';
}

export const VERSION = readVersion();

/** What `hangar --version` and the first line of `hangar version` print. */
export const VERSION_LINE = `hangar v${VERSION}`;
