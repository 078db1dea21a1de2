/**
 * The project lock file, `hangar.lock.yaml` at the project root: the skills a project uses,
 * each with what was asked for (`source`), what it resolved to, the pin (OCI digest or git
 * commit) and the digest of the files it put on disk, so a teammate's `skills/sync`
 * reproduces exactly the same set. Fields follow ToolHive's `toolhive.lock.yaml`.
 *
 * Written atomically under a lock; entries are sorted by name so diffs stay small.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { HangarError } from '../../protocol/errors.js';
import { readTextIfExists, writeFileAtomic } from '../store/atomic.js';
import { withLock } from '../store/lock.js';
import { confine } from '../store/project.js';
export const LOCK_FILE = 'hangar.lock.yaml';
/** ToolHive's lock file: read when a project has no `hangar.lock.yaml` (its content digests use another hash). */
export const TOOLHIVE_LOCK_FILE = 'toolhive.lock.yaml';
export const LockEntry = z.object({
    name: z.string(),
    version: z.string().optional(),
    /** Exactly what was requested: a name, an OCI reference or a git reference. */
    source: z.string(),
    resolvedReference: z.string(),
    /** The pin: OCI manifest (index) digest or git commit. */
    digest: z.string(),
    /** Digest of the materialised files (see `contentDigest` in files.ts). */
    contentDigest: z.string(),
    /** Skills of this lock file that require this one. */
    requiredBy: z.array(z.string()).optional(),
    /** Installed by request, not only as a dependency. */
    explicit: z.boolean(),
    /** Hangar does not verify signatures: every entry is recorded as unsigned. */
    unsigned: z.boolean().optional(),
    /** Hangar extension: the clients the skill was installed for, so a sync in a fresh clone installs for them. */
    clients: z.array(z.string()).optional(),
});
const LockDocument = z.object({ version: z.literal(1), skills: z.array(LockEntry) });
export function lockPath(projectRoot) {
    return join(projectRoot, LOCK_FILE);
}
/** 400 when a lock file (or its lock) is a symlink out of the project. */
export function confineLock(projectRoot) {
    return confine(projectRoot, [lockPath(projectRoot), `${lockPath(projectRoot)}.lock`, join(projectRoot, TOOLHIVE_LOCK_FILE)]);
}
/** The project's lock: `hangar.lock.yaml`, else ToolHive's `toolhive.lock.yaml`; undefined when there is neither. */
export async function readLock(projectRoot) {
    return (await readLockFile(projectRoot, LOCK_FILE)) ?? (await readLockFile(projectRoot, TOOLHIVE_LOCK_FILE));
}
async function readLockFile(projectRoot, file) {
    await confineLock(projectRoot);
    const path = join(projectRoot, file);
    const text = await readTextIfExists(path);
    if (text === undefined)
        return undefined;
    const { parse } = await import('yaml');
    let raw;
    try {
        raw = parse(text);
    }
    catch (error) {
        throw HangarError.badRequest(`${path} is not valid YAML: ${error.message.split('\n')[0]}`, 'invalid_lock_file');
    }
    const parsed = LockDocument.safeParse(raw);
    if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw HangarError.badRequest(`${path}: invalid ${issue?.path.join('.') || 'document'}: ${issue?.message}`, 'invalid_lock_file');
    }
    return { ...parsed.data, file };
}
/** Changes the lock file under its lock; an empty set of skills removes nothing but writes `skills: []`. */
export async function updateLock(projectRoot, change) {
    const path = lockPath(projectRoot);
    await confineLock(projectRoot);
    await withLock(path, async () => {
        // Hangar writes only its own lock file; a ToolHive lock file is read, never changed.
        const current = (await readLockFile(projectRoot, LOCK_FILE)) ?? { version: 1, skills: [] };
        const skills = change(current.skills).sort((a, b) => a.name.localeCompare(b.name));
        const { stringify } = await import('yaml');
        const header = '# Skills of this project, pinned by Hangar. Reproduce them with `hangar skill sync`.\n';
        await writeFileAtomic(path, header + stringify({ version: 1, skills }, { lineWidth: 0 }), { mode: 0o644 });
    });
}
/** Writes `record`'s entry into the lock file of `projectRoot`, in place of the one of the same name. */
export function putLockEntry(projectRoot, record, options = {}) {
    return updateLock(projectRoot, (entries) => {
        const previous = entries.find((entry) => entry.name === record.name);
        const entry = lockEntryOf(record);
        // A sync reproduces the lock file: the clients this machine installed for do not rewrite it.
        const clients = options.keepClients && previous?.clients ? previous.clients : entry.clients;
        return [...entries.filter((other) => other.name !== record.name), { ...entry, clients }];
    });
}
export function lockEntryOf(record) {
    return {
        name: record.name,
        ...(record.version !== undefined && { version: record.version }),
        source: record.source,
        resolvedReference: record.reference,
        digest: record.digest,
        contentDigest: record.content_digest ?? '',
        ...(record.required_by.length && { requiredBy: [...record.required_by].sort() }),
        explicit: record.explicit,
        unsigned: true,
        clients: [...new Set(record.folders.flatMap((folder) => folder.clients))].sort(),
    };
}
//# sourceMappingURL=lockfile.js.map