/**
 * OCI image-spec documents: media types, descriptors, manifests and indexes, with a parser
 * that checks the parts Hangar relies on before trusting a document from the network.
 */
import { z } from 'zod';
export const MEDIA_TYPES = {
    index: 'application/vnd.oci.image.index.v1+json',
    manifest: 'application/vnd.oci.image.manifest.v1+json',
    config: 'application/vnd.oci.image.config.v1+json',
    layerTarGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
    empty: 'application/vnd.oci.empty.v1+json',
    dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
    dockerManifestList: 'application/vnd.docker.distribution.manifest.list.v2+json',
};
/** What a manifest request accepts: OCI and Docker manifests and indexes. */
export const MANIFEST_ACCEPT = [
    MEDIA_TYPES.index,
    MEDIA_TYPES.manifest,
    MEDIA_TYPES.dockerManifestList,
    MEDIA_TYPES.dockerManifest,
].join(', ');
const Digest = z.string().regex(/^(sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$/, 'invalid digest');
export const Descriptor = z.object({
    mediaType: z.string(),
    digest: Digest,
    size: z.number().int().nonnegative(),
    annotations: z.record(z.string(), z.string()).optional(),
    artifactType: z.string().optional(),
    platform: z
        .object({ architecture: z.string(), os: z.string(), variant: z.string().optional() })
        .passthrough()
        .optional(),
    urls: z.array(z.string()).optional(),
});
export const ImageManifest = z.object({
    schemaVersion: z.literal(2),
    mediaType: z.string().optional(),
    artifactType: z.string().optional(),
    config: Descriptor,
    layers: z.array(Descriptor),
    subject: Descriptor.optional(),
    annotations: z.record(z.string(), z.string()).optional(),
});
export const ImageIndex = z.object({
    schemaVersion: z.literal(2),
    mediaType: z.string().optional(),
    artifactType: z.string().optional(),
    manifests: z.array(Descriptor),
    subject: Descriptor.optional(),
    annotations: z.record(z.string(), z.string()).optional(),
});
/** Reads a manifest or index; `undefined` when the bytes are neither. */
export function parseManifestDocument(bytes, mediaType) {
    let json;
    try {
        json = JSON.parse(Buffer.from(bytes).toString('utf8'));
    }
    catch {
        return undefined;
    }
    const declared = json?.mediaType ?? mediaType;
    const isIndex = declared === MEDIA_TYPES.index ||
        declared === MEDIA_TYPES.dockerManifestList ||
        (declared === undefined && Array.isArray(json?.manifests));
    if (isIndex) {
        const index = ImageIndex.safeParse(json);
        return index.success ? { kind: 'index', index: index.data } : undefined;
    }
    const manifest = ImageManifest.safeParse(json);
    return manifest.success ? { kind: 'manifest', manifest: manifest.data } : undefined;
}
/** JSON bytes as the packer writes them: compact, keys in the order given. */
export function canonicalJson(value) {
    return Buffer.from(JSON.stringify(value), 'utf8');
}
//# sourceMappingURL=media.js.map