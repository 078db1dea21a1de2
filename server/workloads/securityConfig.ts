/**
 * The security settings of a create or update request, checked and turned into run
 * configuration fields: `oidc` → `oidc_config`, `authz_config` (a policy file, parsed with
 * Cedar now so a mistake is a 400 naming the policy) → `authz_config_path`, and
 * `audit_config`, `rate_limit_config`, `scaling_config` as they are.
 */
import { stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import type { z } from 'zod';
import type { UpdateWorkloadParams } from '../../protocol/protocol.workloads.js';
import type { ScalingConfig, TokenValidatorConfig } from '../../protocol/runConfig.js';
import { auditConfigProblem } from '../runspec/auditConfig.js';
import { AUTHZ_TYPE, AuthzConfigError, loadAuthzConfig } from '../runspec/authzConfig.js';
import { checkProviderUrl, ProviderError } from '../net/providerUrl.js';
import { RateLimitConfigError, rateLimitsOf } from '../runspec/rateLimitConfig.js';
import { parseAddress } from '../runspec/redisAddress.js';
import { invalid, prune } from './fields.js';
import type { StoredWorkload } from '../runspec/store.js';

/** More would only queue on this machine's cores; a team past this needs a cluster (`hangar export`). */
const MAX_REPLICAS = 16;

/** The security settings of a request: a create and an update carry them alike. */
type SecurityRequest = Pick<z.output<typeof UpdateWorkloadParams>, 'oidc' | 'authz_config' | 'audit_config' | 'rate_limit_config' | 'scaling_config'>;

type SecurityFields = Pick<StoredWorkload, 'oidc_config' | 'authz_config' | 'authz_config_path' | 'audit_config' | 'rate_limit_config' | 'scaling_config'>;

/**
 * `previous` is the configuration being updated: the client secret is write-only (never in a
 * detail or an export), so an update that names the same client and no secret keeps it.
 */
function oidcConfigOf(oidc: SecurityRequest['oidc'], previous: TokenValidatorConfig | undefined): TokenValidatorConfig | undefined {
	const unset = (value: unknown) => value === undefined || value === '' || value === false || (Array.isArray(value) && !value.length);
	if (!oidc || Object.values(oidc).every(unset)) return undefined;
	const access = { insecureAllowHTTP: oidc.insecure_allow_http, allowPrivateIP: oidc.allow_private_ip };
	const provider = (field: string, url: string) => {
		try {
			checkProviderUrl(url, access);
		} catch (error) {
			if (error instanceof ProviderError) throw invalid(field, error.message);
			throw error;
		}
	};
	if (!oidc.issuer) throw invalid('oidc.issuer', 'authentication needs the issuer whose tokens clients present (--oidc-issuer)');
	provider('oidc.issuer', oidc.issuer);
	if (!oidc.audience) throw invalid('oidc.audience', 'authentication needs the audience tokens must be issued for (--oidc-audience)');
	if (oidc.jwks_url) provider('oidc.jwks_url', oidc.jwks_url);
	if (oidc.introspection_url) provider('oidc.introspection_url', oidc.introspection_url);
	if (oidc.resource_url) {
		let url: URL | undefined;
		try {
			url = new URL(oidc.resource_url);
		} catch {
			url = undefined;
		}
		if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
			throw invalid('oidc.resource_url', `${JSON.stringify(oidc.resource_url)} is not an http(s) URL`);
		}
	}
	return prune({
		issuer: oidc.issuer.trim(),
		audience: oidc.audience.trim(),
		jwksurl: oidc.jwks_url || undefined,
		introspectionURL: oidc.introspection_url || undefined,
		clientID: oidc.client_id || undefined,
		clientSecret: oidc.client_secret || (previous?.clientID && previous.clientID === oidc.client_id ? previous.clientSecret : undefined),
		scopes: oidc.scopes?.length ? oidc.scopes : undefined,
		resourceURL: oidc.resource_url || undefined,
		insecureAllowHTTP: oidc.insecure_allow_http || undefined,
		allowPrivateIP: oidc.allow_private_ip || undefined,
	});
}

async function authzOf(path: string | undefined): Promise<Pick<SecurityFields, 'authz_config' | 'authz_config_path'>> {
	if (!path) return {};
	if (!isAbsolute(path)) throw invalid('authz_config', 'must be an absolute path');
	try {
		await stat(path);
	} catch {
		throw invalid('authz_config', `${path} does not exist`);
	}
	try {
		const config = await loadAuthzConfig(path);
		return { authz_config_path: path, authz_config: { type: AUTHZ_TYPE, version: config.version } };
	} catch (error) {
		if (error instanceof AuthzConfigError) throw invalid('authz_config', error.message);
		throw error;
	}
}

/** The run configuration's security fields for a request; a 400 names the field at fault. */
export async function securityFieldsOf(request: SecurityRequest, previous?: StoredWorkload): Promise<SecurityFields> {
	const audit = request.audit_config;
	const auditProblem = audit && auditConfigProblem(audit);
	if (auditProblem) throw invalid(`audit_config.${auditProblem.field}`, auditProblem.message);
	if (request.rate_limit_config) {
		try {
			rateLimitsOf(request.rate_limit_config);
		} catch (error) {
			if (error instanceof RateLimitConfigError) throw invalid(error.field, error.problem);
			throw error;
		}
	}
	for (const field of ['replicas', 'backend_replicas'] as const) {
		const count = request.scaling_config?.[field];
		if (count !== undefined && (count < 1 || count > MAX_REPLICAS)) throw invalid(`scaling_config.${field}`, `must be between 1 and ${MAX_REPLICAS}`);
	}
	const redis = request.scaling_config?.session_redis;
	if (redis?.address) {
		try {
			parseAddress(redis.address);
		} catch (error) {
			throw invalid('scaling_config.session_redis.address', (error as Error).message);
		}
	}
	return prune({
		oidc_config: oidcConfigOf(request.oidc, previous?.oidc_config),
		...(await authzOf(request.authz_config)),
		audit_config: audit,
		rate_limit_config: request.rate_limit_config,
		scaling_config: scalingOf(request.scaling_config),
	});
}

/** The scaling settings worth keeping: one replica of each, without Redis, is no scaling at all. */
function scalingOf(scaling: ScalingConfig | undefined): ScalingConfig | undefined {
	if (!scaling) return undefined;
	const kept = prune({
		replicas: scaling.replicas && scaling.replicas > 1 ? scaling.replicas : undefined,
		backend_replicas: scaling.backend_replicas && scaling.backend_replicas > 1 ? scaling.backend_replicas : undefined,
		session_redis: scaling.session_redis?.address ? scaling.session_redis : undefined,
	});
	return Object.keys(kept).length > 0 ? kept : undefined;
}
