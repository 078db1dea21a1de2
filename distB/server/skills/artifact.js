/**
 * ToolHive's skill artifact format, `dev.toolhive.skills.v1`, so skills published by ToolHive
 * users install with Hangar and Hangar's builds install with ToolHive:
 *
 * - an OCI image index (`artifactType: dev.toolhive.skills.v1`) with one image manifest per
 *   platform (`linux/amd64`, `linux/arm64`);
 * - each manifest: an OCI image config whose `config.Labels` carry the skill's metadata, and
 *   exactly one `tar+gzip` layer titled `skill.tar.gz` holding `SKILL.md` first and the other
 *   files sorted by path;
 * - annotations `dev.toolhive.skills.name|description|version|requires` and
 *   `org.opencontainers.image.created` on the manifests and the index.
 *
 * Builds are reproducible: every timestamp is `SOURCE_DATE_EPOCH` (or 0), owners are 0 and
 * modes fixed, so the same folder always gives the same digests.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { HangarError } from '../../protocol/errors.js';
import { canonicalJson, MEDIA_TYPES } from '../oci/media.js';
export const SKILL_ARTIFACT_TYPE = 'dev.toolhive.skills.v1';
export const SKILL_LAYER_TITLE = 'skill.tar.gz';
export const SKILL_ANNOTATIONS = {
    name: 'dev.toolhive.skills.name',
    description: 'dev.toolhive.skills.description',
    version: 'dev.toolhive.skills.version',
    requires: 'dev.toolhive.skills.requires',
    created: 'org.opencontainers.image.created',
    title: 'org.opencontainers.image.title',
};
export const SKILL_LABELS = {
    name: 'dev.toolhive.skills.name',
    description: 'dev.toolhive.skills.description',
    version: 'dev.toolhive.skills.version',
    allowedTools: 'dev.toolhive.skills.allowedTools',
    license: 'dev.toolhive.skills.license',
    files: 'dev.toolhive.skills.files',
};
export const DEFAULT_PLATFORMS = [
    { os: 'linux', architecture: 'amd64' },
    { os: 'linux', architecture: 'arm64' },
];
/** Seconds since the epoch for every timestamp of a build: `SOURCE_DATE_EPOCH`, else 0. */
export function buildEpoch(env = process.env) {
    const value = Number(env.SOURCE_DATE_EPOCH);
    return Number.isInteger(value) && value >= 0 ? value : 0;
}
/** Packs a validated skill's files (in packaging order) into the artifact. */
export async function packSkill(files, fields, epoch) {
    const tar = await tarOf(files, epoch);
    const layerBytes = gzipSync(tar, { level: 9 });
    const created = new Date(epoch * 1000).toISOString().replace('.000Z', 'Z');
    const annotations = {
        [SKILL_ANNOTATIONS.created]: created,
        [SKILL_ANNOTATIONS.name]: fields.name ?? '',
        [SKILL_ANNOTATIONS.description]: fields.description ?? '',
        [SKILL_ANNOTATIONS.version]: fields.version ?? '',
        ...(fields.requires.length && { [SKILL_ANNOTATIONS.requires]: JSON.stringify(fields.requires) }),
    };
    const layer = blob(MEDIA_TYPES.layerTarGzip, layerBytes, { [SKILL_ANNOTATIONS.title]: SKILL_LAYER_TITLE });
    const labels = {
        [SKILL_LABELS.name]: fields.name ?? '',
        [SKILL_LABELS.description]: fields.description ?? '',
        [SKILL_LABELS.version]: fields.version ?? '',
        [SKILL_LABELS.allowedTools]: JSON.stringify(fields.allowedTools),
        [SKILL_LABELS.license]: fields.license ?? '',
        [SKILL_LABELS.files]: JSON.stringify(files.map((file) => file.path)),
    };
    const diffId = `sha256:${createHash('sha256').update(tar).digest('hex')}`;
    const configs = [];
    const manifests = [];
    for (const platform of DEFAULT_PLATFORMS) {
        const config = blob(MEDIA_TYPES.config, canonicalJson({
            created,
            architecture: platform.architecture,
            os: platform.os,
            config: { Labels: labels },
            rootfs: { type: 'layers', diff_ids: [diffId] },
            history: [{ created, created_by: 'hangar skill build' }],
        }));
        const manifest = {
            schemaVersion: 2,
            mediaType: MEDIA_TYPES.manifest,
            artifactType: SKILL_ARTIFACT_TYPE,
            config: config.descriptor,
            layers: [layer.descriptor],
            annotations,
        };
        configs.push(config);
        const packed = blob(MEDIA_TYPES.manifest, canonicalJson(manifest), undefined, SKILL_ARTIFACT_TYPE);
        manifests.push({ bytes: packed.bytes, descriptor: { ...packed.descriptor, platform: { ...platform } } });
    }
    const index = {
        schemaVersion: 2,
        mediaType: MEDIA_TYPES.index,
        artifactType: SKILL_ARTIFACT_TYPE,
        manifests: manifests.map((manifest) => manifest.descriptor),
        annotations,
    };
    return { index: blob(MEDIA_TYPES.index, canonicalJson(index), undefined, SKILL_ARTIFACT_TYPE), manifests, configs, layer };
}
function blob(mediaType, bytes, annotations, artifactType) {
    const descriptor = {
        mediaType,
        digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
        size: bytes.length,
        ...(artifactType && { artifactType }),
        ...(annotations && { annotations }),
    };
    return { bytes, descriptor };
}
/** A POSIX tar of the files: regular files only, owner 0, mode 0644 (0755 for a script), every mtime at `epoch`. */
async function tarOf(files, epoch) {
    const { Header, Pax } = await import('tar');
    const mtime = new Date(epoch * 1000);
    const blocks = [];
    for (const file of files) {
        const content = await readFile(file.absolute);
        const fields = { path: file.path, mode: file.executable ? 0o755 : 0o644, uid: 0, gid: 0, uname: '', gname: '', size: content.length, mtime, type: 'File' };
        const header = new Header(fields);
        if (header.encode())
            blocks.push(new Pax({ path: file.path, size: content.length, mtime }).encode());
        blocks.push(header.block, content, Buffer.alloc((512 - (content.length % 512)) % 512));
    }
    blocks.push(Buffer.alloc(1024));
    return Buffer.concat(blocks);
}
/**
 * Picks the manifest to install from an index: `linux/amd64` when present, else the first.
 * Every platform carries the same layer.
 */
export function pickPlatformManifest(index, what) {
    const manifests = index.manifests.filter((entry) => entry.mediaType === MEDIA_TYPES.manifest || entry.mediaType === MEDIA_TYPES.dockerManifest);
    const chosen = manifests.find((entry) => entry.platform?.os === 'linux' && entry.platform.architecture === 'amd64') ?? manifests[0];
    if (!chosen)
        throw new HangarError(422, `${what} is an index without manifests`, 'invalid_artifact');
    return chosen;
}
/** Checks that a manifest is a skill artifact: one `tar+gzip` layer, and the skill artifact type if it names one. */
export function checkSkillManifest(document, what) {
    if (document.kind !== 'manifest')
        throw new HangarError(422, `${what} is not an image manifest`, 'invalid_artifact');
    const { manifest } = document;
    if (manifest.artifactType && manifest.artifactType !== SKILL_ARTIFACT_TYPE) {
        throw new HangarError(422, `${what} is a ${manifest.artifactType} artifact, not a skill (${SKILL_ARTIFACT_TYPE})`, 'invalid_artifact');
    }
    if (manifest.layers.length !== 1) {
        throw new HangarError(422, `${what} has ${manifest.layers.length} layers; a skill artifact has exactly one`, 'invalid_artifact');
    }
    const layer = manifest.layers[0];
    if (layer.mediaType !== MEDIA_TYPES.layerTarGzip) {
        throw new HangarError(422, `${what} has a layer of type ${layer.mediaType}, not ${MEDIA_TYPES.layerTarGzip}`, 'invalid_artifact');
    }
    return { manifest, layer };
}
//# sourceMappingURL=artifact.js.map