/**
 * Turns a configured source into a Catalog, keeping what it loaded:
 *
 * - `default`: the embedded registry, read once.
 * - `file`: re-read whenever the file changes (inode, size or mtime).
 * - `url` / `api`: fetched, then kept on disk in the cache folder for `ttlMs`; every process
 *   shares that copy, so a `refresh` in one is picked up by all. When the upstream fails and a
 *   copy younger than a week exists, the copy is served and the failure logged.
 *
 * Concurrent loads of one source share a single read or fetch.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../store/atomic.js';
import { withLock } from '../store/lock.js';
import { Catalog } from './catalog.js';
import { embeddedCatalog } from './embedded.js';
import { SourceError } from './errors.js';
import { nameWarning, parseRegistryText, validateRegistry } from './format.js';
import { fetchRegistryApi, fetchRegistryFile } from './remote.js';
const CACHE_SCHEMA = 1;
/** A cached copy older than this is never served, even when the upstream is down. */
const STALE_LIMIT_MS = 7 * 24 * 60 * 60 * 1000;
export class SourceLoader {
    options;
    loaded = new Map();
    pending = new Map();
    constructor(options) {
        this.options = options;
    }
    async load(source, options = {}) {
        if (source.type === 'default')
            return embeddedCatalog();
        const key = sourceKey(source);
        // A forced load never joins one in flight: it must see the upstream as it is now.
        const pending = options.force ? undefined : this.pending.get(key);
        if (pending) {
            try {
                return await pending;
            }
            catch (error) {
                // The caller that started it went away; this one has not, so it loads for itself.
                if (isCancellation(error) && !options.signal?.aborted)
                    return this.load(source, options);
                throw error;
            }
        }
        const loading = (source.type === 'file' ? this.loadFile(key, source) : this.loadRemote(key, source, options)).finally(() => {
            if (this.pending.get(key) === loading)
                this.pending.delete(key);
        });
        this.pending.set(key, loading);
        return loading;
    }
    /** Forgets loaded copies of sources no longer configured. */
    retain(sources) {
        const keep = new Set(sources.map(sourceKey));
        for (const key of this.loaded.keys())
            if (!keep.has(key))
                this.loaded.delete(key);
    }
    async loadFile(key, source) {
        const stamp = await fileStamp(source.location);
        if (stamp === undefined)
            throw new SourceError('missing_file', `registry file ${source.location} does not exist`);
        const known = this.loaded.get(key);
        if (known?.stamp === stamp)
            return known.catalog;
        let text;
        try {
            text = await readFile(source.location, 'utf8');
        }
        catch (error) {
            throw new SourceError('missing_file', `cannot read registry file ${source.location}: ${error.message}`);
        }
        const document = parseRegistryText(text, source.location);
        this.warnAboutNames(document, source.location);
        const catalog = new Catalog(document);
        this.loaded.set(key, { catalog, stamp, fetchedAt: Date.now() });
        return catalog;
    }
    warnAboutNames(document, origin) {
        const warning = nameWarning(document, origin);
        if (warning)
            this.options.log.warn(warning);
    }
    async loadRemote(key, source, options) {
        const cacheFile = this.cacheFileOf(key);
        if (!options.force) {
            const cached = await this.readCache(key, source, cacheFile);
            if (cached && Date.now() - cached.fetchedAt < this.options.ttlMs)
                return cached.catalog;
        }
        let document;
        try {
            document = await this.fetch(source, options);
        }
        catch (error) {
            const stale = options.force ? undefined : this.loaded.get(key);
            if (stale && Date.now() - stale.fetchedAt < STALE_LIMIT_MS && !isCancellation(error)) {
                this.options.log.warn(`serving the cached copy of ${source.location}: ${error.message}`);
                return stale.catalog;
            }
            throw error;
        }
        this.warnAboutNames(document, source.location);
        const fetchedAt = Date.now();
        const cache = {
            schema_version: CACHE_SCHEMA,
            source: source.location,
            fetched_at: fetchedAt,
            registry: toFileFormat(document),
        };
        await withLock(cacheFile, () => writeFileAtomic(cacheFile, JSON.stringify(cache)));
        const catalog = new Catalog(document);
        this.loaded.set(key, { catalog, stamp: (await fileStamp(cacheFile)) ?? '', fetchedAt });
        return catalog;
    }
    /** The cached copy, from memory when the cache file is unchanged, else from disk. */
    async readCache(key, source, cacheFile) {
        const stamp = await fileStamp(cacheFile);
        if (stamp === undefined)
            return this.loaded.get(key);
        const known = this.loaded.get(key);
        if (known?.stamp === stamp)
            return known;
        try {
            const cache = JSON.parse(await readFile(cacheFile, 'utf8'));
            if (cache.schema_version !== CACHE_SCHEMA || cache.source !== source.location)
                return known;
            const loaded = { catalog: new Catalog(validateRegistry(cache.registry, cacheFile, true)), stamp, fetchedAt: cache.fetched_at };
            this.loaded.set(key, loaded);
            return loaded;
        }
        catch (error) {
            // A damaged cache is only a cache: fetch again.
            this.options.log.warn(`ignoring registry cache ${cacheFile}: ${error.message}`);
            return known;
        }
    }
    fetch(source, options) {
        const fetchOptions = {
            allowPrivate: source.allowPrivate,
            timeoutMs: this.options.timeoutMs,
            ...(options.signal ? { signal: options.signal } : {}),
        };
        return source.type === 'api'
            ? fetchRegistryApi(source.location, fetchOptions, options.onPage)
            : fetchRegistryFile(source.location, fetchOptions);
    }
    cacheFileOf(key) {
        return join(this.options.cacheFolder, `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`);
    }
}
function sourceKey(source) {
    return `${source.type}\n${source.location}\n${source.allowPrivate}`;
}
function isCancellation(error) {
    return error instanceof SourceError && error.failure === 'cancelled';
}
/** Identity of a file's current content, or undefined when it does not exist. */
async function fileStamp(path) {
    try {
        const info = await stat(path);
        return `${info.ino}:${info.size}:${info.mtimeMs}`;
    }
    catch (error) {
        if (error.code === 'ENOENT')
            return undefined;
        throw new SourceError('missing_file', `cannot read ${path}: ${error.message}`);
    }
}
/** A registry document back in the file format, for the cache. */
function toFileFormat(document) {
    return {
        ...(document.version ? { version: document.version } : {}),
        ...(document.lastUpdated ? { meta: { last_updated: document.lastUpdated } } : {}),
        data: { servers: document.servers, groups: document.groups, skills: document.skills },
    };
}
//# sourceMappingURL=sources.js.map