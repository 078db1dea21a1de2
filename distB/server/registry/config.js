/**
 * The registry configuration (`<config>/registries.json`): where `default` points and which
 * named registries were added, with their precedence. Shared by every Hangar process: writes
 * are atomic and locked, and readers notice a change by the file's identity (checked on every
 * call, a `stat`), so a change made by one daemon or the CLI takes effect in all of them.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { RegistryAuthConfig } from '../../protocol/protocol.registries.js';
import { JsonDocument } from '../store/document.js';
export const DEFAULT_REGISTRY = 'default';
/** Precedence of `default` when none is set: after every named registry. */
export const DEFAULT_REGISTRY_PRIORITY = 1000;
/** Precedence of a named registry added without one. */
export const NAMED_REGISTRY_PRIORITY = 100;
export const RegistryEntry = z.object({
    name: z.string(),
    type: z.enum(['default', 'file', 'url', 'api']),
    /** Absolute path or URL; empty for the embedded registry. */
    source: z.string(),
    allow_private_ip: z.boolean().optional(),
    priority: z.number().int().optional(),
    auth: RegistryAuthConfig.optional(),
});
const RegistryConfig = z.object({ registries: z.array(RegistryEntry) });
const EMBEDDED = { name: DEFAULT_REGISTRY, type: 'default', source: '' };
export class RegistryConfigStore {
    document;
    cached;
    constructor(paths) {
        this.document = new JsonDocument(join(paths.config, 'registries.json'), { schema: RegistryConfig, version: 1 }, () => ({
            registries: [],
        }));
    }
    get path() {
        return this.document.path;
    }
    /** Every registry, `default` included, in precedence order (lower priority first, then name). */
    async entries() {
        const stamp = await this.stamp();
        if (this.cached?.stamp !== stamp)
            this.cached = { stamp, entries: inPrecedenceOrder((await this.document.read()).registries) };
        return this.cached.entries;
    }
    async find(name) {
        return (await this.entries()).find((entry) => entry.name === name);
    }
    /**
     * Changes the stored list under the lock. `change` sees the list as stored (without the
     * implicit `default`) and returns the new list, or throws to leave it as it is.
     */
    async update(change) {
        await this.document.update((current) => [{ registries: change([...current.registries]) }, undefined]);
        this.cached = undefined;
    }
    async stamp() {
        try {
            const info = await stat(this.document.path);
            return `${info.ino}:${info.size}:${info.mtimeMs}`;
        }
        catch (error) {
            if (error.code === 'ENOENT')
                return 'none';
            throw error;
        }
    }
}
export function effectivePriority(entry) {
    return entry.priority ?? (entry.name === DEFAULT_REGISTRY ? DEFAULT_REGISTRY_PRIORITY : NAMED_REGISTRY_PRIORITY);
}
function inPrecedenceOrder(stored) {
    const entries = stored.some((entry) => entry.name === DEFAULT_REGISTRY) ? [...stored] : [...stored, EMBEDDED];
    return entries.sort((a, b) => effectivePriority(a) - effectivePriority(b) || a.name.localeCompare(b.name));
}
//# sourceMappingURL=config.js.map