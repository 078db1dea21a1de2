import { checkProviderUrl, ProviderError } from '../../net/providerUrl.js';
import { fetchProviderJson } from './providerFetch.js';
const FAILURE_BACKOFF_MS = 1_000;
export class RemoteKeySet {
    jose;
    options;
    current;
    inFlight;
    failure;
    jwksUrl;
    constructor(jose, options) {
        this.jose = jose;
        this.options = options;
        if (options.jwksUrl)
            this.jwksUrl = checkProviderUrl(options.jwksUrl, options.access);
    }
    /** jose's key resolver: the key the token's header names. */
    resolve = async (header, token) => {
        const known = this.current;
        const fresh = known && Date.now() - known.at <= this.options.maxAgeMs;
        // Past their age the keys are fetched again; if the provider is down, the known ones still serve.
        const keys = fresh ? known : await this.refresh().catch((error) => known ?? Promise.reject(error));
        try {
            return await keys.select(header, token);
        }
        catch (error) {
            if (!(error instanceof this.jose.errors.JWKSNoMatchingKey) || Date.now() - keys.at < this.options.cooldownMs)
                throw error;
            return (await this.refresh()).select(header, token);
        }
    };
    refresh() {
        if (this.failure && Date.now() - this.failure.at < FAILURE_BACKOFF_MS)
            return Promise.reject(this.failure.error);
        this.inFlight ??= this.fetchKeys()
            .then((fetched) => {
            this.current = fetched;
            this.failure = undefined;
            return fetched;
        }, (error) => {
            this.failure = { error, at: Date.now() };
            throw error;
        })
            .finally(() => (this.inFlight = undefined));
        return this.inFlight;
    }
    async fetchKeys() {
        const url = (this.jwksUrl ??= await this.discover());
        const jwks = await fetchProviderJson(url, this.options.access, this.options.timeoutMs);
        try {
            return { select: this.jose.createLocalJWKSet(jwks), at: Date.now() };
        }
        catch {
            throw new ProviderError(`${url.origin}${url.pathname} is not a JSON Web Key Set`);
        }
    }
    /** The `jwks_uri` of `{issuer}/.well-known/openid-configuration`. */
    async discover() {
        const base = this.options.issuer.replace(/\/+$/, '');
        const url = checkProviderUrl(`${base}/.well-known/openid-configuration`, this.options.access);
        const document = await fetchProviderJson(url, this.options.access, this.options.timeoutMs);
        const jwksUri = document?.jwks_uri;
        if (typeof jwksUri !== 'string' || !jwksUri)
            throw new ProviderError(`the discovery document at ${url.origin}${url.pathname} has no jwks_uri`);
        return checkProviderUrl(jwksUri, this.options.access);
    }
}
//# sourceMappingURL=keySet.js.map