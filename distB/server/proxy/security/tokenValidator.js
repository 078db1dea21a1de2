import { IntrospectionRefused, TokenIntrospector } from './introspection.js';
import { RemoteKeySet } from './keySet.js';
import { LruCache } from './lru.js';
import { ProviderError } from '../../net/providerUrl.js';
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
    name = 'TokenRejected';
}
export class TokenValidator {
    jose;
    keys;
    issuer;
    audience;
    introspector;
    verified = new LruCache(REMEMBERED_TOKENS);
    constructor(jose, keys, issuer, audience, introspector) {
        this.jose = jose;
        this.keys = keys;
        this.issuer = issuer;
        this.audience = audience;
        this.introspector = introspector;
    }
    static async create(config) {
        const issuer = config.issuer?.trim();
        const audience = config.audience?.trim();
        if (!issuer || !audience)
            throw new Error('authentication needs an issuer and an audience');
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
    async verify(token) {
        const now = Date.now();
        const known = this.verified.get(token);
        if (known && now < known.until)
            return known.identity;
        if (known)
            this.verified.delete(token);
        const identity = this.introspector && !this.isJwt(token) ? await this.introspected(this.introspector, token) : await this.verifiedJwt(token);
        this.verified.set(token, { identity, until: Math.min(identity.claims.exp * 1000, now + REMEMBER_MS) });
        return identity;
    }
    async verifiedJwt(token) {
        let payload;
        try {
            ({ payload } = await this.jose.jwtVerify(token, this.keys.resolve, {
                issuer: this.issuer,
                audience: this.audience,
                algorithms: ASYMMETRIC_ALGORITHMS,
                requiredClaims: ['exp', 'sub'],
            }));
        }
        catch (error) {
            throw new TokenRejected(this.reason(error));
        }
        if (typeof payload.sub !== 'string' || payload.sub === '')
            throw new TokenRejected('the token has no subject (sub)');
        return { subject: payload.sub, claims: payload };
    }
    async introspected(introspector, token) {
        let claims;
        try {
            claims = await introspector.claims(token);
        }
        catch (error) {
            if (error instanceof IntrospectionRefused)
                throw new TokenRejected(error.message);
            if (error instanceof ProviderError)
                throw new TokenRejected(`cannot introspect the token: ${error.message}`);
            throw error;
        }
        const subject = [claims.sub, claims.client_id].find((value) => typeof value === 'string' && value !== '');
        if (!subject)
            throw new TokenRejected('the token names no subject (sub) nor client (client_id)');
        return { subject, claims };
    }
    /** A JWS in compact form: anything else is an opaque token. */
    isJwt(token) {
        if (token.split('.').length !== 3)
            return false;
        try {
            this.jose.decodeProtectedHeader(token);
            return true;
        }
        catch {
            return false;
        }
    }
    reason(error) {
        const { errors } = this.jose;
        if (error instanceof ProviderError)
            return `cannot get the identity provider's signing keys: ${error.message}`;
        if (error instanceof errors.JWTExpired)
            return 'the token has expired';
        if (error instanceof errors.JWTClaimValidationFailed) {
            if (error.claim === 'nbf')
                return 'the token is not valid yet (nbf)';
            if (error.claim === 'iss')
                return `the token was not issued by ${this.issuer}`;
            if (error.claim === 'aud')
                return `the token is not meant for audience ${this.audience}`;
            return error.message;
        }
        if (error instanceof errors.JOSEAlgNotAllowed)
            return `the signing algorithm is not allowed (accepted: ${ASYMMETRIC_ALGORITHMS.join(', ')})`;
        if (error instanceof errors.JWSSignatureVerificationFailed)
            return 'the signature does not verify';
        if (error instanceof errors.JWKSNoMatchingKey)
            return 'no signing key of the identity provider matches the token';
        if (error instanceof errors.JWKSMultipleMatchingKeys)
            return 'the token names no key (kid) and several match';
        if (error instanceof errors.JOSEError)
            return `malformed token (${error.message})`;
        return 'the token could not be verified';
    }
}
//# sourceMappingURL=tokenValidator.js.map