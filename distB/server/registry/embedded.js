/**
 * The registry shipped with Hangar (`embedded/registry.json`, upstream MCP registry format):
 * read and indexed once per process, on first use.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Catalog } from './catalog.js';
import { parseRegistryText } from './format.js';
/**
 * Next to this module when run from source; from `dist/server/registry/` the build output sits
 * three levels below the repository, whose `server/registry/embedded/` holds the file.
 */
const LOCATIONS = [
    new URL('./embedded/registry.json', import.meta.url),
    new URL('../../../server/registry/embedded/registry.json', import.meta.url),
];
let embedded;
export function embeddedCatalog() {
    return (embedded ??= new Catalog(parseRegistryText(readEmbeddedText(), 'the embedded registry')));
}
function readEmbeddedText() {
    for (const location of LOCATIONS) {
        try {
            return readFileSync(location, 'utf8');
        }
        catch (error) {
            if (error.code !== 'ENOENT')
                throw error;
        }
    }
    throw new Error(`embedded registry not found (looked in ${LOCATIONS.map((url) => fileURLToPath(url)).join(', ')})`);
}
//# sourceMappingURL=embedded.js.map