/**
 * Validates the bearer tokens clients present (spec §5): a JWT signed with an asymmetric
 * algorithm by a key of the identity provider, issued by the configured issuer exactly,
 * for the configured audience, not expired and already valid, naming its subject. When an
 * introspection endpoint is configured, a token that is not a JWT (an opaque token) is
 * checked there instead (RFC 7662); its subject is `sub`, else the `client_id` it was
 * issued to. jose is loaded when a workload with authentication starts, never otherwise.
 *
 * Clients send the same token with every request until it expires: a verified token is
 * remembered (up to its `exp`, and at most a minute, so that a key the provider withdraws
 * or a token it revokes stops being trusted soon after) and not verified again meanwhile.
 */
import type { TokenValidatorConfig } from '../../../../protocol/runConfig.js';
import type { Identity } from '../chain.js';
import { IntrospectionRefused, TokenIntrospector } from './introspection.js';
import { RemoteKeySet } from './keySet.js';
import { LruCache } from '../lru.js';
import { ProviderError } from '../../../net/providerUrl.js';

/** RSA, RSA-PSS, ECDSA and EdDSA: `none` and HMAC never (a public key is not a shared secret). */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** Least time between two key fetches caused by unknown `kid`s (`HANGAR_JWKS_COOLDOWN_MS` overrides it). */
const KEY_COOLDOWN_MS = Number(process.env.HANGAR_JWKS_COOLDOWN_MS) || 30_000;
const KEY_MAX_AGE_MS = 10 * 60_000;
const PROVIDER_TIMEOUT_MS = 5_000;
const REMEMBER_MS = 60_000;
const REMEMBERED_TOKENS = 1_000;

/** Why a token was refused; the message is safe to show (it never quotes the token). */
export class TokenRejected extends Error {
	override readonly name = 'TokenRejected';
}

export class TokenValidator {
	private readonly verified = new LruCache<string, { identity: Identity; until: number }>(REMEMBERED_TOKENS);

	private constructor(
		private readonly jose: typeof import('jose'),
		private readonly keys: RemoteKeySet,
		private readonly issuer: string,
		private readonly audience: string,
		private readonly introspector: TokenIntrospector | undefined,
	) {}

	static async create(config: TokenValidatorConfig): Promise<TokenValidator> {
		const issuer = config.issuer?.trim();
		const audience = config.audience?.trim();
		if (!issuer || !audience) throw new Error('authentication needs an issuer and an audience');
		const jose = await import('jose');
		const access = { insecureAllowHTTP: config.insecureAllowHTTP, allowPrivateIP: config.allowPrivateIP };
		const keys = new RemoteKeySet(jose, {
			issuer,
			jwksUrl: config.jwksurl || undefined,
			access,
			cooldownMs: KEY_COOLDOWN_MS,
			maxAgeMs: KEY_MAX_AGE_MS,
			timeoutMs: PROVIDER_TIMEOUT_MS,
		});
		const introspector = config.introspectionURL
			? new TokenIntrospector({
					url: config.introspectionURL,
					issuer,
					audience,
					clientId: config.clientID,
					clientSecret: config.clientSecret,
					access,
					timeoutMs: PROVIDER_TIMEOUT_MS,
				})
			: undefined;
		return new TokenValidator(jose, keys, issuer, audience, introspector);
	}

	/** The caller's identity, or a TokenRejected saying what is wrong with the token. */
	async verify(token: string): Promise<Identity> {
		const now = Date.now();
		const known = this.verified.get(token);
		if (known && now < known.until) return known.identity;
		if (known) this.verified.delete(token);
		const identity = this.introspector && !this.isJwt(token) ? await this.introspected(this.introspector, token) : await this.verifiedJwt(token);
		this.verified.set(token, { identity, until: Math.min((identity.claims.exp as number) * 1000, now + REMEMBER_MS) });
		return identity;
	}

	private async verifiedJwt(token: string): Promise<Identity> {
		let payload: Record<string, unknown>;
		try {
			({ payload } = await this.jose.jwtVerify(token, this.keys.resolve, {
				issuer: this.issuer,
				audience: this.audience,
				algorithms: ASYMMETRIC_ALGORITHMS,
				requiredClaims: ['exp', 'sub'],
			}));
		} catch (error) {
			throw new TokenRejected(this.reason(error as Error));
		}
		if (typeof payload.sub !== 'string' || payload.sub === '') throw new TokenRejected('the token has no subject (sub)');
		return { subject: payload.sub, claims: payload };
	}

	private async introspected(introspector: TokenIntrospector, token: string): Promise<Identity> {
		let claims: Record<string, unknown>;
		try {
			claims = await introspector.claims(token);
		} catch (error) {
			if (error instanceof IntrospectionRefused) throw new TokenRejected(error.message);
			if (error instanceof ProviderError) throw new TokenRejected(`cannot introspect the token: ${error.message}`);
			throw error;
		}
		const subject = [claims.sub, claims.client_id].find((value): value is string => typeof value === 'string' && value !== '');
		if (!subject) throw new TokenRejected('the token names no subject (sub) nor client (client_id)');
		return { subject, claims };
	}

	/** A JWS in compact form: anything else is an opaque token. */
	private isJwt(token: string): boolean {
		if (token.split('.').length !== 3) return false;
		try {
			this.jose.decodeProtectedHeader(token);
			return true;
		} catch {
			return false;
		}
	}

	private reason(error: Error): string {
		const { errors } = this.jose;
		if (error instanceof ProviderError) return `cannot get the identity provider's signing keys: ${error.message}`;
		if (error instanceof errors.JWTExpired) return 'the token has expired';
		if (error instanceof errors.JWTClaimValidationFailed) {
			if (error.claim === 'nbf') return 'the token is not valid yet (nbf)';
			if (error.claim === 'iss') return `the token was not issued by ${this.issuer}`;
			if (error.claim === 'aud') return `the token is not meant for audience ${this.audience}`;
			return error.message;
		}
		if (error instanceof errors.JOSEAlgNotAllowed) return `the signing algorithm is not allowed (accepted: ${ASYMMETRIC_ALGORITHMS.join(', ')})`;
		if (error instanceof errors.JWSSignatureVerificationFailed) return 'the signature does not verify';
		if (error instanceof errors.JWKSNoMatchingKey) return 'no signing key of the identity provider matches the token';
		if (error instanceof errors.JWKSMultipleMatchingKeys) return 'the token names no key (kid) and several match';
		if (error instanceof errors.JOSEError) return `malformed token (${error.message})`;
		return 'the token could not be verified';
	}
}
