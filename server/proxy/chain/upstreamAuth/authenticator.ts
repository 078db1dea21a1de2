/**
 * The proxy as an OAuth client of its remote MCP server. It holds the access token in memory
 * only, gives every upstream request its `Authorization`, and answers the server's refusals:
 *
 * - 401: refresh (once, shared by every call that saw it) and retry; without a refresh token,
 *   or when the authorization server refuses it, the workload is `unauthenticated`;
 * - 403 `insufficient_scope`: a sign-in with the scopes asked for (step-up);
 * - the authorization server unreachable during a refresh: `auth_retrying`, retried with
 *   back-off; a refusal then ends in `unauthenticated`.
 *
 * A pending sign-in is always ready while `unauthenticated`: an authorization code flow with
 * PKCE (S256), `state` and `resource` (RFC 8707) redirecting to a loopback listener, whose URL
 * is in the status; or, on request, device authorization (RFC 8628). The access token is
 * refreshed ahead of its expiry by a quarter of its lifetime, at most 60 s, and never sooner
 * than 5 s after the last refresh (a token that lives seconds is no refresh storm); failed
 * refreshes back off.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { exchangeAuthorization, refreshAuthorization, registerClient, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformation, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { browsableUrl } from '../../../../protocol/browserUrl.js';
import type { RemoteAuthConfig } from '../../../../protocol/runConfig.js';
import type { Logger } from '../../../log.js';
import type { SignInAnswer } from '../../../runspec/signin.js';
import { isSignInState } from '../../../runspec/store.js';
import { CallbackListener } from './callback.js';
import { deviceEndpointOf, DEVICE_GRANT, pollDeviceToken, startDeviceAuthorization } from './device.js';
import { discover, parseChallenge, scopesFor, type Challenge, type Discovered } from './discovery.js';
import { quoted, UpstreamAuthError } from '../../core/upstreamAuthError.js';
import type { PolicyFetch } from './fetch.js';
import type { TokenStore } from './tokenStore.js';
import type { AuthState, UpstreamCredentials } from '../../core/backend.js';

/** How early a token is refreshed: this share of its lifetime, at most REFRESH_AHEAD_MAX_MS. */
const REFRESH_AHEAD_SHARE = 0.25;
const REFRESH_AHEAD_MAX_MS = 60_000;
/** The least time between two refreshes, whatever the token's lifetime or the server's 401s. */
const REFRESH_FLOOR_MS = 5_000;
const RETRY_MIN_MS = 2_000;
const RETRY_MAX_MS = 10 * 60_000;

export interface AuthenticatorOptions {
	readonly name: string;
	readonly serverUrl: URL;
	readonly config: RemoteAuthConfig;
	readonly tokens: TokenStore;
	readonly fetch: PolicyFetch;
	/** The value of a secret named in the configuration (`client_secret`). */
	readonly resolveSecret: (name: string) => Promise<string>;
	readonly log: Logger;
}

/** The server's answer to a request without credentials: its status and challenge; undefined when it cannot be asked. */
export type Probe = () => Promise<{ status: number; challenge: string | undefined } | undefined>;

interface AccessToken {
	readonly value: string;
	readonly expiresAt: number | undefined;
	readonly receivedAt: number;
	readonly scope: string | undefined;
}

interface Pending {
	readonly answer: SignInAnswer;
	readonly done: Promise<void>;
	readonly abort: AbortController;
	readonly device: boolean;
}

export class UpstreamAuthenticator implements UpstreamCredentials {
	state: AuthState = 'none';
	detail: string | undefined;
	onStateChange?: (state: AuthState, detail: string | undefined) => void;

	private access: AccessToken | undefined;
	private refreshToken: string | undefined;
	private client: OAuthClientInformation | undefined;
	private discovered: Discovered | undefined;
	private challenge: Challenge = {};
	/** Scopes a step-up asked for. */
	private wantedScope: string | undefined;
	private pending: Pending | undefined;
	private refreshing: Promise<boolean> | undefined;
	/** When the last refresh was sent (0: none yet). */
	private lastRefreshAt = 0;
	private timer: NodeJS.Timeout | undefined;
	private retryMs = RETRY_MIN_MS;
	/** When the next attempt of `auth_retrying` is due (epoch ms). */
	private retryAt = 0;
	private probe: Probe | undefined;
	private closed = false;
	private readonly waiters = new Set<() => void>();

	constructor(private readonly options: AuthenticatorOptions) {}

	/** OAuth is expected from the start (`--remote-auth`, or a configured issuer, client or endpoint). */
	private get expected(): boolean {
		const config = this.options.config;
		return Boolean(config.issuer || config.client_id || config.authorize_url || config.token_url || config.use_pkce || config.cached_client_id || config.scopes?.length);
	}

	private setState(state: AuthState, detail?: string): void {
		if (this.state === state && this.detail === detail) return;
		this.state = state;
		this.detail = detail;
		this.onStateChange?.(state, detail);
		if (state === 'authenticated') for (const wake of this.waiters) wake();
	}

	/**
	 * Picks up where the last proxy left: a cached refresh token is used at once. Else `probe`
	 * (kept for the retries) asks the server, without credentials, whether it wants a token.
	 */
	async start(probe: Probe | undefined = this.probe): Promise<void> {
		this.probe = probe;
		const cached = await this.options.tokens.load();
		this.refreshToken = cached.refreshToken;
		if (this.refreshToken) {
			try {
				this.discovered = await discover(this.options.serverUrl, this.options.config, {}, this.options.fetch);
				if (cached.client && cached.client.issuer === this.discovered.issuer) this.client = { client_id: cached.client.clientId, client_secret: cached.client.clientSecret };
				else this.client = await this.configuredClient();
			} catch (error) {
				// A refusal (another issuer, an address the policy forbids) is no outage: it needs the user.
				if (error instanceof UpstreamAuthError && !error.unreachable) return this.needSignIn(error.message);
				return this.retryLater(`cannot reach the authorization server: ${(error as Error).message}; retrying`);
			}
			if (this.client) {
				await this.refresh();
				return;
			}
		}
		if (this.expected) return this.needSignIn('sign-in required');
		// Not configured for OAuth: the server's answer to a request without a token tells.
		const answer = await this.probe?.();
		if (answer?.status === 401 && /^\s*bearer\b/i.test(answer.challenge ?? '')) {
			this.challenge = parseChallenge(answer.challenge);
			await this.needSignIn('the server requires a sign-in');
		}
	}

	/** The `Authorization` header for the next upstream request; throws while no token can be had. */
	async authorization(): Promise<string | undefined> {
		if (this.refreshing) await this.refreshing;
		if (this.access) return `Bearer ${this.access.value}`;
		if (this.state === 'auth_retrying') throw new UpstreamAuthError(this.refusal(), { retryAfterSeconds: Math.max(1, Math.ceil((this.retryAt - Date.now()) / 1000)) });
		if (this.state === 'unauthenticated') throw new UpstreamAuthError(this.refusal());
		return undefined;
	}

	/** What a call is told while the workload cannot authenticate. */
	refusal(): string {
		return `the MCP server needs a sign-in: ${this.detail ?? 'not signed in'}; run \`hangar signin ${this.options.name}\``;
	}

	/**
	 * The server refused a request sent with `sent` (an `Authorization` value or none): true when a
	 * retry with the current token may now succeed.
	 */
	async denied(status: 401 | 403, header: string | undefined, sent: string | undefined): Promise<boolean> {
		const challenge = parseChallenge(header);
		if (challenge.scope || challenge.resourceMetadata) this.challenge = challenge;
		if (status === 403) {
			if (challenge.error !== 'insufficient_scope') return false;
			const wanted = new Set([...(this.access?.scope ?? this.wantedScope ?? '').split(/\s+/), ...(challenge.scope ?? '').split(/\s+/)].filter(Boolean));
			this.wantedScope = [...wanted].join(' ');
			await this.needSignIn(`the server needs the scope "${challenge.scope ?? '?'}" for this request; sign in again to grant it`, true);
			return false;
		}
		if (this.access && sent !== `Bearer ${this.access.value}`) return true; // another call refreshed it already
		this.access = undefined;
		if (this.refreshToken && (await this.refresh())) return true;
		if (!isSignInState(this.state)) await this.needSignIn(this.refreshToken ? 'the access token was refused' : 'the server requires a sign-in');
		return false;
	}

	/** Starts a sign-in (or returns the one pending): the URL to open, or the device code to enter. */
	async signIn(options: { device?: boolean } = {}): Promise<SignInAnswer> {
		if (this.state === 'authenticated' && !this.wantedScope) return { status: 'signed_in' };
		if (this.pending && this.pending.device === Boolean(options.device)) return this.pending.answer;
		try {
			await this.prepare(Boolean(options.device));
		} catch (error) {
			return { status: 'failed', message: (error as Error).message };
		}
		return this.pending?.answer ?? { status: this.state === 'authenticated' ? 'signed_in' : 'failed', message: this.detail };
	}

	/** Resolves once signed in, or after `timeoutMs`; the answer says which. */
	async waitSignedIn(timeoutMs: number): Promise<SignInAnswer> {
		if (this.state === 'authenticated' && !this.wantedScope) return { status: 'signed_in' };
		await new Promise<void>((resolve) => {
			const done = () => {
				clearTimeout(timer);
				this.waiters.delete(done);
				resolve();
			};
			const timer = setTimeout(done, timeoutMs);
			this.waiters.add(done);
		});
		if (this.state === 'authenticated' && !this.wantedScope) return { status: 'signed_in' };
		return this.pending ? { ...this.pending.answer, message: this.detail } : { status: 'failed', message: this.detail };
	}

	close(): void {
		this.closed = true;
		clearTimeout(this.timer);
		this.pending?.abort.abort();
		this.pending = undefined;
	}

	/** The workload needs the user; a sign-in is made ready (a new one when `fresh`: a step-up needs its URL with the new scopes). */
	private async needSignIn(reason: string, fresh = false): Promise<void> {
		this.setState('unauthenticated', reason);
		try {
			await this.prepare(false, fresh);
		} catch (error) {
			this.setState('unauthenticated', `${reason}; ${(error as Error).message}`);
		}
	}

	private async ensureDiscovered(): Promise<Discovered> {
		this.discovered = await discover(this.options.serverUrl, this.options.config, this.challenge, this.options.fetch);
		return this.discovered;
	}

	/** The client configured for this workload (id, and a secret from the secrets provider or a file). */
	private async configuredClient(): Promise<OAuthClientInformation | undefined> {
		const config = this.options.config;
		if (!config.client_id) return undefined;
		let secret: string | undefined;
		if (config.client_secret) secret = await this.options.resolveSecret(config.client_secret.split(',target=')[0]!);
		else if (config.client_secret_file) secret = (await readFile(config.client_secret_file, 'utf8')).trim();
		return { client_id: config.client_id, client_secret: secret };
	}

	/** The client for a redirect to `redirectUri`: configured, cached for this issuer and port, or registered now (RFC 7591). */
	private async clientFor(discovered: Discovered, redirectUri: string, port: number): Promise<OAuthClientInformation> {
		const configured = await this.configuredClient();
		if (configured) return configured;
		const cached = (await this.options.tokens.load()).client;
		if (cached && cached.issuer === discovered.issuer && (cached.callbackPort === undefined || cached.callbackPort === port)) {
			return { client_id: cached.clientId, client_secret: cached.clientSecret };
		}
		if (!discovered.metadata.registration_endpoint) {
			throw new UpstreamAuthError(`the authorization server ${discovered.issuer} offers no dynamic client registration; set --remote-auth-client-id`);
		}
		const grantTypes = ['authorization_code', 'refresh_token', ...(deviceEndpointOf(discovered.metadata) ? [DEVICE_GRANT] : [])];
		const registered = await registerClient(discovered.issuer, {
			metadata: discovered.metadata,
			clientMetadata: {
				client_name: `Hangar (${this.options.name})`,
				redirect_uris: [redirectUri],
				grant_types: grantTypes,
				response_types: ['code'],
				token_endpoint_auth_method: 'none',
				application_type: 'native',
			} as never,
			fetchFn: this.options.fetch,
		}).catch((error: Error) => {
			throw new UpstreamAuthError(`the client registration at ${discovered.issuer} failed: ${error.message}`);
		});
		await this.options.tokens.saveClient({ issuer: discovered.issuer, clientId: registered.client_id, clientSecret: registered.client_secret, callbackPort: port });
		return { client_id: registered.client_id, client_secret: registered.client_secret };
	}

	/**
	 * Makes a pending sign-in ready, one preparation at a time (calls refused together share
	 * one): the pending one of the same kind is kept unless `fresh`; one of the other kind is replaced.
	 */
	private prepare(device: boolean, fresh = false): Promise<void> {
		const run = this.preparing.then(() => this.doPrepare(device, fresh));
		this.preparing = run.catch(() => undefined);
		return run;
	}

	private preparing: Promise<void> = Promise.resolve();

	private async doPrepare(device: boolean, fresh: boolean): Promise<void> {
		if (!fresh && this.pending && this.pending.device === device) return;
		this.pending?.abort.abort();
		this.pending = undefined;
		const discovered = await this.ensureDiscovered();
		const scope = this.wantedScope ?? scopesFor(this.options.config, this.challenge, discovered);
		const abort = new AbortController();
		if (device) {
			const client = await this.clientFor(discovered, 'http://127.0.0.1/callback', (await this.options.tokens.load()).client?.callbackPort ?? 0);
			const authorization = await startDeviceAuthorization(discovered.metadata, client, scope, discovered.resource, this.options.fetch);
			const answer: SignInAnswer = {
				status: 'pending',
				verification_uri: authorization.verification_uri_complete ?? authorization.verification_uri,
				user_code: authorization.user_code,
			};
			const done = pollDeviceToken(discovered.metadata, client, authorization, discovered.resource, this.options.fetch, abort.signal).then(
				(tokens) => this.accept(tokens, client, abort),
				(error: Error) => this.pendingFailed(error, abort),
			);
			this.pending = { answer, done, abort, device: true };
			this.setState('unauthenticated', `${this.detailReason()}; enter the code ${authorization.user_code} at ${answer.verification_uri}`);
			return;
		}
		const cachedPort = (await this.options.tokens.load()).client?.callbackPort;
		const wantedPort = this.options.config.callback_port ?? cachedPort ?? 0;
		const listener = await CallbackListener.open(wantedPort).catch(async (error: Error) => {
			if (this.options.config.callback_port) throw error;
			return CallbackListener.open(0);
		});
		abort.signal.addEventListener('abort', () => listener.close(), { once: true });
		try {
			const client = await this.clientFor(discovered, listener.redirectUri, listener.port);
			const state = randomBytes(24).toString('base64url');
			const { authorizationUrl, codeVerifier } = await startAuthorization(discovered.issuer, {
				metadata: discovered.metadata,
				clientInformation: client,
				redirectUrl: listener.redirectUri,
				scope,
				state,
				resource: new URL(discovered.resource),
			});
			for (const [key, value] of Object.entries(this.options.config.oauth_params ?? {})) authorizationUrl.searchParams.set(key, value);
			// The page goes to the user's browser: https, or http to loopback, and nothing else (no `file:`).
			if (!browsableUrl(authorizationUrl.href)) {
				throw new UpstreamAuthError(`the sign-in page ${quoted(authorizationUrl.origin === 'null' ? authorizationUrl.protocol : authorizationUrl.origin)} is neither https nor http to loopback; refused`);
			}
			const answer: SignInAnswer = { status: 'pending', authorization_url: authorizationUrl.href };
			const done = listener
				.wait(state)
				.then(async ({ code }) => {
					const tokens = await exchangeAuthorization(discovered.issuer, {
						metadata: discovered.metadata,
						clientInformation: client,
						authorizationCode: code,
						codeVerifier,
						redirectUri: listener.redirectUri,
						resource: new URL(discovered.resource),
						fetchFn: this.options.fetch,
					});
					await this.accept(tokens, client, abort);
				})
				.catch((error: Error) => this.pendingFailed(error, abort))
				.finally(() => listener.close());
			this.pending = { answer, done, abort, device: false };
			this.setState('unauthenticated', `${this.detailReason()}; sign in at ${authorizationUrl.href}`);
		} catch (error) {
			listener.close();
			throw error;
		}
	}

	/** The reason part of the current detail (without a previous sign-in URL). */
	private detailReason(): string {
		return (this.detail ?? 'sign-in required').replace(/; (sign in at|enter the code) .*$/, '');
	}

	private pendingFailed(error: Error, abort: AbortController): void {
		if (abort.signal.aborted || this.closed) return;
		this.options.log.warn(`sign-in failed: ${error.message}`);
		this.pending = undefined;
		this.setState('unauthenticated', `the last sign-in failed: ${error.message}`);
		for (const wake of this.waiters) wake();
	}

	private async accept(tokens: OAuthTokens, client: OAuthClientInformation, abort?: AbortController): Promise<void> {
		if (abort?.signal.aborted || this.closed) return;
		const now = Date.now();
		const expiresAt = tokens.expires_in ? now + tokens.expires_in * 1000 : undefined;
		// Stored before anyone is told: a restart right after the sign-in keeps it.
		await this.options.tokens.saveTokens(tokens.refresh_token, expiresAt ? new Date(expiresAt) : undefined).catch((error: Error) => this.options.log.warn(`cannot record the sign-in: ${error.message}`));
		if (abort?.signal.aborted || this.closed) return;
		this.client = client;
		if (this.pending?.abort === abort) this.pending = undefined;
		abort?.abort();
		this.access = { value: tokens.access_token, expiresAt, receivedAt: now, scope: tokens.scope ?? this.wantedScope };
		if (this.wantedScope && this.access.scope && this.wantedScope.split(' ').every((scope) => this.access!.scope!.split(' ').includes(scope))) this.wantedScope = undefined;
		else if (this.wantedScope && !tokens.scope) this.wantedScope = undefined;
		if (tokens.refresh_token) this.refreshToken = tokens.refresh_token;
		this.retryMs = RETRY_MIN_MS;
		this.options.log.info(`signed in to the MCP server (scope: ${this.access.scope ?? 'unspecified'})`);
		this.setState('authenticated');
		this.schedule();
	}

	private schedule(): void {
		clearTimeout(this.timer);
		if (!this.access?.expiresAt || !this.refreshToken) return;
		const { expiresAt, receivedAt } = this.access;
		const ahead = Math.min(REFRESH_AHEAD_MAX_MS, (expiresAt - receivedAt) * REFRESH_AHEAD_SHARE);
		const wait = Math.max(expiresAt - ahead, this.lastRefreshAt + REFRESH_FLOOR_MS) - Date.now();
		this.timer = setTimeout(() => void this.refresh(), wait);
		this.timer.unref();
	}

	private retryLater(reason: string): void {
		this.setState('auth_retrying', reason);
		clearTimeout(this.timer);
		this.timer = setTimeout(() => void this.start().catch(() => undefined), this.retryMs);
		this.retryAt = Date.now() + this.retryMs;
		this.timer.unref();
		this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
	}

	/** Refreshes the access token; one refresh at a time, shared. */
	refresh(): Promise<boolean> {
		return (this.refreshing ??= this.doRefresh().finally(() => (this.refreshing = undefined)));
	}

	private async doRefresh(): Promise<boolean> {
		if (!this.refreshToken || this.closed) return false;
		// A server answering 401 to every call gets no more than one refresh per floor.
		const early = this.lastRefreshAt + REFRESH_FLOOR_MS - Date.now();
		if (early > 0) await new Promise((resolve) => setTimeout(resolve, early).unref());
		if (!this.refreshToken || this.closed) return false;
		this.lastRefreshAt = Date.now();
		try {
			const discovered = this.discovered ?? (await this.ensureDiscovered());
			const client = this.client ?? (await this.configuredClient());
			if (!client) throw new UpstreamAuthError('no client to refresh with');
			const tokens = await refreshAuthorization(discovered.issuer, {
				metadata: discovered.metadata,
				clientInformation: client,
				refreshToken: this.refreshToken,
				resource: new URL(discovered.resource),
				fetchFn: this.options.fetch,
			});
			await this.accept(tokens, client);
			this.options.log.info('access token refreshed');
			return true;
		} catch (error) {
			if (this.closed) return false;
			if (error instanceof OAuthError || error instanceof UpstreamAuthError) {
				this.access = undefined;
				this.refreshToken = undefined;
				await this.options.tokens.forgetTokens().catch(() => undefined);
				await this.needSignIn(`the authorization server refused the refresh token (${(error as Error).message})`);
			} else {
				this.access = undefined;
				this.retryLater(`cannot refresh the access token: ${(error as Error).message}; retrying`);
			}
			return false;
		}
	}
}
