/**
 * Skills from OCI: resolve a reference to its manifest (through an index to the platform
 * manifest), then pull the one layer into a content-addressed cache and extract it from
 * there with its digest checked again. A warm install fetches only the top manifest (which
 * the tag may have moved) and reads child manifests and the layer from the cache.
 */
import { join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import type { ProgressReporter } from '../context.js';
import type { RegistryClient, Repository } from '../oci/client.js';
import { OciLayout } from '../oci/layout.js';
import { parseManifestDocument, type Descriptor, type ManifestDocument } from '../oci/media.js';
import { formatReference, manifestReference, type OciReference } from '../oci/reference.js';
import type { HangarPaths } from '../store/paths.js';
import { checkSkillManifest, pickPlatformManifest } from './artifact.js';
import { DEFAULT_LIMITS, extractSkillArchive, type ExtractedFile } from './extract.js';

export interface ResolvedArtifact {
	readonly repo: Repository;
	/** The digest the reference resolved to (an index or a manifest): the pin. */
	readonly digest: string;
	readonly layer: Descriptor;
	readonly annotations: Record<string, string>;
}

export class OciSkillSource {
	readonly cache: OciLayout;

	constructor(
		readonly client: RegistryClient,
		paths: HangarPaths,
	) {
		this.cache = new OciLayout(join(paths.cache, 'skills', 'oci'));
	}

	async resolve(reference: OciReference, signal: AbortSignal): Promise<ResolvedArtifact> {
		const repo = { registry: reference.registry, repository: reference.repository };
		const what = formatReference(reference);
		const top = await this.client.getManifest(repo, manifestReference(reference), signal);
		let document = top.document;
		if (document.kind === 'index') {
			const chosen = pickPlatformManifest(document.index, what);
			document = await this.manifest(repo, chosen, signal);
		}
		const { manifest, layer } = checkSkillManifest(document, what);
		if (layer.size > DEFAULT_LIMITS.maxTotalBytes) {
			throw new HangarError(422, `${what} has a ${layer.size}-byte layer; at most ${DEFAULT_LIMITS.maxTotalBytes} allowed`, 'invalid_artifact');
		}
		const annotations = top.document.kind === 'index' ? (top.document.index.annotations ?? manifest.annotations ?? {}) : (manifest.annotations ?? {});
		return { repo, digest: top.digest, layer, annotations };
	}

	/** A child manifest, from the cache when this digest was seen before. */
	private async manifest(repo: Repository, descriptor: Descriptor, signal: AbortSignal): Promise<ManifestDocument> {
		const cached = await this.cache.readBlob(descriptor.digest);
		const parsed = cached && parseManifestDocument(cached, descriptor.mediaType);
		if (parsed) return parsed;
		const pulled = await this.client.getManifest(repo, descriptor.digest, signal);
		await this.cache.writeBlob(pulled.bytes);
		return pulled.document;
	}

	/**
	 * Extracts the layer into `into`, a folder that must not exist: from the cache when it holds
	 * the layer, else straight from the registry while a copy goes into the cache.
	 */
	async extract(artifact: ResolvedArtifact, into: string, signal: AbortSignal, progress?: ProgressReporter): Promise<ExtractedFile[]> {
		const { layer } = artifact;
		if (await this.cache.hasBlob(layer.digest)) {
			progress?.report('extracting');
			try {
				return await extractSkillArchive(this.cache.openBlob(layer.digest) as AsyncIterable<Buffer>, into, { digest: layer.digest, signal });
			} catch (error) {
				// A damaged cache entry is dropped and the layer pulled again.
				if (!(error instanceof HangarError) || error.code !== 'digest_mismatch') throw error;
				await this.cache.dropBlob(layer.digest);
			}
		}
		let received = 0;
		const chunks = this.client.streamBlob(artifact.repo, layer, signal, (bytes) => {
			received += bytes;
			progress?.report(`downloading ${formatBytes(received)} of ${formatBytes(layer.size)}`, Math.floor((received / Math.max(layer.size, 1)) * 100));
		});
		// The registry stream checks the digest before its last chunk is consumed, so extraction fails on a bad blob.
		return extractSkillArchive(this.cache.keep(layer, chunks), into, { signal });
	}
}

export function formatBytes(bytes: number): string {
	if (bytes < 1024) return `${bytes} B`;
	if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
	return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
