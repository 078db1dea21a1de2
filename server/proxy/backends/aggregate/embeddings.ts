/**
 * The semantic half of a search-mode aggregate's ranking: an OpenAI-compatible embeddings
 * endpoint (`POST {url}/embeddings`, `{model, input: [text…]}` → `{data: [{index, embedding}]}`)
 * reached under the outbound-address policy (net/providerUrl.ts: https, or http on loopback).
 *
 * Each tool's text is embedded once and kept by the fingerprint of what was embedded (the
 * model and the text), so a list change embeds only the definitions that changed; that work
 * runs in the background. A query waits for its own embedding at most `timeout_ms`: when the
 * endpoint is down, slow or answers garbage, find_tool ranks lexically within the same budget,
 * the endpoint is left alone for a while, and `status` says why.
 */
import { createHash } from 'node:crypto';
import type { SearchEmbeddings } from '../../../../protocol/runConfig.js';
import type { Logger } from '../../../log.js';
import { requestProviderJson } from '../../../net/providerFetch.js';
import type { ProviderAccess } from '../../../net/providerUrl.js';

const DEFAULT_TIMEOUT_MS = 1_000;
/** Texts per request to the endpoint while embedding tools. */
const BATCH = 64;
/** How long tools' embeddings may take per batch. */
const BATCH_TIMEOUT_MS = 60_000;
/** How long a failed endpoint is left alone before it is asked again. */
const BACKOFF_MS = 30_000;
/** An answer's cap: a batch of large vectors is several MiB of JSON. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** A text's cap: endpoints refuse or cut inputs past their context. */
const MAX_TEXT = 2_000;

/** The setting that lets the endpoint be on a private address. */
const EMBEDDINGS_PRIVATE_IP = 'aggregation.search.embeddings.allow_private_ip';

export interface EmbeddingsOptions {
	readonly config: SearchEmbeddings;
	/** A Hangar secret's value, for `api_key_secret`. */
	readonly resolveSecret: (name: string) => Promise<string>;
	readonly log: Logger;
	/** Called when `status` changes. */
	readonly onStatus: (status: string | undefined) => void;
}

export class Embeddings {
	/** Vectors by fingerprint (`fingerprintOf`). */
	private readonly vectors = new Map<string, Float32Array>();
	/** Texts waiting to be embedded, by fingerprint. */
	private readonly waiting = new Map<string, string>();
	private working: Promise<void> | undefined;
	private downUntil = 0;
	private apiKey: Promise<string | undefined> | undefined;
	private readonly access: ProviderAccess;
	/** Why the endpoint is not used now; undefined while it answers. */
	private status: string | undefined;

	constructor(private readonly options: EmbeddingsOptions) {
		this.access = {
			allowPrivateIP: options.config.allow_private_ip,
			settings: { allowPrivateIP: EMBEDDINGS_PRIVATE_IP },
		};
	}

	get weight(): number {
		return this.options.config.weight ?? 0.5;
	}

	fingerprintOf(text: string): string {
		return createHash('sha256').update(`${this.options.config.model}\n${text.slice(0, MAX_TEXT)}`).digest('base64url');
	}

	/** The vector of a text embedded already, by its fingerprint. */
	vectorOf(fingerprint: string): Float32Array | undefined {
		return this.vectors.get(fingerprint);
	}

	/** Embeds, in the background, the texts not embedded yet. */
	prepare(texts: ReadonlyMap<string, string>): void {
		for (const [fingerprint, text] of texts) if (!this.vectors.has(fingerprint)) this.waiting.set(fingerprint, text);
		if (this.waiting.size && !this.working && Date.now() >= this.downUntil) {
			this.working = this.work().finally(() => (this.working = undefined));
		}
	}

	/** The query's vector, or undefined when the endpoint cannot give it within the timeout. */
	async query(text: string): Promise<Float32Array | undefined> {
		if (Date.now() < this.downUntil) return undefined;
		try {
			const [vector] = await this.embed([text], this.options.config.timeout_ms ?? DEFAULT_TIMEOUT_MS);
			this.answered();
			return vector;
		} catch (error) {
			this.failed(error as Error);
			return undefined;
		}
	}

	private async work(): Promise<void> {
		while (this.waiting.size && Date.now() >= this.downUntil) {
			const batch = [...this.waiting].slice(0, BATCH);
			try {
				const vectors = await this.embed(
					batch.map(([, text]) => text),
					BATCH_TIMEOUT_MS,
				);
				batch.forEach(([fingerprint], at) => {
					this.vectors.set(fingerprint, vectors[at]!);
					this.waiting.delete(fingerprint);
				});
				this.answered();
			} catch (error) {
				this.failed(error as Error);
			}
		}
	}

	private async embed(texts: readonly string[], timeoutMs: number): Promise<Float32Array[]> {
		const { url, model, api_key_secret } = this.options.config;
		this.apiKey ??= api_key_secret ? this.options.resolveSecret(api_key_secret) : Promise.resolve(undefined);
		const key = await this.apiKey.catch((error: Error) => {
			this.apiKey = undefined;
			throw new Error(`cannot read the secret ${api_key_secret}: ${error.message}`);
		});
		const endpoint = new URL(`${url.replace(/\/+$/, '')}/embeddings`);
		const body = JSON.stringify({ model, input: texts.map((text) => text.slice(0, MAX_TEXT)) });
		const headers = { 'Content-Type': 'application/json', ...(key ? { Authorization: `Bearer ${key}` } : {}) };
		const answer = await requestProviderJson(endpoint, { method: 'POST', headers, body }, this.access, timeoutMs, MAX_ANSWER_BYTES);
		return vectorsOf(answer, texts.length, `${endpoint.origin}${endpoint.pathname}`);
	}

	private answered(): void {
		this.setStatus(undefined);
	}

	private failed(error: Error): void {
		this.downUntil = Date.now() + BACKOFF_MS;
		this.setStatus(`embeddings unavailable (${error.message}): find_tool ranks lexically; asked again in ${BACKOFF_MS / 1000} s`);
	}

	private setStatus(status: string | undefined): void {
		if (status === this.status) return;
		this.status = status;
		if (status) this.options.log.warn(status);
		else this.options.log.info('embeddings endpoint answering: find_tool blends lexical and semantic scores');
		this.options.onStatus(status);
	}
}

/** The vectors of an embeddings answer, in input order, each of the same length; throws on any other shape. */
function vectorsOf(answer: unknown, count: number, where: string): Float32Array[] {
	const data = (answer as { data?: unknown } | null)?.data;
	if (!Array.isArray(data) || data.length !== count) throw new Error(`${where} did not answer ${count} embedding${count === 1 ? '' : 's'}`);
	const vectors: Float32Array[] = new Array(count);
	for (const [position, item] of data.entries()) {
		const index = typeof item?.index === 'number' ? item.index : position;
		const embedding = item?.embedding;
		if (!Number.isInteger(index) || index < 0 || index >= count || vectors[index] || !Array.isArray(embedding) || !embedding.length || !embedding.every((value) => typeof value === 'number' && Number.isFinite(value))) {
			throw new Error(`${where} answered an embedding that is not a list of numbers`);
		}
		vectors[index] = normalized(Float32Array.from(embedding));
	}
	if (vectors.some((vector) => vector.length !== vectors[0]!.length)) throw new Error(`${where} answered embeddings of different lengths`);
	return vectors;
}

/** `vector` scaled to length 1, so a dot product is the cosine. */
function normalized(vector: Float32Array): Float32Array {
	let sum = 0;
	for (const value of vector) sum += value * value;
	const length = Math.sqrt(sum) || 1;
	return vector.map((value) => value / length);
}

/** The cosine of two unit vectors (0 when their lengths differ: another model's). */
export function cosine(a: Float32Array, b: Float32Array): number {
	if (a.length !== b.length) return 0;
	let dot = 0;
	for (let at = 0; at < a.length; at++) dot += a[at]! * b[at]!;
	return dot;
}
