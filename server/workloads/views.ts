/**
 * What the doors show of a stored run configuration: the editable detail (`workloads/get`) and
 * the export (`workloads/export`). Reading needs none of the checks of config.ts.
 */
import type { WorkloadDetail } from '../../protocol/protocol.workloads.js';
import { RUN_CONFIG_FORMAT, type StoredWorkload } from '../runspec/store.js';
import { prune } from './fields.js';
import { decodeSecret } from './secretReference.js';

/** The run configuration as `workloads/export` shows it: ToolHive's shape, secrets as references. */
export function exportedRunConfig(stored: StoredWorkload): Record<string, unknown> {
	const { created_at: _created, built_image: _built, restart_policy: _restart, request_timeout: _timeout, request_timeout_max: _timeoutMax, headers: _headers, egress_port: _egress, oidc_config, ...config } = stored;
	const { clientSecret: _secret, ...oidc } = oidc_config ?? {};
	return prune({ schema_version: RUN_CONFIG_FORMAT, ...config, oidc_config: oidc_config ? oidc : undefined });
}

/** The editable configuration (spec 2.16), as `workloads/get` returns it. */
export function detailOf(stored: StoredWorkload): WorkloadDetail {
	const auth = stored.remote_auth_config;
	return prune({
		name: stored.name,
		image: stored.image ?? '',
		url: stored.remote_url ?? '',
		registry: stored.registry_server_name ? 'default' : undefined,
		server: stored.registry_server_name,
		transport: stored.transport,
		proxy_mode: stored.proxy_mode,
		host: stored.host,
		proxy_port: stored.port,
		target_port: stored.target_port,
		cmd_arguments: stored.cmd_args ?? [],
		env_vars: stored.env_vars ?? {},
		secrets: (stored.secrets ?? []).map(decodeSecret),
		volumes: stored.volumes ?? [],
		...securityDetailOf(stored),
		telemetry_config: stored.telemetry_config,
		permission_profile: stored.permission_profile,
		network_isolation: stored.isolate_network ?? true,
		trust_proxy_headers: stored.trust_proxy_headers ?? false,
		allowed_origins: stored.allowed_origins,
		allow_docker_gateway: stored.allow_docker_gateway,
		tools: stored.tools_filter ?? [],
		runtime_config: stored.runtime_config,
		tools_override: stored.tools_override,
		tool_pinning: stored.tool_pinning,
		metrics_without_auth: stored.metrics_without_auth,
		guardrails: stored.guardrails,
		mutating_webhooks: stored.mutating_webhooks,
		validating_webhooks: stored.validating_webhooks,
		group: stored.group,
		oauth_config: auth
			? prune({
					issuer: auth.issuer,
					authorize_url: auth.authorize_url,
					token_url: auth.token_url,
					client_id: auth.client_id,
					client_secret: auth.client_secret ? decodeSecret(auth.client_secret) : undefined,
					bearer_token: auth.bearer_token ? decodeSecret(auth.bearer_token) : undefined,
					scopes: auth.scopes,
					use_pkce: auth.use_pkce,
					oauth_params: auth.oauth_params,
					callback_port: auth.callback_port,
					skip_browser: auth.skip_browser,
					resource: auth.resource,
					client_secret_file: auth.client_secret_file,
					bearer_token_file: auth.bearer_token_file,
					timeout: auth.timeout,
				})
			: undefined,
		headers: stored.headers,
		header_forward: stored.header_forward,
		labels: stored.container_labels,
		restart_policy: stored.restart_policy,
		request_timeout: stored.request_timeout,
		request_timeout_max: stored.request_timeout_max,
		session_mode: stored.session_mode,
		aggregation: stored.aggregation,
		max_server_processes: stored.max_server_processes,
		server_process_idle_timeout: stored.server_process_idle_timeout,
	}) as WorkloadDetail;
}

/** The detail's view of the security settings (spec 2.16 plus Hangar's own fields). */
function securityDetailOf(stored: StoredWorkload): Partial<WorkloadDetail> {
	const oidc = stored.oidc_config;
	return prune({
		authz_config: stored.authz_config_path ?? '',
		oidc: oidc
			? prune({
					issuer: oidc.issuer,
					audience: oidc.audience,
					jwks_url: oidc.jwksurl,
					introspection_url: oidc.introspectionURL,
					client_id: oidc.clientID,
					scopes: oidc.scopes,
					resource_url: oidc.resourceURL,
					insecure_allow_http: oidc.insecureAllowHTTP,
					allow_private_ip: oidc.allowPrivateIP,
				})
			: undefined,
		audit_config: stored.audit_config,
		rate_limit_config: stored.rate_limit_config,
		scaling_config: stored.scaling_config,
	});
}
