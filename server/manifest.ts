/**
 * What the build writes next to the operation table (scripts/write-manifest.mjs): its method
 * and notification names, and each row's plain params schema (protocol/plainParams.ts).
 * Reading them costs a file read; importing the table costs zod.
 */
import { readFileSync } from 'node:fs';
import type { JsonSchema } from '../protocol/plainParams.js';

export interface Manifest {
	readonly methods: readonly string[];
	readonly notifications: readonly string[];
	/** By method; a row whose params zod must always check has none. */
	readonly params: Readonly<Record<string, JsonSchema>>;
}

const MANIFEST = new URL('../protocol/manifest.json', import.meta.url);

/** The build's manifest; throws when there is no build (run from source). */
export function readManifest(): Manifest {
	return JSON.parse(readFileSync(MANIFEST, 'utf8')) as Manifest;
}
