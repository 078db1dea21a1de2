/**
 * Workloads: MCP servers run from a container image or reached at a remote URL, each behind a
 * local proxy. Create and update answer with the workload's name and proxy port; stop, restart
 * and delete answer 202 at once and continue in the background (watch `workloads/didChange` or
 * poll `workloads/list`).
 */
import { z } from 'zod';
import { GroupName, NoResult, QueryBoolean, QueryInteger, requiredString, StringMap, WorkloadName } from './common.js';
import { notification, operation } from './operation.js';
import { RegistryHeader } from './registryTypes.js';
import { MAX_STATS_WINDOW_SECONDS } from './statsWindow.js';
import {
	AggregationConfig,
	AuditConfig,
	GuardrailsConfig,
	HeaderForwardConfig,
	NetworkPermissions,
	PermissionProfile,
	RateLimitConfig,
	RunConfig,
	RuntimeConfig,
	ScalingConfig,
	SecretParameter,
	SessionMode,
	TelemetryConfig,
	ToolOverride,
	ToolPinning,
	WebhookConfig,
} from './runConfig.js';

// ---------------------------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------------------------

/** Status of a workload (ToolHive `WorkloadStatus`). */
export const WorkloadStatus = z.enum([
	'running',
	'stopped',
	'starting',
	'stopping',
	'error',
	'unhealthy',
	'removing',
	'unknown',
	'unauthenticated',
	'auth_retrying',
	'policy_stopped',
]);
export type WorkloadStatus = z.infer<typeof WorkloadStatus>;

/** An item of the workload list (spec 2.15; ToolHive `core.Workload`). */
export const WorkloadSummary = z.object({
	name: z.string(),
	/** Image reference, or the remote URL. */
	package: z.string().optional(),
	/** URL clients connect to (the proxy). */
	url: z.string().optional(),
	/** Proxy port on 127.0.0.1. */
	port: z.number().int().optional(),
	transport_type: z.enum(['stdio', 'sse', 'streamable-http', 'inspector']).optional(),
	proxy_mode: z.string().optional(),
	status: WorkloadStatus.optional(),
	/** Free-text detail of the status (for example a policy reason). */
	status_context: z.string().optional(),
	created_at: z.string().optional(),
	started_at: z.string().optional(),
	/** User labels (the service's own labels are left out). */
	labels: StringMap.optional(),
	group: z.string().optional(),
	/** The tools filter. */
	tools: z.array(z.string()).optional(),
	remote: z.boolean().optional(),
	/** Hangar: tools and prompts that differ from their pins (review with `workloads/tools`). */
	tools_drifted: z.array(z.string()).optional(),
});
export type WorkloadSummary = z.infer<typeof WorkloadSummary>;

/** OIDC validation of incoming requests (ToolHive `oidcOptions`). */
export const WorkloadOidcOptions = z.object({
	issuer: z.string().optional(),
	audience: z.string().optional(),
	jwks_url: z.string().optional(),
	introspection_url: z.string().optional(),
	client_id: z.string().optional(),
	client_secret: z.string().optional(),
	/** Scopes advertised in the protected-resource metadata (RFC 9728). */
	scopes: z.array(z.string()).optional(),
	/** Accept plain http for an issuer or JWKS not on a loopback address. */
	insecure_allow_http: z.boolean().optional(),
	/** Accept an issuer or JWKS on a private address. */
	allow_private_ip: z.boolean().optional(),
	/** The URL clients know the workload by, when not the proxy's own (RFC 9728 `resource`). */
	resource_url: z.string().optional(),
}).strict();

/** OAuth towards a remote server (ToolHive `remoteOAuthConfig`); secrets are references. */
export const RemoteOAuthConfig = z.object({
	issuer: z.string().optional(),
	authorize_url: z.string().optional(),
	token_url: z.string().optional(),
	client_id: z.string().optional(),
	client_secret: SecretParameter.optional(),
	bearer_token: SecretParameter.optional(),
	scopes: z.array(z.string()).optional(),
	use_pkce: z.boolean().optional(),
	oauth_params: StringMap.optional(),
	/** Port of the local OAuth callback server, 1024–65535. */
	callback_port: z.number().int().optional(),
	skip_browser: z.boolean().optional(),
	/** RFC 8707 resource indicator (an absolute URI). */
	resource: z.string().optional(),
	/** Hangar: an absolute path to a file holding the client secret, read by the proxy. */
	client_secret_file: z.string().optional(),
	/** Hangar: an absolute path to a file holding a static bearer token, read when the workload starts. */
	bearer_token_file: z.string().optional(),
	/** Hangar: how long `hangar run --remote-auth` waits for the sign-in (a duration such as 5m). */
	timeout: z.string().optional(),
}).strict();

/** A secret reference in a request: both fields are required. */
const SecretReference = SecretParameter.extend({
	name: requiredString('secret name'),
	target: requiredString('secret target'),
}).strict();

/** A requested permission profile: a registry entry's, with an unknown key refused at every level. */
const RequestedPermissionProfile = PermissionProfile.extend({
	network: NetworkPermissions.extend({
		inbound: NetworkPermissions.shape.inbound.unwrap().strict().optional(),
		outbound: NetworkPermissions.shape.outbound.unwrap().strict().optional(),
	})
		.strict()
		.optional(),
}).strict();

const Port = z.number().int().min(0, 'port must be between 0 and 65535').max(65535, 'port must be between 0 and 65535');

/** Transports a request may ask for; empty means "from the registry entry, else streamable-http". */
export const WorkloadTransport = z.enum(['stdio', 'sse', 'streamable-http', ''], {
	error: (issue) => `${JSON.stringify(issue.input)} is not a transport (valid transports: stdio, sse, streamable-http)`,
});

/** Restart policies of a workload. */
export const RestartPolicy = z.enum(['no', 'on-failure', 'unless-stopped', 'always'], {
	error: (issue) => `invalid restart_policy: ${String(issue.input)} (valid policies: no, on-failure, unless-stopped, always)`,
});
export type RestartPolicy = z.infer<typeof RestartPolicy>;

/** Proxy modes a request may ask for; empty means `streamable-http`. */
export const WorkloadProxyMode = z.enum(['streamable-http', 'sse', ''], {
	error: (issue) => `Invalid proxy_mode: ${String(issue.input)}`,
});

/**
 * The editable configuration of a workload (ToolHive `updateRequest`): the body of
 * `workloads/update`, and with `name`, `registry` and `server` the body of `workloads/create`.
 */
export const WorkloadSpecFields = {
	/** Image reference, registry server name, or `npx://`, `uvx://`, `go://` package. */
	image: z.string().optional(),
	/** URL of a remote MCP server (instead of an image). */
	url: z.string().optional(),
	transport: WorkloadTransport.optional(),
	proxy_mode: WorkloadProxyMode.optional(),
	/** Host the proxy binds to (default 127.0.0.1). */
	host: z.string().optional(),
	/** Proxy port on the host; 0 or omitted picks a free port (keeps the current one on update). */
	proxy_port: Port.optional(),
	/** Container port, for sse and streamable-http. */
	target_port: Port.optional(),
	cmd_arguments: z.array(z.string()).optional(),
	env_vars: StringMap.optional(),
	/** Secrets injected as environment variables; values are never returned. */
	secrets: z.array(SecretReference).optional(),
	/** `host:container[:ro]` mounts. */
	volumes: z.array(z.string()).optional(),
	/** Path of an authorization policy file on the service's machine. */
	authz_config: z.string().optional(),
	oidc: WorkloadOidcOptions.optional(),
	/** Audit log of the workload's requests (NDJSON); `enabled: false` turns it off. */
	audit_config: AuditConfig.optional(),
	/** Token buckets limiting tool calls. */
	rate_limit_config: RateLimitConfig.optional(),
	/**
	 * `replicas` proxy processes behind a load balancer, `backend_replicas` server instances, and
	 * `session_redis` where the replicas keep sessions and rate-limit buckets.
	 */
	scaling_config: ScalingConfig.optional(),
	/** OpenTelemetry traces and metrics of the workload's proxy (OTLP/HTTP, Prometheus `/metrics`). */
	telemetry_config: TelemetryConfig.optional(),
	permission_profile: RequestedPermissionProfile.optional(),
	/** Apply the permission profile's network rules. Omitted means true. */
	network_isolation: z.boolean().optional(),
	trust_proxy_headers: z.boolean().optional(),
	/** Browser origins (`scheme://host[:port]`) the proxy accepts besides its own, e.g. a web client's. */
	allowed_origins: z.array(z.string()).optional(),
	allow_docker_gateway: z.boolean().optional(),
	/** Only these tools are exposed. */
	tools: z.array(z.string()).optional(),
	/** Tool name → new name and/or description. */
	tools_override: z.record(z.string(), ToolOverride).optional(),
	/**
	 * What the proxy does with a tool or prompt that differs from its pin (see `workloads/tools`):
	 * `block` (the default unless `hangar tools policy` sets another), `warn` or `off`.
	 */
	tool_pinning: ToolPinning.optional(),
	/** Serve `/metrics` without the workload's OIDC authentication (ToolHive's behaviour); by default it needs it. */
	metrics_without_auth: z.boolean().optional(),
	/**
	 * Guardrails on the workload's tool traffic: `{ secrets: {} }` turns secret scanning on with its
	 * defaults (secrets in requests blocked, in results redacted). Off when absent.
	 */
	guardrails: GuardrailsConfig.optional(),
	/**
	 * ToolHive's webhooks, called for each `tools/call`, `prompts/get` and `resources/read`:
	 * mutating ones first (a JSON Patch on the call's arguments), then validating ones (allowed,
	 * or denied with a reason the client is shown).
	 */
	mutating_webhooks: z.array(WebhookConfig.strict()).optional(),
	validating_webhooks: z.array(WebhookConfig.strict()).optional(),
	group: GroupName.optional(),
	oauth_config: RemoteOAuthConfig.optional(),
	/** Headers a remote server accepts. */
	headers: z.array(RegistryHeader.strict()).optional(),
	header_forward: HeaderForwardConfig.optional(),
	/** Build settings; only for protocol-scheme images. */
	runtime_config: RuntimeConfig.optional(),
	/** Labels put on the workload (and its container); keys starting with `hangar` are reserved. */
	labels: StringMap.optional(),
	/**
	 * When the workload comes back by itself (Docker's policy names): `unless-stopped` (the
	 * default) and `always` bring it back after a reboot or a crash, unless it was stopped.
	 */
	restart_policy: RestartPolicy.optional(),
	/** Seconds the proxy waits for the server to answer a request (default 60). */
	request_timeout: z.number().int().min(1, 'request_timeout must be at least 1 second').max(86_400).optional(),
	/**
	 * Seconds a request may take in all, however often progress resets `request_timeout`
	 * (default 3600; never less than `request_timeout`).
	 */
	request_timeout_max: z.number().int().min(1, 'request_timeout_max must be at least 1 second').max(604_800).optional(),
	/**
	 * How clients share a stdio server: `shared` (the default: one server process per distinct
	 * protocol revision and capability set) or `isolated` (one per client session).
	 */
	session_mode: SessionMode.optional(),
	/** With image `group://NAME`: how the aggregate shows the group's workloads as one server. */
	aggregation: AggregationConfig.optional(),
	/**
	 * The most server processes a stdio server's container runs at once, its own included
	 * (default 16): in `isolated` mode one per client session; a session past it is refused.
	 */
	max_server_processes: z.number().int().min(1, 'max_server_processes must be at least 1').max(1000).optional(),
	/**
	 * Seconds a stdio server process beside the container's own may stay idle (no call in
	 * flight, no client's open event stream) before it is ended, its sessions with it (default 600).
	 */
	server_process_idle_timeout: z.number().int().min(1, 'server_process_idle_timeout must be at least 1 second').max(86_400).optional(),
};

/**
 * Settings of ToolHive's run configuration that Hangar does not implement. A body naming one is
 * refused with a 400 saying so, rather than run without it: most guard requests (middleware,
 * token exchange, upstream credentials, a CA bundle), and a workload run without them would
 * look protected when it is not. ToolHive's own clients never send them (its
 * `createRequest` and `updateRequest` have none), so refusing them breaks none.
 */
const UNIMPLEMENTED_TOOLHIVE_SETTINGS = [
	'middleware_configs',
	'additional_middleware_configs',
	'token_exchange_config',
	'upstream_swap_config',
	'aws_sts_config',
	'embedded_auth_server_config',
	'jwks_auth_token_file',
	'thv_ca_bundle',
	'session_ttl',
	'strict_protocol_validation',
] as const;

function refused<const Name extends string>(names: readonly Name[]): Record<Name, z.ZodOptional<z.ZodNever>> {
	const message = 'a ToolHive run-configuration setting not implemented by Hangar; the workload would run without it';
	return Object.fromEntries(names.map((name) => [name, z.never({ error: message }).optional()])) as Record<Name, z.ZodOptional<z.ZodNever>>;
}

/** The fields of a create or update body: any other key is refused (400 naming it). */
const WorkloadRequestFields = { ...WorkloadSpecFields, ...refused(UNIMPLEMENTED_TOOLHIVE_SETTINGS) };

/** Workload detail (spec 2.16): the editable configuration, as `workloads/get` returns it. */
export const WorkloadDetail = z.object({
	name: z.string(),
	registry: z.string().optional(),
	server: z.string().optional(),
	...WorkloadSpecFields,
	transport: z.string().optional(),
	proxy_mode: z.string().optional(),
	proxy_port: z.number().int().optional(),
	target_port: z.number().int().optional(),
	group: z.string().optional(),
	secrets: z.array(SecretParameter).optional(),
});
export type WorkloadDetail = z.infer<typeof WorkloadDetail>;

/** Result of create and update. */
export const WorkloadPort = z.object({ name: z.string(), port: z.number().int() });

// ---------------------------------------------------------------------------------------------
// Params
// ---------------------------------------------------------------------------------------------

function checkToolsOverride(
	overrides: Record<string, { name?: string | undefined; description?: string | undefined }> | undefined,
	ctx: z.RefinementCtx,
): void {
	for (const [tool, override] of Object.entries(overrides ?? {})) {
		if (!override.name && !override.description) {
			ctx.addIssue({
				code: 'custom',
				path: ['tools_override', tool],
				message: `tool override for ${tool} must have either Name or Description set`,
			});
		}
	}
}

/** Body of `workloads/create` (ToolHive `createRequest`). */
export const CreateWorkloadParams = z
	.object({
		name: WorkloadName,
		/** With `server`: resolve the workload from this registry. */
		registry: z.string().optional(),
		/** With `registry`: reverse-DNS server name in it. */
		server: z.string().optional(),
		...WorkloadRequestFields,
	})
	.strict()
	.superRefine((params, ctx) => {
		if (Boolean(params.registry) !== Boolean(params.server)) {
			ctx.addIssue({ code: 'custom', message: "both 'registry' and 'server' must be specified together" });
		} else if (!params.image && !params.url && !params.registry) {
			ctx.addIssue({ code: 'custom', message: "either 'image', 'url', or 'registry'+'server' fields are required" });
		}
		checkToolsOverride(params.tools_override, ctx);
	});

/** Body of `workloads/update` (ToolHive `updateRequest`); `name` comes from the path. */
export const UpdateWorkloadParams = z
	.object({ name: WorkloadName, ...WorkloadRequestFields })
	.strict()
	.superRefine((params, ctx) => checkToolsOverride(params.tools_override, ctx));

/** Body of the bulk operations: exactly one of `names` and `group`. */
export const BulkWorkloadParams = z
	.object({
		names: z.array(WorkloadName).optional(),
		group: GroupName.optional(),
	})
	.superRefine((params, ctx) => {
		const hasNames = (params.names?.length ?? 0) > 0;
		const hasGroup = Boolean(params.group);
		if (hasNames && hasGroup) ctx.addIssue({ code: 'custom', message: 'cannot specify both names and group' });
		if (!hasNames && !hasGroup) ctx.addIssue({ code: 'custom', message: 'must specify either names or group' });
	});

const WorkloadNameParams = z.object({ name: WorkloadName });

// ---------------------------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------------------------

/** Lists workloads: running ones, or all with `all`; `group` filters (404 for an unknown group). */
export const ListWorkloads = operation({
	method: 'workloads/list',
	summary: 'List workloads',
	params: z.object({ all: QueryBoolean.optional(), group: GroupName.optional() }),
	result: z.object({ workloads: z.array(WorkloadSummary) }),
	rest: { verb: 'GET', path: '/api/v1beta/workloads', status: 200, query: ['all', 'group'] },
	errors: [400, 404, 500],
	example: { all: true },
});

/**
 * Creates and starts a workload from `image`, `url`, or `registry`+`server`. 409 when the name
 * is taken; 404 when the image or registry server does not exist.
 */
export const CreateWorkload = operation({
	method: 'workloads/create',
	summary: 'Create a workload',
	params: CreateWorkloadParams,
	result: WorkloadPort,
	rest: { verb: 'POST', path: '/api/v1beta/workloads', status: 201 },
	errors: [400, 404, 409, 500, 502, 503, 504],
	example: { name: 'contract', registry: 'default', server: 'io.github.contract/missing' },
});

/** Stops the named workloads, or every workload of a group, in the background. */
export const StopWorkloads = operation({
	method: 'workloads/stopMany',
	summary: 'Stop workloads in bulk',
	params: BulkWorkloadParams,
	result: NoResult,
	rest: { verb: 'POST', path: '/api/v1beta/workloads/stop', status: 202, response: 'empty' },
	errors: [400],
	example: { names: ['contract-missing'] },
});

/** Restarts the named workloads, or every workload of a group, in the background. */
export const RestartWorkloads = operation({
	method: 'workloads/restartMany',
	summary: 'Restart workloads in bulk',
	params: BulkWorkloadParams,
	result: NoResult,
	rest: { verb: 'POST', path: '/api/v1beta/workloads/restart', status: 202, response: 'empty' },
	errors: [400],
	example: { names: ['contract-missing'] },
});

/** Deletes the named workloads, or every workload of a group, in the background. */
export const DeleteWorkloads = operation({
	method: 'workloads/deleteMany',
	summary: 'Delete workloads in bulk',
	params: BulkWorkloadParams,
	result: NoResult,
	rest: { verb: 'POST', path: '/api/v1beta/workloads/delete', status: 202, response: 'empty' },
	errors: [400],
	example: { names: ['contract-missing'] },
});

/** Returns the editable configuration of a workload (secrets as references). */
export const GetWorkload = operation({
	method: 'workloads/get',
	summary: 'Get workload details',
	params: WorkloadNameParams,
	result: WorkloadDetail,
	rest: { verb: 'GET', path: '/api/v1beta/workloads/{name}', status: 200 },
	errors: [400, 404, 500],
	example: { name: 'contract-missing' },
});

/**
 * Replaces a workload's configuration and recreates it. Omitted `network_isolation` means true
 * and `proxy_port` 0 keeps the current port, so send the full configuration from `workloads/get`.
 */
export const UpdateWorkload = operation({
	method: 'workloads/update',
	summary: 'Update a workload',
	params: UpdateWorkloadParams,
	result: WorkloadPort,
	rest: { verb: 'POST', path: '/api/v1beta/workloads/{name}/edit', status: 200 },
	errors: [400, 404, 500, 502, 503, 504],
	example: { name: 'contract-missing', image: 'ghcr.io/contract/missing:0.0.0' },
});

/** Stops a workload in the background. */
export const StopWorkload = operation({
	method: 'workloads/stop',
	summary: 'Stop a workload',
	params: WorkloadNameParams,
	result: NoResult,
	rest: { verb: 'POST', path: '/api/v1beta/workloads/{name}/stop', status: 202, response: 'empty' },
	errors: [400, 404, 500],
	example: { name: 'contract-missing' },
});

/** Restarts a workload in the background. */
export const RestartWorkload = operation({
	method: 'workloads/restart',
	summary: 'Restart a workload',
	params: WorkloadNameParams,
	result: NoResult,
	rest: { verb: 'POST', path: '/api/v1beta/workloads/{name}/restart', status: 202, response: 'empty' },
	errors: [400, 404, 500],
	example: { name: 'contract-missing' },
});

/** Returns the current status of a workload. */
export const GetWorkloadStatus = operation({
	method: 'workloads/status',
	summary: 'Get workload status',
	params: WorkloadNameParams,
	result: z.object({ status: WorkloadStatus }),
	rest: { verb: 'GET', path: '/api/v1beta/workloads/{name}/status', status: 200 },
	errors: [400, 404, 500],
	example: { name: 'contract-missing' },
});

/** Returns the last 1000 lines of the workload's container logs (a stdio server's stderr only), as plain text. */
export const GetWorkloadLogs = operation({
	method: 'workloads/logs',
	summary: 'Get workload logs',
	params: WorkloadNameParams,
	result: z.string(),
	rest: { verb: 'GET', path: '/api/v1beta/workloads/{name}/logs', status: 200, response: 'text' },
	errors: [400, 404, 500, 503],
	example: { name: 'contract-missing' },
});

/** Returns the last 1000 lines of the workload's proxy log, as plain text (404 when there is none). */
export const GetWorkloadProxyLogs = operation({
	method: 'workloads/proxyLogs',
	summary: 'Get workload proxy logs',
	params: WorkloadNameParams,
	result: z.string(),
	rest: { verb: 'GET', path: '/api/v1beta/workloads/{name}/proxy-logs', status: 200, response: 'text' },
	errors: [400, 404, 500],
	example: { name: 'contract-missing' },
});

export { MAX_STATS_WINDOW_SECONDS };

/** A running workload's calls over a recent window, counted by its proxy (telemetry on or off). */
export const WorkloadStats = z.object({
	name: z.string(),
	/** The seconds counted (less than asked while the proxy is younger). */
	window_seconds: z.number().int(),
	/** Requests answered in the window (every JSON-RPC request: tool calls, lists, initialize…), refusals included. */
	calls: z.number().int(),
	/** Of those, failed: answered with a JSON-RPC error (the server's or the proxy's), or a tool call whose result says `isError`. */
	errors: z.number().int(),
	calls_per_second: z.number(),
	/** Latency percentiles in milliseconds (a histogram bucket's upper bound); absent without calls. */
	p50_ms: z.number().optional(),
	p99_ms: z.number().optional(),
	/** Since the proxy started: requests and failed requests, as `calls` and `errors`. */
	total_calls: z.number().int(),
	total_errors: z.number().int(),
	/** Since the proxy started: `tools/call` requests, and those that failed (a JSON-RPC error or an `isError` result). */
	total_tool_calls: z.number().int().default(0), // a proxy started by an older Hangar does not count them
	total_tool_errors: z.number().int().default(0),
	/**
	 * A stdio server's processes: those the container runs (its own included), those a client
	 * uses (a call in flight, a server request or task, an open event stream; the others are
	 * idle, and ended past `max` or after `server_process_idle_timeout`), and `max_server_processes`.
	 */
	server_processes: z.object({ running: z.number().int(), in_use: z.number().int(), max: z.number().int() }).optional(),
	/** When the proxy started. */
	since: z.string(),
	/** The last failure; a tool's own error (`isError`) names the tool and has no JSON-RPC code. */
	last_error: z.object({ at: z.string(), method: z.string(), tool: z.string().optional(), code: z.number().int().optional(), message: z.string() }).optional(),
});
export type WorkloadStats = z.infer<typeof WorkloadStats>;

/**
 * Returns a running workload's call rate, latency percentiles and errors over the last `window`
 * seconds (default 10, at most 60); 409 when its proxy is not running, 503 when it does not answer.
 */
export const GetWorkloadStats = operation({
	method: 'workloads/stats',
	summary: 'Get workload call statistics',
	params: WorkloadNameParams.extend({ window: QueryInteger.pipe(z.number().min(1).max(MAX_STATS_WINDOW_SECONDS)).optional() }),
	result: WorkloadStats,
	rest: { verb: 'GET', path: '/api/v1beta/workloads/{name}/stats', status: 200, query: ['window'] },
	errors: [400, 404, 409, 500, 503],
	example: { name: 'contract-missing' },
});

/** Where a remote workload's sign-in to its server stands (`workloads/signIn`). */
export const WorkloadSignInResult = z.object({
	name: z.string(),
	/** `signed_in`: the proxy holds a token; `pending`: open `authorization_url` or enter `user_code` at `verification_uri`. */
	status: z.enum(['signed_in', 'pending', 'failed']),
	authorization_url: z.string().optional(),
	verification_uri: z.string().optional(),
	user_code: z.string().optional(),
	message: z.string().optional(),
});
export type WorkloadSignInResult = z.infer<typeof WorkloadSignInResult>;

/**
 * Signs a remote workload's proxy in to its OAuth-protected server: starts (or returns the
 * pending) authorization code flow, whose URL the caller opens, or with `device` a device
 * authorization (RFC 8628). With `wait` (seconds) it answers once signed in or when the wait
 * ends. 409 when the workload is not remote or its proxy is not running.
 */
export const SignInWorkload = operation({
	method: 'workloads/signIn',
	summary: "Sign a remote workload in to its server",
	params: WorkloadNameParams.extend({
		device: z.boolean().optional(),
		/** Seconds to wait for the sign-in to complete (0: answer at once). */
		wait: z.number().int().min(0).max(3600).optional(),
	}),
	result: WorkloadSignInResult,
	rest: { verb: 'POST', path: '/api/v1beta/workloads/{name}/signin', status: 200 },
	errors: [400, 404, 409, 500, 503],
	example: { name: 'contract-missing' },
});

/** Returns the full run configuration of a workload (spec 2.17). */
export const ExportWorkload = operation({
	method: 'workloads/export',
	summary: 'Export workload configuration',
	params: WorkloadNameParams,
	result: RunConfig,
	rest: { verb: 'GET', path: '/api/v1beta/workloads/{name}/export', status: 200 },
	errors: [400, 404, 500],
	example: { name: 'contract-missing' },
});

/** Deletes a workload in the background (poll `workloads/list` or watch `workloads/didChange`). */
export const DeleteWorkload = operation({
	method: 'workloads/delete',
	summary: 'Delete a workload',
	params: WorkloadNameParams,
	result: NoResult,
	rest: { verb: 'DELETE', path: '/api/v1beta/workloads/{name}', status: 202, response: 'empty' },
	errors: [400, 404, 500],
	example: { name: 'contract-missing' },
});

/** A hidden-instruction flag on a tool or prompt definition (the rules: README, Security). */
export const DefinitionFlag = z.object({
	rule: z.enum(['hidden_unicode', 'zero_width', 'model_directive', 'other_tools', 'credentials', 'home_path', 'long_description']),
	/** `block`: looks like an attack, holds a new tool back at first sight; `review`: worth reading, served. */
	severity: z.enum(['block', 'review']),
	/** What matched, invisible characters written as U+XXXX. */
	detail: z.string(),
	/** Why the rule matters. */
	why: z.string(),
});

/** One tool or prompt of a workload against its pin. */
export const PinnedDefinition = z.object({
	name: z.string(),
	/** `pinned`: as approved; `changed`: differs from its pin; `new`: not pinned (or flagged at first sight); `removed`: pinned, no longer listed. */
	state: z.enum(['pinned', 'changed', 'new', 'removed']),
	/** SHA-256 of the RFC 8785 canonical JSON of the definition (`sha256:…`): the current one, the pinned one when removed. */
	fingerprint: z.string(),
	pinned_fingerprint: z.string().optional(),
	/** The approved definition, for a changed or removed item. */
	pinned: z.record(z.string(), z.unknown()).optional(),
	/** The definition the server lists now, for a changed or new item. */
	current: z.record(z.string(), z.unknown()).optional(),
	/** Flags of the current definition (of the pinned one while it is unchanged). */
	flags: z.array(DefinitionFlag),
	/** The server lists this name more than once: its lists are refused until it stops. */
	duplicate: z.boolean().optional(),
});
export type PinnedDefinition = z.infer<typeof PinnedDefinition>;

export const WorkloadPinsResult = z.object({
	name: z.string(),
	/** The policy in force: its running proxy's, else the workload's `tool_pinning`, else the global default. */
	tool_pinning: ToolPinning,
	tools: z.array(PinnedDefinition),
	prompts: z.array(PinnedDefinition),
});
export type WorkloadPinsResult = z.infer<typeof WorkloadPinsResult>;

/**
 * Each tool and prompt of a workload against its pin, as the proxy last saw the server list
 * them. Empty until a client has listed them through the proxy.
 */
export const GetWorkloadTools = operation({
	method: 'workloads/tools',
	summary: "Review a workload's pinned tools",
	params: WorkloadNameParams,
	result: WorkloadPinsResult,
	rest: { verb: 'GET', path: '/api/v1beta/workloads/{name}/tools', status: 200 },
	errors: [400, 404, 500],
	example: { name: 'contract-missing' },
});

/**
 * Re-pins tools and prompts as the server lists them now (a removed one is forgotten): those
 * named, or with neither list every drifted one. The proxy serves them again at once. 400 names
 * one that has not drifted; 409 one the server lists twice.
 */
export const ApproveWorkloadTools = operation({
	method: 'workloads/approveTools',
	summary: "Approve a workload's changed tools",
	params: WorkloadNameParams.extend({ tools: z.array(z.string()).optional(), prompts: z.array(z.string()).optional() }),
	result: z.object({ name: z.string(), tools: z.array(z.string()), prompts: z.array(z.string()) }),
	rest: { verb: 'POST', path: '/api/v1beta/workloads/{name}/tools/approve', status: 200 },
	errors: [400, 404, 409, 500],
	example: { name: 'contract-missing' },
});

/** Sent when a workload's status changes, whichever door or background task changed it. */
export const WorkloadsDidChange = notification({
	method: 'workloads/didChange',
	summary: 'A workload changed status',
	params: z.object({
		name: z.string(),
		status: WorkloadStatus,
		status_context: z.string().optional(),
		/** Sent when the workload's tools drift from their pins, or are approved (empty then). */
		tools_drifted: z.array(z.string()).optional(),
	}),
});
