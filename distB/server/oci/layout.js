/**
 * An OCI image layout on disk (`oci-layout`, `index.json`, `blobs/<alg>/<hex>`), as the
 * image-spec defines it, so `skopeo` and other OCI tools can read what Hangar writes.
 *
 * Blobs are content-addressed and written once (temporary file, then rename). The index is a
 * state document: changed under a lock and replaced atomically.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import { openFileAtomic, readTextIfExists, writeFileAtomic } from '../store/atomic.js';
import { withLock } from '../store/lock.js';
import { canonicalJson, ImageIndex, MEDIA_TYPES, parseManifestDocument } from './media.js';
export const REF_NAME = 'org.opencontainers.image.ref.name';
export class OciLayout {
    root;
    constructor(root) {
        this.root = root;
    }
    blobPath(digest) {
        const [algorithm, hex] = digest.split(':');
        if (!algorithm || !hex || !/^[a-f0-9]+$/.test(hex))
            throw new HangarError(400, `invalid digest ${digest}`, 'invalid_digest');
        return join(this.root, 'blobs', algorithm, hex);
    }
    async hasBlob(digest) {
        return stat(this.blobPath(digest)).then((stats) => stats.isFile(), () => false);
    }
    /** A blob's bytes, checked against its digest; undefined when absent or damaged. */
    async readBlob(digest) {
        const bytes = await readFile(this.blobPath(digest)).catch(() => undefined);
        if (!bytes)
            return undefined;
        if (digestOf(digest, bytes) !== digest) {
            await rm(this.blobPath(digest), { force: true });
            return undefined;
        }
        return bytes;
    }
    /** Stores bytes under their sha256 digest. */
    async writeBlob(bytes) {
        const digest = digestOf('sha256:', bytes);
        if (!(await this.hasBlob(digest)))
            await writeFileAtomic(this.blobPath(digest), bytes, { mode: 0o644, dirMode: 0o755 });
        return digest;
    }
    /**
     * Passes a stream of chunks through, keeping a copy: once every chunk arrived and the bytes
     * match the descriptor, the copy becomes the blob. A consumer that stops early keeps nothing.
     */
    async *keep(descriptor, chunks) {
        // Blobs are checked against their digest on every read: a power cut costs a download, not an fsync per layer.
        const output = await openFileAtomic(this.blobPath(descriptor.digest), { mode: 0o644, dirMode: 0o755, durable: false });
        const [algorithm] = descriptor.digest.split(':');
        const hash = createHash(algorithm);
        let size = 0;
        let kept = false;
        try {
            for await (const chunk of chunks) {
                hash.update(chunk);
                size += chunk.length;
                await output.write(chunk);
                yield chunk;
            }
            if (`${algorithm}:${hash.digest('hex')}` === descriptor.digest && size === descriptor.size) {
                await output.commit();
                kept = true;
            }
        }
        finally {
            if (!kept)
                await output.abort();
        }
    }
    async readIndex() {
        const text = await readTextIfExists(join(this.root, 'index.json'));
        if (text === undefined)
            return emptyIndex();
        const parsed = ImageIndex.safeParse(JSON.parse(text));
        if (!parsed.success)
            throw new HangarError(500, `${join(this.root, 'index.json')} is not an OCI index`, 'corrupt_state');
        return parsed.data;
    }
    /** Changes `index.json` under the layout's lock. */
    async updateIndex(change) {
        return withLock(join(this.root, 'index.json'), async () => {
            const next = change(await this.readIndex());
            await writeFileAtomic(join(this.root, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}', { mode: 0o644 });
            await writeFileAtomic(join(this.root, 'index.json'), canonicalJson(next), { mode: 0o644 });
            return next;
        });
    }
    /** Points `name` at `descriptor`, replacing whatever it named before. */
    async tag(name, descriptor) {
        await this.updateIndex((index) => ({
            ...index,
            manifests: [
                ...index.manifests.filter((entry) => entry.annotations?.[REF_NAME] !== name),
                { ...descriptor, annotations: { ...descriptor.annotations, [REF_NAME]: name } },
            ],
        }));
    }
    /** Removes `name`; false when it did not exist. Blobs nothing refers to any more are deleted. */
    async untag(name) {
        let found = false;
        await this.updateIndex((index) => {
            const manifests = index.manifests.filter((entry) => entry.annotations?.[REF_NAME] !== name);
            found = manifests.length !== index.manifests.length;
            return { ...index, manifests };
        });
        if (found)
            await this.collectGarbage();
        return found;
    }
    /** Deletes blobs that no tagged manifest or index reaches. */
    async collectGarbage() {
        await withLock(join(this.root, 'index.json'), async () => {
            const reachable = new Set();
            const visit = async (descriptor) => {
                if (reachable.has(descriptor.digest))
                    return;
                reachable.add(descriptor.digest);
                if (descriptor.mediaType !== MEDIA_TYPES.index && descriptor.mediaType !== MEDIA_TYPES.manifest)
                    return;
                const bytes = await this.readBlob(descriptor.digest);
                const document = bytes && parseManifestDocument(bytes, descriptor.mediaType);
                if (document?.kind === 'index')
                    for (const child of document.index.manifests)
                        await visit(child);
                if (document?.kind === 'manifest')
                    for (const child of [document.manifest.config, ...document.manifest.layers])
                        await visit(child);
            };
            for (const entry of (await this.readIndex()).manifests)
                await visit(entry);
            const folder = join(this.root, 'blobs', 'sha256');
            for (const hex of await readdir(folder).catch(() => [])) {
                if (!hex.startsWith('.') && !reachable.has(`sha256:${hex}`))
                    await rm(join(folder, hex), { force: true });
            }
        });
    }
    async dropBlob(digest) {
        await rm(this.blobPath(digest), { force: true });
    }
    /** A readable stream of a blob (for extraction). */
    openBlob(digest) {
        return createReadStream(this.blobPath(digest));
    }
}
export function emptyIndex() {
    return { schemaVersion: 2, mediaType: MEDIA_TYPES.index, manifests: [] };
}
function digestOf(like, bytes) {
    const algorithm = like.split(':')[0] || 'sha256';
    return `${algorithm}:${createHash(algorithm).update(bytes).digest('hex')}`;
}
//# sourceMappingURL=layout.js.map