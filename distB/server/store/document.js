/**
 * Versioned JSON documents on disk.
 *
 * Every file carries `schema_version`. Reading a file written by an older Hangar runs the
 * migrations from its version up to the current one; a file from a newer Hangar is refused
 * rather than silently rewritten. Writes are atomic and happen under the document's lock.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import { readTextIfExists, writeFileAtomic } from './atomic.js';
import { withLock } from './lock.js';
import { describeJsonError } from '../json.js';
/** Parses a stored document, migrating it when it is older than `spec.version`. */
function decodeDocument(path, text, spec) {
    let raw;
    try {
        raw = JSON.parse(text);
    }
    catch (error) {
        throw new HangarError(500, `state file ${path} is not valid JSON: ${describeJsonError(error)}`, 'corrupt_state');
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
        throw new HangarError(500, `state file ${path} does not hold an object`, 'corrupt_state');
    }
    let document = raw;
    let version = typeof document.schema_version === 'number' ? document.schema_version : 0;
    if (version > spec.version) {
        throw new HangarError(500, `state file ${path} was written by a newer Hangar (schema ${version} > ${spec.version}); upgrade Hangar`, 'state_too_new');
    }
    while (version < spec.version) {
        const migrate = spec.migrations?.[version];
        if (!migrate)
            throw new HangarError(500, `no migration for ${path} from schema ${version}`, 'corrupt_state');
        document = migrate(document);
        version += 1;
    }
    const { schema_version: _version, ...data } = document;
    const parsed = spec.schema.safeParse(data);
    if (!parsed.success) {
        throw new HangarError(500, `state file ${path} is malformed: ${parsed.error.issues[0]?.message}`, 'corrupt_state');
    }
    return parsed.data;
}
function encodeDocument(value, spec) {
    return `${JSON.stringify({ schema_version: spec.version, ...value }, null, 2)}\n`;
}
/** One JSON document with a fallback value while the file does not exist. */
export class JsonDocument {
    path;
    spec;
    initial;
    constructor(path, spec, initial) {
        this.path = path;
        this.spec = spec;
        this.initial = initial;
    }
    async read() {
        const text = await readTextIfExists(this.path);
        return text === undefined ? this.initial() : decodeDocument(this.path, text, this.spec);
    }
    /**
     * Read-modify-write under the lock. `change` returns the new value and what to hand back
     * to the caller; returning `undefined` as the value leaves the file as it is.
     */
    async update(change) {
        return withLock(this.path, async () => {
            const [next, result] = await change(await this.read());
            if (next !== undefined)
                await writeFileAtomic(this.path, encodeDocument(next, this.spec));
            return result;
        });
    }
}
/**
 * A folder of JSON documents, one per named entity (`<folder>/<name>.json`). Every change
 * takes the folder's lock, so an update cannot bring back an entity deleted meanwhile.
 */
export class JsonCollection {
    folder;
    spec;
    constructor(folder, spec) {
        this.folder = folder;
        this.spec = spec;
    }
    fileOf(name) {
        return join(this.folder, `${encodeURIComponent(name)}.json`);
    }
    async names() {
        let entries;
        try {
            entries = await readdir(this.folder);
        }
        catch (error) {
            if (error.code === 'ENOENT')
                return [];
            throw error;
        }
        return entries
            .filter((entry) => entry.endsWith('.json') && !entry.startsWith('.'))
            .map((entry) => decodeURIComponent(entry.slice(0, -'.json'.length)))
            .sort();
    }
    async get(name) {
        const path = this.fileOf(name);
        const text = await readTextIfExists(path);
        return text === undefined ? undefined : decodeDocument(path, text, this.spec);
    }
    async list() {
        const values = await Promise.all((await this.names()).map((name) => this.get(name)));
        return values.filter((value) => value !== undefined);
    }
    /** Creates an entity; `false` when one of that name exists already. */
    async create(name, value) {
        return withLock(this.folder, async () => {
            if ((await readTextIfExists(this.fileOf(name))) !== undefined)
                return false;
            await writeFileAtomic(this.fileOf(name), encodeDocument(value, this.spec));
            return true;
        });
    }
    /** Changes an existing entity under its lock; `undefined` when it does not exist. */
    async update(name, change) {
        const path = this.fileOf(name);
        return withLock(this.folder, async () => {
            const text = await readTextIfExists(path);
            if (text === undefined)
                return undefined;
            const next = change(decodeDocument(path, text, this.spec));
            await writeFileAtomic(path, encodeDocument(next, this.spec));
            return next;
        });
    }
    /** Deletes an entity; `false` when it did not exist. */
    async delete(name) {
        return withLock(this.folder, async () => {
            const path = this.fileOf(name);
            if ((await readTextIfExists(path)) === undefined)
                return false;
            await rm(path);
            return true;
        });
    }
}
//# sourceMappingURL=document.js.map