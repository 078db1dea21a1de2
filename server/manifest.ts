/**
 * The build's manifest (protocol/manifest.ts), read once per process: the daemon answers
 * `initialize` from it and the dispatcher checks params with it. Reading it costs a file read;
 * importing the table costs zod.
 */
import { readFileSync } from 'node:fs';
import type { Manifest } from '../protocol/manifest.js';

export type { Manifest };

const MANIFEST = new URL('../protocol/manifest.json', import.meta.url);

let read: Manifest | undefined;

/** The build's manifest; throws when there is no build (run from source). */
export function readManifest(): Manifest {
	return (read ??= JSON.parse(readFileSync(MANIFEST, 'utf8')) as Manifest);
}
