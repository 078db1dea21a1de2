/**
 * Token introspection (RFC 7662), for access tokens that are not JWTs: the proxy asks the
 * identity provider whether the token is active, authenticating as its OAuth client when it
 * has credentials, then checks the answer as it would a JWT's claims: issued by the issuer
 * (when the answer names one), for the audience, not expired, already valid.
 *
 * Every unknown token costs the provider a request, so a refused token is remembered for a
 * minute, and concurrent checks of one token share one request.
 */
import { LruCache } from '../lru.js';
import { checkProviderUrl, ProviderError, type ProviderAccess } from '../../../net/providerUrl.js';
import { requestProviderJson } from '../../../net/providerFetch.js';

/** Why the provider's answer does not let the token in; the message is safe to show. */
export class IntrospectionRefused extends Error {
	override readonly name = 'IntrospectionRefused';
}

export interface IntrospectionOptions {
	readonly url: string;
	readonly issuer: string;
	readonly audience: string;
	/** The proxy's own OAuth client, sent as HTTP Basic credentials. */
	readonly clientId?: string;
	readonly clientSecret?: string;
	readonly access: ProviderAccess;
	readonly timeoutMs: number;
}

const REFUSALS_REMEMBERED_MS = 60_000;
const REFUSALS_REMEMBERED = 1_000;

export class TokenIntrospector {
	private readonly url: URL;
	private readonly headers: Record<string, string>;
	private readonly refused = new LruCache<string, { reason: string; until: number }>(REFUSALS_REMEMBERED);
	private readonly inFlight = new Map<string, Promise<Record<string, unknown>>>();

	constructor(private readonly options: IntrospectionOptions) {
		this.url = checkProviderUrl(options.url, options.access);
		this.headers = { 'Content-Type': 'application/x-www-form-urlencoded' };
		if (options.clientId) {
			// RFC 6749 §2.3.1: each part form-encoded before the Basic encoding.
			const credentials = `${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret ?? '')}`;
			this.headers.Authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
		}
	}

	/**
	 * The claims of an active token that passes the checks. Throws IntrospectionRefused for a
	 * token the provider or the checks refuse, and a ProviderError when the provider cannot say.
	 */
	async claims(token: string): Promise<Record<string, unknown>> {
		const known = this.refused.get(token);
		if (known && Date.now() < known.until) throw new IntrospectionRefused(known.reason);
		let answer = this.inFlight.get(token);
		if (!answer) {
			answer = this.ask(token).finally(() => this.inFlight.delete(token));
			this.inFlight.set(token, answer);
		}
		const claims = await answer;
		const reason = this.refusalOf(claims);
		if (reason) {
			this.refused.set(token, { reason, until: Date.now() + REFUSALS_REMEMBERED_MS });
			throw new IntrospectionRefused(reason);
		}
		return claims;
	}

	private async ask(token: string): Promise<Record<string, unknown>> {
		const body = new URLSearchParams({ token, token_type_hint: 'access_token' }).toString();
		const answer = await requestProviderJson(this.url, { method: 'POST', headers: this.headers, body }, this.options.access, this.options.timeoutMs);
		if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
			throw new ProviderError(`${this.url.origin}${this.url.pathname} did not answer with an introspection response`);
		}
		return answer as Record<string, unknown>;
	}

	private refusalOf(claims: Record<string, unknown>): string | undefined {
		const now = Date.now() / 1000;
		if (claims.active !== true) return 'the token is not active';
		if (claims.iss !== undefined && claims.iss !== this.options.issuer) return `the token was not issued by ${this.options.issuer}`;
		const audiences = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
		if (!audiences.includes(this.options.audience)) return `the token is not meant for audience ${this.options.audience}`;
		if (typeof claims.exp !== 'number') return 'the introspection answer has no expiry (exp)';
		if (claims.exp <= now) return 'the token has expired';
		if (typeof claims.nbf === 'number' && claims.nbf > now) return 'the token is not valid yet (nbf)';
		return undefined;
	}
}
