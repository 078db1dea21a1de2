/**
 * The `hangar` entry point of this build, which proxies are spawned with (`hangar proxy NAME`).
 * The extension's daemon is the whole CLI bundled into one file: its build puts that file here.
 */
import { fileURLToPath } from 'node:url';

export const CLI_ENTRY = fileURLToPath(new URL('../cli/hangar.cjs', import.meta.url));
