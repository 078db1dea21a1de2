/**
 * Finding the authorization server of a remote MCP server: its protected-resource metadata
 * (RFC 9728, from the `resource_metadata` of its 401 challenge or the well-known URL), whose
 * `resource` must name the server; then the authorization server's metadata (RFC 8414, or
 * OpenID discovery), whose `issuer` must be the issuer it was fetched for (a document naming
 * another issuer is refused). Endpoints the user configured (`authorize_url`, `token_url`)
 * stand in for discovery. Every URL goes through the fetch given (the outbound policy).
 */
import { discoverAuthorizationServerMetadata, discoverOAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/client/auth.js';
import { checkResourceAllowed } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import type { AuthorizationServerMetadata, OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { RemoteAuthConfig } from '../../../../protocol/runConfig.js';
import type { PolicyFetch } from './fetch.js';
import { quoted, UpstreamAuthError } from '../../core/upstreamAuthError.js';

export interface Challenge {
	readonly error?: string;
	readonly scope?: string;
	readonly resourceMetadata?: string;
}

/** The parameters of a `WWW-Authenticate: Bearer …` challenge. */
export function parseChallenge(header: string | undefined): Challenge {
	const parameters = new Map<string, string>();
	for (const [, name, quoted, bare] of (header ?? '').matchAll(/([a-zA-Z_]+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g)) {
		parameters.set(name!.toLowerCase(), quoted ?? bare ?? '');
	}
	return { error: parameters.get('error'), scope: parameters.get('scope'), resourceMetadata: parameters.get('resource_metadata') };
}

export interface Discovered {
	readonly issuer: string;
	readonly metadata: AuthorizationServerMetadata;
	readonly resourceMetadata?: OAuthProtectedResourceMetadata;
	/** The `resource` parameter (RFC 8707): the configured one, the metadata's, or the server URL. */
	readonly resource: string;
}

export async function discover(serverUrl: URL, config: RemoteAuthConfig, challenge: Challenge, fetchFn: PolicyFetch): Promise<Discovered> {
	let resourceMetadata: OAuthProtectedResourceMetadata | undefined;
	try {
		resourceMetadata = await discoverOAuthProtectedResourceMetadata(serverUrl, challenge.resourceMetadata ? { resourceMetadataUrl: challenge.resourceMetadata } : undefined, fetchFn);
	} catch (error) {
		if (!/does not implement/.test((error as Error).message)) throw new UpstreamAuthError(`cannot read the server's protected-resource metadata: ${(error as Error).message}`, { unreachable: true });
	}
	if (resourceMetadata && !checkResourceAllowed({ requestedResource: serverUrl, configuredResource: resourceMetadata.resource })) {
		throw new UpstreamAuthError(`the protected-resource metadata is for ${resourceMetadata.resource}, not for ${serverUrl.href}; refused`);
	}
	const issuer = config.issuer ?? resourceMetadata?.authorization_servers?.[0] ?? serverUrl.origin;
	const resource = config.resource ?? resourceMetadata?.resource ?? serverUrl.href;
	if (config.authorize_url && config.token_url) {
		const metadata = {
			issuer,
			authorization_endpoint: config.authorize_url,
			token_endpoint: config.token_url,
			response_types_supported: ['code'],
			code_challenge_methods_supported: ['S256'],
		} as AuthorizationServerMetadata;
		return { issuer, metadata, resourceMetadata, resource };
	}
	let metadata: AuthorizationServerMetadata | undefined;
	try {
		metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn });
	} catch (error) {
		throw new UpstreamAuthError(`cannot read the metadata of the authorization server ${issuer}: ${(error as Error).message}`, { unreachable: true });
	}
	if (!metadata) throw new UpstreamAuthError(`the authorization server ${issuer} publishes no metadata (RFC 8414 or OpenID discovery); set --remote-auth-authorize-url and --remote-auth-token-url`);
	if (metadata.issuer !== issuer) {
		throw new UpstreamAuthError(`the authorization server metadata fetched for ${issuer} names another issuer (${quoted(String(metadata.issuer))}); refused`);
	}
	// MCP (2025-11-25): a client must refuse an authorization server that does not advertise PKCE.
	if (!metadata.code_challenge_methods_supported?.includes('S256')) {
		const offered = metadata.code_challenge_methods_supported?.length ? `offers only ${metadata.code_challenge_methods_supported.map(quoted).join(', ')}` : 'does not advertise code_challenge_methods_supported';
		throw new UpstreamAuthError(`the authorization server ${issuer} ${offered}; PKCE with S256 is required, so the sign-in is refused`);
	}
	return { issuer, metadata, resourceMetadata, resource };
}

/** The scopes to ask for: the challenge's, the configured ones, or those the resource supports. */
export function scopesFor(config: RemoteAuthConfig, challenge: Challenge, discovered: Discovered | undefined): string | undefined {
	const scopes = challenge.scope?.split(/\s+/).filter(Boolean) ?? config.scopes ?? discovered?.resourceMetadata?.scopes_supported;
	return scopes?.length ? scopes.join(' ') : undefined;
}
