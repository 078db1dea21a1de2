/** Hangar's version, read once from its package.json. */
import { readFileSync } from 'node:fs';
function readVersion() {
    // Source (server/) and build (dist/server/) sit at different depths below the package root.
    for (const relative of ['../package.json', '../../package.json']) {
        try {
            const manifest = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8'));
            if (manifest.name === 'hangar' && manifest.version)
                return manifest.version;
        }
        catch {
            // Try the next candidate.
        }
    }
    return '0.0.0';
}
export const VERSION = readVersion();
//# sourceMappingURL=version.js.map