/**
 * The identity provider's signing keys, for jose's `jwtVerify`: found through the issuer's
 * discovery document (`jwks_uri`) or at the configured JWKS URL, fetched once and kept.
 *
 * - A token whose key is not in the set (a rotation) fetches the set again, at most once per
 *   cool-down, so random `kid`s cannot make the proxy hammer the provider.
 * - The set is fetched again after `maxAgeMs`; if the provider is unreachable then, the keys
 *   already known keep working.
 * - A failed fetch is not retried for a moment: while the provider is down, requests are
 *   refused at once instead of each waiting for it.
 */
import type { JWSHeaderParameters, FlattenedJWSInput } from 'jose';
import { checkProviderUrl, ProviderError, type ProviderAccess } from '../../../net/providerUrl.js';
import { fetchProviderJson } from '../../../net/providerFetch.js';

type Jose = typeof import('jose');
type KeySelector = ReturnType<Jose['createLocalJWKSet']>;
type Key = Awaited<ReturnType<KeySelector>>;

export interface KeySetOptions {
	readonly issuer: string;
	/** The JWKS URL; else the discovery document's `jwks_uri`. */
	readonly jwksUrl?: string;
	readonly access: ProviderAccess;
	/** Least time between two fetches caused by unknown keys. */
	readonly cooldownMs: number;
	/** Age after which the set is fetched again. */
	readonly maxAgeMs: number;
	readonly timeoutMs: number;
}

const FAILURE_BACKOFF_MS = 1_000;

interface Fetched {
	readonly select: KeySelector;
	readonly at: number;
}

export class RemoteKeySet {
	private current: Fetched | undefined;
	private inFlight: Promise<Fetched> | undefined;
	private failure: { error: Error; at: number } | undefined;
	private jwksUrl: URL | undefined;

	constructor(
		private readonly jose: Jose,
		private readonly options: KeySetOptions,
	) {
		if (options.jwksUrl) this.jwksUrl = checkProviderUrl(options.jwksUrl, options.access);
	}

	/** jose's key resolver: the key the token's header names. */
	readonly resolve = async (header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<Key> => {
		const known = this.current;
		const fresh = known && Date.now() - known.at <= this.options.maxAgeMs;
		// Past their age the keys are fetched again; if the provider is down, the known ones still serve.
		const keys = fresh ? known : await this.refresh().catch((error: Error) => known ?? Promise.reject(error));
		try {
			return await keys.select(header, token);
		} catch (error) {
			if (!(error instanceof this.jose.errors.JWKSNoMatchingKey) || Date.now() - keys.at < this.options.cooldownMs) throw error;
			return (await this.refresh()).select(header, token);
		}
	};

	private refresh(): Promise<Fetched> {
		if (this.failure && Date.now() - this.failure.at < FAILURE_BACKOFF_MS) return Promise.reject(this.failure.error);
		this.inFlight ??= this.fetchKeys()
			.then(
				(fetched) => {
					this.current = fetched;
					this.failure = undefined;
					return fetched;
				},
				(error: Error) => {
					this.failure = { error, at: Date.now() };
					throw error;
				},
			)
			.finally(() => (this.inFlight = undefined));
		return this.inFlight;
	}

	private async fetchKeys(): Promise<Fetched> {
		const url = (this.jwksUrl ??= await this.discover());
		const jwks = await fetchProviderJson(url, this.options.access, this.options.timeoutMs);
		try {
			return { select: this.jose.createLocalJWKSet(jwks as Parameters<Jose['createLocalJWKSet']>[0]), at: Date.now() };
		} catch {
			throw new ProviderError(`${url.origin}${url.pathname} is not a JSON Web Key Set`);
		}
	}

	/** The `jwks_uri` of `{issuer}/.well-known/openid-configuration`. */
	private async discover(): Promise<URL> {
		const base = this.options.issuer.replace(/\/+$/, '');
		const url = checkProviderUrl(`${base}/.well-known/openid-configuration`, this.options.access);
		const document = await fetchProviderJson(url, this.options.access, this.options.timeoutMs);
		const jwksUri = (document as { jwks_uri?: unknown } | null)?.jwks_uri;
		if (typeof jwksUri !== 'string' || !jwksUri) throw new ProviderError(`the discovery document at ${url.origin}${url.pathname} has no jwks_uri`);
		return checkProviderUrl(jwksUri, this.options.access);
	}
}
