/**
 * The method names of the operation table, as written next to the build by
 * scripts/write-manifest.mjs. Reading them costs a file read; importing the table costs zod.
 */
import { readFileSync } from 'node:fs';
export function readManifest() {
    return JSON.parse(readFileSync(new URL('../../protocol/manifest.json', import.meta.url), 'utf8'));
}
//# sourceMappingURL=manifest.js.map