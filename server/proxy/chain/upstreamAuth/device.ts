/**
 * Device authorization (RFC 8628), for a machine without a browser: the user opens
 * `verification_uri` anywhere and types `user_code`; the proxy polls the token endpoint.
 */
import type { AuthorizationServerMetadata, OAuthClientInformation, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { PolicyFetch } from './fetch.js';
import { UpstreamAuthError } from '../../core/upstreamAuthError.js';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface DeviceAuthorization {
	readonly device_code: string;
	readonly user_code: string;
	readonly verification_uri: string;
	readonly verification_uri_complete?: string;
	readonly expires_in: number;
	readonly interval?: number;
}

export function deviceEndpointOf(metadata: AuthorizationServerMetadata): string | undefined {
	const endpoint = (metadata as { device_authorization_endpoint?: unknown }).device_authorization_endpoint;
	return typeof endpoint === 'string' ? endpoint : undefined;
}

function clientForm(client: OAuthClientInformation, form: Record<string, string | undefined>): { body: URLSearchParams; headers: Record<string, string> } {
	const body = new URLSearchParams();
	for (const [key, value] of Object.entries(form)) if (value !== undefined) body.set(key, value);
	const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' };
	if (client.client_secret) headers.Authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64')}`;
	else body.set('client_id', client.client_id);
	return { body, headers };
}

export async function startDeviceAuthorization(
	metadata: AuthorizationServerMetadata,
	client: OAuthClientInformation,
	scope: string | undefined,
	resource: string,
	fetchFn: PolicyFetch,
): Promise<DeviceAuthorization> {
	const endpoint = deviceEndpointOf(metadata);
	if (!endpoint) throw new UpstreamAuthError('the authorization server offers no device authorization (RFC 8628); sign in with a browser');
	const { body, headers } = clientForm(client, { scope, resource });
	const response = await fetchFn(endpoint, { method: 'POST', headers, body });
	const answer = (await response.json().catch(() => ({}))) as Partial<DeviceAuthorization> & { error?: string };
	if (!response.ok || !answer.device_code || !answer.user_code || !answer.verification_uri) {
		throw new UpstreamAuthError(`the device authorization request failed: ${answer.error ?? `HTTP ${response.status}`}`);
	}
	return answer as DeviceAuthorization;
}

/** Polls until the user approved (tokens), denied or let the code expire (an error), or `signal` ends it. */
export async function pollDeviceToken(
	metadata: AuthorizationServerMetadata,
	client: OAuthClientInformation,
	device: DeviceAuthorization,
	resource: string,
	fetchFn: PolicyFetch,
	signal: AbortSignal,
): Promise<OAuthTokens> {
	let interval = (device.interval ?? 5) * 1000;
	const deadline = Date.now() + device.expires_in * 1000;
	while (Date.now() < deadline) {
		await new Promise((resolve) => setTimeout(resolve, interval));
		if (signal.aborted) throw new UpstreamAuthError('the device sign-in was replaced or stopped');
		const { body, headers } = clientForm(client, { grant_type: DEVICE_GRANT, device_code: device.device_code, resource });
		const response = await fetchFn(metadata.token_endpoint, { method: 'POST', headers, body });
		const answer = (await response.json().catch(() => ({}))) as OAuthTokens & { error?: string };
		if (response.ok && answer.access_token) return answer;
		if (answer.error === 'authorization_pending') continue;
		if (answer.error === 'slow_down') {
			interval += 5_000;
			continue;
		}
		throw new UpstreamAuthError(`the device sign-in failed: ${answer.error ?? `HTTP ${response.status}`}`);
	}
	throw new UpstreamAuthError('the device code expired before the sign-in was approved');
}
