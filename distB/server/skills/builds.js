/**
 * Local skill builds: skill folders packed into an OCI image layout under Hangar's data
 * folder (`<data>/skills/builds`), each tagged by name, listed, deleted, and pushed to a
 * registry. Installs and content reads find them by tag or skill name.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import { OciLayout, REF_NAME } from '../oci/layout.js';
import { MEDIA_TYPES, parseManifestDocument } from '../oci/media.js';
import { parseReference } from '../oci/reference.js';
import { buildEpoch, checkSkillManifest, packSkill, pickPlatformManifest, SKILL_ANNOTATIONS } from './artifact.js';
import { extractSkillArchive } from './extract.js';
import { readSkillTree } from './files.js';
import { validateSkillFolder } from './validate.js';
export class SkillBuilds {
    env;
    layout;
    constructor(paths, env = process.env) {
        this.env = env;
        this.layout = new OciLayout(join(paths.data, 'skills', 'builds'));
    }
    /** Packs a valid skill folder and tags it (`tag`, else the skill's name); returns the tag. */
    async build(path, tag) {
        if (tag !== undefined)
            checkTag(tag);
        if (!(await stat(path).catch(() => undefined)))
            throw HangarError.notFound(`path ${path} does not exist`, 'path_not_found');
        const check = await validateSkillFolder(path);
        if (!check.valid)
            throw HangarError.badRequest(`invalid skill: ${check.errors.join('; ')}`, 'invalid_skill');
        const fields = check.fields;
        const { files } = await readSkillTree(path);
        const packed = await packSkill(files, fields, buildEpoch(this.env));
        for (const blob of [packed.layer, ...packed.configs, ...packed.manifests, packed.index])
            await this.layout.writeBlob(blob.bytes);
        const name = tag ?? fields.name;
        await this.layout.tag(name, {
            ...packed.index.descriptor,
            annotations: {
                [SKILL_ANNOTATIONS.name]: fields.name,
                [SKILL_ANNOTATIONS.description]: fields.description ?? '',
                [SKILL_ANNOTATIONS.version]: fields.version ?? '',
            },
        });
        return name;
    }
    async list() {
        const index = await this.layout.readIndex();
        return index.manifests
            .filter((entry) => entry.annotations?.[REF_NAME])
            .map((entry) => ({
            tag: entry.annotations[REF_NAME],
            digest: entry.digest,
            name: entry.annotations?.[SKILL_ANNOTATIONS.name] ?? '',
            description: entry.annotations?.[SKILL_ANNOTATIONS.description] ?? '',
            version: entry.annotations?.[SKILL_ANNOTATIONS.version] ?? '',
        }))
            .sort((a, b) => a.tag.localeCompare(b.tag));
    }
    async delete(tag) {
        if (!(await this.layout.untag(tag)))
            throw HangarError.notFound(`no local build tagged ${tag}`, 'build_not_found');
    }
    /**
     * The build a reference names: a tag exactly, else the one build of a skill of that name
     * (409 when several builds of that name exist and none is tagged with the name itself).
     */
    async find(reference) {
        const index = await this.layout.readIndex();
        const builds = index.manifests.map((descriptor) => ({
            tag: descriptor.annotations?.[REF_NAME] ?? '',
            descriptor,
            name: descriptor.annotations?.[SKILL_ANNOTATIONS.name] ?? '',
        }));
        const exact = builds.find((build) => build.tag === reference);
        if (exact)
            return exact;
        const named = builds.filter((build) => build.name === reference);
        if (named.length > 1) {
            throw HangarError.conflict(`several local builds of ${reference}: ${named.map((build) => build.tag).join(', ')}; name one by its tag`, 'ambiguous_build');
        }
        return named[0];
    }
    /** Uploads a build to the registry its tag names: layer, configs, manifests, then the index. */
    async push(client, reference, signal, report) {
        const index = await this.layout.readIndex();
        const entry = index.manifests.find((descriptor) => descriptor.annotations?.[REF_NAME] === reference);
        if (!entry)
            throw HangarError.notFound(`no local build tagged ${reference}; build it first with \`hangar skill build\``, 'build_not_found');
        let target;
        try {
            target = parseReference(reference);
        }
        catch (error) {
            throw HangarError.badRequest(error.message, 'invalid_reference');
        }
        const repo = { registry: target.registry, repository: target.repository };
        const indexBytes = await this.requireBlob(entry.digest);
        const document = parseManifestDocument(indexBytes, entry.mediaType);
        if (document?.kind !== 'index')
            throw new HangarError(500, `local build ${reference} is not an index`, 'corrupt_state');
        for (const child of document.index.manifests) {
            const manifestBytes = await this.requireBlob(child.digest);
            const manifest = parseManifestDocument(manifestBytes, child.mediaType);
            if (manifest?.kind !== 'manifest')
                throw new HangarError(500, `local build ${reference} has a damaged manifest`, 'corrupt_state');
            for (const blob of [...manifest.manifest.layers, manifest.manifest.config]) {
                report?.(`uploading ${blob.digest.slice(7, 19)} (${blob.size} bytes)`);
                await client.pushBlob(repo, await this.requireBlob(blob.digest), signal);
            }
            await client.putManifest(repo, child.digest, manifestBytes, child.mediaType, signal);
        }
        await client.putManifest(repo, target.digest ?? target.tag ?? 'latest', indexBytes, MEDIA_TYPES.index, signal);
    }
    /** The layer of a build, found through its index and platform manifest. */
    async layerOf(build) {
        const index = parseManifestDocument(await this.requireBlob(build.descriptor.digest), build.descriptor.mediaType);
        if (index?.kind !== 'index')
            throw new HangarError(500, `local build ${build.tag} is not an index`, 'corrupt_state');
        const chosen = pickPlatformManifest(index.index, build.tag);
        const manifest = parseManifestDocument(await this.requireBlob(chosen.digest), chosen.mediaType);
        return checkSkillManifest(manifest, build.tag).layer;
    }
    /** Extracts a build into `into`, a folder that must not exist. */
    async extract(build, into, signal) {
        const layer = await this.layerOf(build);
        return extractSkillArchive(this.layout.openBlob(layer.digest), into, { digest: layer.digest, signal });
    }
    async requireBlob(digest) {
        const bytes = await this.layout.readBlob(digest);
        if (!bytes)
            throw new HangarError(500, `local build store is missing blob ${digest}`, 'corrupt_state');
        return bytes;
    }
}
function checkTag(tag) {
    try {
        parseReference(tag);
    }
    catch (error) {
        throw HangarError.badRequest(`invalid tag: ${error.message}`, 'invalid_tag');
    }
}
//# sourceMappingURL=builds.js.map