/**
 * What a sign-in leaves behind for the next proxy: the refresh token and a registered client's
 * secret go to the secrets provider (`oauth/NAME/refresh_token`, `oauth/NAME/client_secret`);
 * the run configuration's `remote_auth_config` gets only references to them
 * (`cached_refresh_token_ref`, `cached_client_secret_ref`) and non-secret facts
 * (`cached_client_id`, `cached_issuer`, `cached_token_expiry`, `cached_dcr_callback_port`).
 * The access token is never stored: it lives in the proxy's memory. A secrets provider that
 * cannot be written keeps the refresh token in memory too (a restart then needs a sign-in).
 */
import type { RemoteAuthConfig } from '../../../../protocol/runConfig.js';
import type { Logger } from '../../../log.js';
import type { WorkloadStore } from '../../../runspec/store.js';
import type { SecretsService } from '../../../secrets/service.js';

export interface CachedClient {
	readonly issuer: string;
	readonly clientId: string;
	readonly clientSecret?: string;
	readonly callbackPort?: number;
}

export interface Cached {
	readonly client?: CachedClient;
	readonly refreshToken?: string;
}

export class TokenStore {
	private memory: { refreshToken?: string; clientSecret?: string } = {};

	constructor(
		private readonly name: string,
		private readonly store: WorkloadStore,
		private readonly secrets: Pick<SecretsService, 'put' | 'resolve' | 'delete'>,
		private readonly log: Logger,
	) {}

	private key(what: 'refresh_token' | 'client_secret'): string {
		return `oauth/${this.name}/${what}`;
	}

	private async config(): Promise<RemoteAuthConfig> {
		return (await this.store.configs.get(this.name))?.remote_auth_config ?? {};
	}

	private async change(update: (auth: RemoteAuthConfig) => RemoteAuthConfig): Promise<void> {
		await this.store.configs.update(this.name, (stored) => ({ ...stored, remote_auth_config: update(stored.remote_auth_config ?? {}) }));
	}

	private async resolve(ref: string | undefined): Promise<string | undefined> {
		if (!ref) return undefined;
		return this.secrets.resolve(ref).catch((error: Error) => {
			this.log.warn(`cannot read the cached secret ${ref}: ${error.message}`);
			return undefined;
		});
	}

	/** Stores a secret value; false when the provider cannot keep it (it is then kept in memory). */
	private async keep(key: string, value: string): Promise<boolean> {
		try {
			await this.secrets.put(key, value);
			return true;
		} catch (error) {
			this.log.warn(`cannot store ${key} in the secrets provider (${(error as Error).message}); kept in memory until the proxy stops`);
			return false;
		}
	}

	async load(): Promise<Cached> {
		const auth = await this.config();
		const refreshToken = this.memory.refreshToken ?? (await this.resolve(auth.cached_refresh_token_ref));
		let client: CachedClient | undefined;
		if (auth.cached_client_id && auth.cached_issuer) {
			const clientSecret = this.memory.clientSecret ?? (await this.resolve(auth.cached_client_secret_ref));
			client = { issuer: auth.cached_issuer, clientId: auth.cached_client_id, clientSecret, callbackPort: auth.cached_dcr_callback_port };
		}
		return { client, refreshToken };
	}

	async saveClient(client: CachedClient): Promise<void> {
		const secretRef = client.clientSecret && (await this.keep(this.key('client_secret'), client.clientSecret)) ? this.key('client_secret') : undefined;
		if (client.clientSecret && !secretRef) this.memory.clientSecret = client.clientSecret;
		await this.change((auth) => ({
			...auth,
			cached_issuer: client.issuer,
			cached_client_id: client.clientId,
			cached_client_secret_ref: secretRef,
			cached_dcr_callback_port: client.callbackPort,
			cached_refresh_token_ref: undefined,
		}));
	}

	async saveTokens(refreshToken: string | undefined, expiresAt: Date | undefined): Promise<void> {
		let ref: string | undefined;
		if (refreshToken) {
			if (await this.keep(this.key('refresh_token'), refreshToken)) ref = this.key('refresh_token');
			else this.memory.refreshToken = refreshToken;
		}
		await this.change((auth) => ({ ...auth, cached_refresh_token_ref: ref ?? (refreshToken ? undefined : auth.cached_refresh_token_ref), cached_token_expiry: expiresAt?.toISOString() }));
	}

	/** Forgets a refresh token the authorization server no longer accepts. */
	async forgetTokens(): Promise<void> {
		this.memory.refreshToken = undefined;
		const auth = await this.config();
		if (auth.cached_refresh_token_ref) await this.secrets.delete(auth.cached_refresh_token_ref).catch(() => undefined);
		await this.change(({ cached_refresh_token_ref: _ref, cached_token_expiry: _expiry, ...auth }) => auth);
	}
}
