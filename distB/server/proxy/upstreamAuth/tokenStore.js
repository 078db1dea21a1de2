export class TokenStore {
    name;
    store;
    secrets;
    log;
    memory = {};
    constructor(name, store, secrets, log) {
        this.name = name;
        this.store = store;
        this.secrets = secrets;
        this.log = log;
    }
    key(what) {
        return `oauth/${this.name}/${what}`;
    }
    async config() {
        return (await this.store.configs.get(this.name))?.remote_auth_config ?? {};
    }
    async change(update) {
        await this.store.configs.update(this.name, (stored) => ({ ...stored, remote_auth_config: update(stored.remote_auth_config ?? {}) }));
    }
    async resolve(ref) {
        if (!ref)
            return undefined;
        return this.secrets.resolve(ref).catch((error) => {
            this.log.warn(`cannot read the cached secret ${ref}: ${error.message}`);
            return undefined;
        });
    }
    /** Stores a secret value; false when the provider cannot keep it (it is then kept in memory). */
    async keep(key, value) {
        try {
            await this.secrets.put(key, value);
            return true;
        }
        catch (error) {
            this.log.warn(`cannot store ${key} in the secrets provider (${error.message}); kept in memory until the proxy stops`);
            return false;
        }
    }
    async load() {
        const auth = await this.config();
        const refreshToken = this.memory.refreshToken ?? (await this.resolve(auth.cached_refresh_token_ref));
        let client;
        if (auth.cached_client_id && auth.cached_issuer) {
            const clientSecret = this.memory.clientSecret ?? (await this.resolve(auth.cached_client_secret_ref));
            client = { issuer: auth.cached_issuer, clientId: auth.cached_client_id, clientSecret, callbackPort: auth.cached_dcr_callback_port };
        }
        return { client, refreshToken };
    }
    async saveClient(client) {
        const secretRef = client.clientSecret && (await this.keep(this.key('client_secret'), client.clientSecret)) ? this.key('client_secret') : undefined;
        if (client.clientSecret && !secretRef)
            this.memory.clientSecret = client.clientSecret;
        await this.change((auth) => ({
            ...auth,
            cached_issuer: client.issuer,
            cached_client_id: client.clientId,
            cached_client_secret_ref: secretRef,
            cached_dcr_callback_port: client.callbackPort,
            cached_refresh_token_ref: undefined,
        }));
    }
    async saveTokens(refreshToken, expiresAt) {
        let ref;
        if (refreshToken) {
            if (await this.keep(this.key('refresh_token'), refreshToken))
                ref = this.key('refresh_token');
            else
                this.memory.refreshToken = refreshToken;
        }
        await this.change((auth) => ({ ...auth, cached_refresh_token_ref: ref ?? (refreshToken ? undefined : auth.cached_refresh_token_ref), cached_token_expiry: expiresAt?.toISOString() }));
    }
    /** Forgets a refresh token the authorization server no longer accepts. */
    async forgetTokens() {
        this.memory.refreshToken = undefined;
        const auth = await this.config();
        if (auth.cached_refresh_token_ref)
            await this.secrets.delete(auth.cached_refresh_token_ref).catch(() => undefined);
        await this.change(({ cached_refresh_token_ref: _ref, cached_token_expiry: _expiry, ...auth }) => auth);
    }
}
//# sourceMappingURL=tokenStore.js.map