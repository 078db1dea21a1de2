/**
 * The persisted run configuration of a workload (spec 2.17; ToolHive `runner.RunConfig`) and the
 * permission profile (spec 2.8) it shares with registry entries and workload requests.
 *
 * Field names and JSON types follow ToolHive's OpenAPI exactly, including its mix of snake_case
 * and camelCase (`oidc_config.jwksurl`, `telemetry_config.samplingRate`, …). Everything is
 * optional: an export carries only what the workload was configured with. The objects a
 * workload request sets refuse a key they do not define (`.strict()`): a mistyped or
 * unimplemented setting is a 400 naming it, not a setting silently off. The permission profile
 * is not strict here, since registry entries carry it too (upstream data may hold more); a
 * request's is (`protocol.workloads.ts`).
 */
import { z } from 'zod';
import { StringMap } from './common.js';

// ---------------------------------------------------------------------------------------------
// Shared pieces (also used by workload requests and registry entries)
// ---------------------------------------------------------------------------------------------

/** Network rules of a permission profile (`permissions.NetworkPermissions`). */
export const NetworkPermissions = z.object({
	/** Container network mode (`host`, `bridge`, `none`); empty means the runtime default. */
	mode: z.string().optional(),
	inbound: z.object({ allow_host: z.array(z.string()).optional() }).optional(),
	outbound: z
		.object({
			allow_host: z.array(z.string()).optional(),
			allow_port: z.array(z.number().int()).optional(),
			insecure_allow_all: z.boolean().optional(),
		})
		.optional(),
});
export type NetworkPermissions = z.infer<typeof NetworkPermissions>;

/** Permission profile (spec 2.8): mounts the container may read/write and its network rules. */
export const PermissionProfile = z.object({
	name: z.string().optional(),
	privileged: z.boolean().optional(),
	/** Mount declarations the container can read (`host:container` or a single path). */
	read: z.array(z.string()).optional(),
	/** Mount declarations the container can write. */
	write: z.array(z.string()).optional(),
	network: NetworkPermissions.optional(),
});
export type PermissionProfile = z.infer<typeof PermissionProfile>;

/** A reference to a stored secret and the name it is exposed under (`secrets.SecretParameter`). */
export const SecretParameter = z.object({
	/** Key of the secret in the secrets provider. */
	name: z.string(),
	/** Environment variable (or header) that receives the secret's value. */
	target: z.string(),
});
export type SecretParameter = z.infer<typeof SecretParameter>;

/** New name and/or description for one tool. */
export const ToolOverride = z.object({
	name: z.string().optional(),
	description: z.string().optional(),
}).strict();
export type ToolOverride = z.infer<typeof ToolOverride>;

/** What an aggregate (image `group://NAME`) shows of one member workload. */
export const AggregationMember = z.object({
	/** Only these tools (by the member's own names) are shown. */
	tools: z.array(z.string()).optional(),
	/** None of the member's tools is shown. */
	exclude_all: z.boolean().optional(),
	/** The member's tool name → its exposed name and/or description. */
	overrides: z.record(z.string(), ToolOverride).optional(),
}).strict();
export type AggregationMember = z.infer<typeof AggregationMember>;

/**
 * An OpenAI-compatible embeddings endpoint (`POST {url}/embeddings`: Ollama, TEI, vLLM, a hosted
 * API) that a search-mode aggregate blends into find_tool's ranking. Tools are embedded once
 * per definition; when the endpoint is down or slow, find_tool ranks lexically and the
 * aggregate's status says so.
 */
export const SearchEmbeddings = z.object({
	/** The API's base URL, before `/embeddings` (`http://127.0.0.1:11434/v1`): https, or http on loopback. */
	url: z.string(),
	/** The embedding model to ask for. */
	model: z.string(),
	/** The name of a Hangar secret holding the API key, sent as a bearer token. */
	api_key_secret: z.string().optional(),
	/** The semantic share of the blended score, 0 (lexical only) to 1 (semantic only); default 0.5. */
	weight: z.number().min(0).max(1).optional(),
	/** How long find_tool waits for the query's embedding before it answers lexically (ms); default 1000. */
	timeout_ms: z.number().int().min(50).max(30_000).optional(),
	/** Allow a private address (a server on the LAN). */
	allow_private_ip: z.boolean().optional(),
}).strict();
export type SearchEmbeddings = z.infer<typeof SearchEmbeddings>;

/** How a search-mode aggregate ranks: lexically, blended with embeddings when configured. */
export const AggregationSearch = z.object({
	embeddings: SearchEmbeddings.optional(),
}).strict();
export type AggregationSearch = z.infer<typeof AggregationSearch>;

/**
 * The limits of one `run_code` script (an aggregate's code mode). Going over one ends the
 * script with an error naming it; calls beyond `max_calls_in_flight` wait their turn.
 */
export const CodeLimits = z.object({
	/** Wall time of a script, its tool calls included (ms); default 30000. */
	timeout_ms: z.number().int().min(100).max(600_000).optional(),
	/** Memory of the script's engine (MiB); default 64. */
	memory_mib: z.number().int().min(4).max(1024).optional(),
	/** The engine's stack (KiB), which bounds recursion; default 256, the most the proxy's own stack allows. */
	stack_kib: z.number().int().min(32).max(256).optional(),
	/** Tool calls a script may make; default 100. */
	max_tool_calls: z.number().int().min(0).max(10_000).optional(),
	/** Tool calls a script may have in flight at once; default 8. */
	max_calls_in_flight: z.number().int().min(1).max(64).optional(),
	/** What a script may log and return, in bytes of UTF-8; default 65536. */
	max_output_bytes: z.number().int().min(1024).max(16 * 1024 * 1024).optional(),
}).strict();
export type CodeLimits = z.infer<typeof CodeLimits>;

/** Code mode beside `mode: all` or `search`: `run_code` is listed too (`mode: code` lists only it). */
export const AggregationCode = CodeLimits.extend({
	enabled: z.boolean().optional(),
}).strict();
export type AggregationCode = z.infer<typeof AggregationCode>;

/** What a composite step does when the user declines or cancels its elicitation. */
const ElicitationAnswerAction = z.object({ action: z.enum(['skip_remaining', 'abort', 'continue']).optional() }).strict();

/** A step of a composite tool (ToolHive's `WorkflowStepConfig`). Durations are Go's: `500ms`, `30s`, `1m`. */
const compositeStepFields = {
	/** The tool to call, `member.tool` (the member workload's name and its own tool name). */
	tool: z.string().optional(),
	/** The tool's arguments; a string value may be a template (`{{.params.x}}`, `{{.steps.ID.output.field}}`). */
	arguments: z.record(z.string(), z.unknown()).optional(),
	/** A template; the step runs only when it is true (not empty, `false`, `0`, `null` or `<no value>`). */
	condition: z.string().optional(),
	onError: z.object({
		action: z.enum(['abort', 'continue', 'retry']).optional(),
		retryCount: z.number().int().min(0).max(10).optional(),
		retryDelay: z.string().optional(),
	}).strict().optional(),
	timeout: z.string().optional(),
	/** The step's output when it is skipped or fails under `onError.action: continue`. */
	defaultResults: z.record(z.string(), z.unknown()).optional(),
};
export const CompositeStep = z.object({
	id: z.string(),
	type: z.enum(['tool', 'elicitation', 'forEach']).optional(),
	...compositeStepFields,
	dependsOn: z.array(z.string()).optional(),
	/** Elicitation: what the user is asked, the schema of the answer, and what a decline or cancel does. */
	message: z.string().optional(),
	schema: z.record(z.string(), z.unknown()).optional(),
	onDecline: ElicitationAnswerAction.optional(),
	onCancel: ElicitationAnswerAction.optional(),
	/** forEach: a template naming an array, the name of its item, the tool step run for each. */
	collection: z.string().optional(),
	itemVar: z.string().optional(),
	maxIterations: z.number().int().min(1).max(1000).optional(),
	maxParallel: z.number().int().min(1).max(64).optional(),
	step: z.object(compositeStepFields).strict().optional(),
}).strict();
export type CompositeStep = z.infer<typeof CompositeStep>;

/** A property of a composite tool's output: a template (`value`), or nested `properties`. */
const CompositeOutputProperty = z.object({
	type: z.enum(['string', 'integer', 'number', 'boolean', 'object', 'array']),
	description: z.string().optional(),
	value: z.string().optional(),
	properties: z.record(z.string(), z.unknown()).optional(),
	default: z.unknown().optional(),
}).strict();

/** A tool of the aggregate's own made of member tool calls (ToolHive's `CompositeToolConfig`). */
export const CompositeTool = z.object({
	name: z.string(),
	description: z.string().optional(),
	/** The tool's input, a JSON Schema of `type: object`. */
	parameters: z.record(z.string(), z.unknown()).optional(),
	/** At least one (checked with the rest of the aggregation, server/workloads/aggregation.ts). */
	steps: z.array(CompositeStep),
	timeout: z.string().optional(),
	/** The result's structured content; without it, the last step's output. */
	output: z.object({
		properties: z.record(z.string(), CompositeOutputProperty),
		required: z.array(z.string()).optional(),
	}).strict().optional(),
	/** Declared annotations, merged over those derived from the steps (never safer than the steps). */
	annotations: z.object({
		title: z.string().optional(),
		readOnlyHint: z.boolean().optional(),
		destructiveHint: z.boolean().optional(),
		idempotentHint: z.boolean().optional(),
		openWorldHint: z.boolean().optional(),
	}).strict().optional(),
}).strict();
export type CompositeTool = z.infer<typeof CompositeTool>;

/**
 * Hangar: how an aggregate (image `group://NAME`) shows its members' tools as one server.
 * `conflict`: `prefix` (default: every name gets `prefix_format`, default `{workload}_`),
 * `priority` (the first member of `priority` holding a name wins) or `manual` (renames in
 * `members.*.overrides`; a clash left is hidden). `mode: search` lists only `find_tool` and
 * `call_tool`; `mode: code` only `run_code` (with `code.enabled`, `run_code` is listed beside
 * the others). `composite_tools` are listed in every mode.
 */
export const AggregationConfig = z.object({
	conflict: z.enum(['prefix', 'priority', 'manual']).optional(),
	prefix_format: z.string().optional(),
	priority: z.array(z.string()).optional(),
	members: z.record(z.string(), AggregationMember).optional(),
	default_visibility: z.enum(['allow', 'deny']).optional(),
	mode: z.enum(['all', 'search', 'code']).optional(),
	search: AggregationSearch.optional(),
	code: AggregationCode.optional(),
	composite_tools: z.array(CompositeTool).optional(),
}).strict();
export type AggregationConfig = z.infer<typeof AggregationConfig>;

export { groupOfImage, throughAggregates } from './aggregateImage.js';

/** Headers the proxy adds to every request it forwards to the MCP server. */
export const HeaderForwardConfig = z.object({
	/** Header name → literal value. Stored and shown in plain text. */
	add_plaintext_headers: StringMap.optional(),
	/** Header name → secret key in the secrets provider. */
	add_headers_from_secret: StringMap.optional(),
}).strict();
export type HeaderForwardConfig = z.infer<typeof HeaderForwardConfig>;

/** Build settings for protocol-scheme images (`npx://`, `uvx://`, `go://`; `templates.RuntimeConfig`). */
export const RuntimeConfig = z.object({
	/** The base image of the build and runtime stages (npx, uvx); the Go toolchain image (go). */
	builder_image: z.string().optional(),
	/** Hangar: the base image of a Go server's runtime stage. */
	final_image: z.string().optional(),
	/** OS packages added to the runtime stage (apt-get or apk). */
	additional_packages: z.array(z.string()).optional(),
	/** Hangar: the network of the build's steps (`host` where the engine's default network cannot reach the registry). */
	build_network: z.string().optional(),
	/** Build-time dependency constraints (uvx only). */
	build_with: z.array(z.string()).optional(),
	/** Environment variables of the final runtime stage. */
	runtime_env: StringMap.optional(),
	/**
	 * Hangar: the package configuration of the build stage from Hangar secrets, by secret name:
	 * an `.npmrc` (registries and their tokens), a Python index URL (credentials may be in it), a
	 * PEM CA certificate. Each replaces what the user's files say; none reaches the final image.
	 */
	build_secrets: z.object({ npmrc: z.string().optional(), index_url: z.string().optional(), ca_cert: z.string().optional() }).strict().optional(),
}).strict();
export type RuntimeConfig = z.infer<typeof RuntimeConfig>;

/** How client sessions share a stdio server (see the proxy's stdio bridge). */
export const SessionMode = z.enum(['shared', 'isolated']);
export type SessionMode = z.infer<typeof SessionMode>;

/** Transports a workload can use (RunConfig adds `inspector` for helper workloads). */
export const RunTransport = z.enum(['stdio', 'sse', 'streamable-http', 'inspector']);
/** The HTTP protocol the proxy serves. */
export const ProxyMode = z.enum(['sse', 'streamable-http']);

// ---------------------------------------------------------------------------------------------
// Nested objects of the run configuration
// ---------------------------------------------------------------------------------------------

/** `oidc_config` (`auth.TokenValidatorConfig`): how the proxy validates incoming tokens. */
export const TokenValidatorConfig = z.object({
	issuer: z.string().optional(),
	audience: z.string().optional(),
	jwksurl: z.string().optional(),
	introspectionURL: z.string().optional(),
	clientID: z.string().optional(),
	clientSecret: z.string().optional(),
	cacertPath: z.string().optional(),
	authTokenFile: z.string().optional(),
	resourceURL: z.string().optional(),
	scopes: z.array(z.string()).optional(),
	allowPrivateIP: z.boolean().optional(),
	insecureAllowHTTP: z.boolean().optional(),
});
export type TokenValidatorConfig = z.infer<typeof TokenValidatorConfig>;

/** `audit_config` (`audit.Config`). */
export const AuditConfig = z.object({
	component: z.string().optional(),
	enabled: z.boolean().optional(),
	detectApplicationErrors: z.boolean().optional(),
	includeRequestData: z.boolean().optional(),
	includeResponseData: z.boolean().optional(),
	eventTypes: z.array(z.string()).optional(),
	excludeEventTypes: z.array(z.string()).optional(),
	logFile: z.string().optional(),
	maxDataSize: z.number().int().optional(),
	maxDelegationDepth: z.number().int().optional(),
}).strict();
export type AuditConfig = z.infer<typeof AuditConfig>;

/** One JWT-claim → IAM-role rule of `aws_sts_config`. */
export const AwsStsRoleMapping = z.object({
	claim: z.string().optional(),
	matcher: z.string().optional(),
	priority: z.number().int().optional(),
	role_arn: z.string().optional(),
});

/** `aws_sts_config` (`awssts.Config`): exchange the caller's token for AWS credentials. */
export const AwsStsConfig = z.object({
	region: z.string().optional(),
	service: z.string().optional(),
	fallback_role_arn: z.string().optional(),
	role_claim: z.string().optional(),
	role_mappings: z.array(AwsStsRoleMapping).optional(),
	session_duration: z.number().int().optional(),
	session_name_claim: z.string().optional(),
	subject_provider_name: z.string().optional(),
});
export type AwsStsConfig = z.infer<typeof AwsStsConfig>;

/** `upstream_swap_config` (`upstreamswap.Config`). */
export const UpstreamSwapConfig = z.object({
	provider_name: z.string().optional(),
	header_strategy: z.string().optional(),
	custom_header_name: z.string().optional(),
});

/** `authz_config` (`authz.Config`): the policy file's type marker and version. */
export const AuthzConfig = z.object({
	type: z.string().optional(),
	version: z.string().optional(),
});

/** `ignore_config` (`ignore.Config`). */
export const IgnoreConfig = z.object({
	loadGlobal: z.boolean().optional(),
	printOverlays: z.boolean().optional(),
});

/** `remote_auth_config` (`remote.Config`): how the proxy authenticates to a remote MCP server. */
export const RemoteAuthConfig = z.object({
	issuer: z.string().optional(),
	authorize_url: z.string().optional(),
	token_url: z.string().optional(),
	resource: z.string().optional(),
	client_id: z.string().optional(),
	client_secret: z.string().optional(),
	client_secret_file: z.string().optional(),
	bearer_token: z.string().optional(),
	bearer_token_file: z.string().optional(),
	scopes: z.array(z.string()).optional(),
	scope_param_name: z.string().optional(),
	oauth_params: StringMap.optional(),
	callback_port: z.number().int().optional(),
	skip_browser: z.boolean().optional(),
	use_pkce: z.boolean().optional(),
	/** Go duration string, e.g. `5m0s`. */
	timeout: z.string().optional(),
	cached_client_id: z.string().optional(),
	cached_client_secret_ref: z.string().optional(),
	cached_refresh_token_ref: z.string().optional(),
	cached_reg_token_ref: z.string().optional(),
	cached_reg_client_uri: z.string().optional(),
	cached_cimd_client_id: z.string().optional(),
	cached_dcr_callback_port: z.number().int().optional(),
	cached_token_auth_method: z.string().optional(),
	cached_secret_expiry: z.string().optional(),
	cached_token_expiry: z.string().optional(),
	/** Hangar: the issuer the cached client was registered with (a client of another issuer is not reused). */
	cached_issuer: z.string().optional(),
});
export type RemoteAuthConfig = z.infer<typeof RemoteAuthConfig>;

/** `token_exchange_config` (`tokenexchange.Config`, RFC 8693). */
export const TokenExchangeConfig = z.object({
	token_url: z.string().optional(),
	client_id: z.string().optional(),
	client_secret: z.string().optional(),
	audience: z.string().optional(),
	scopes: z.array(z.string()).optional(),
	subject_token_type: z.string().optional(),
	header_strategy: z.string().optional(),
	external_token_header_name: z.string().optional(),
});

/** `telemetry_config` (`telemetry.Config`). */
export const TelemetryConfig = z.object({
	endpoint: z.string().optional(),
	serviceName: z.string().optional(),
	serviceVersion: z.string().optional(),
	/** Trace sampling rate `0.0`–`1.0`, as a string. */
	samplingRate: z.string().optional(),
	caCertPath: z.string().optional(),
	headers: StringMap.optional(),
	customAttributes: StringMap.optional(),
	environmentVariables: z.array(z.string()).optional(),
	insecure: z.boolean().optional(),
	tracingEnabled: z.boolean().optional(),
	metricsEnabled: z.boolean().optional(),
	enablePrometheusMetricsPath: z.boolean().optional(),
	metricsOnTransportPort: z.boolean().optional(),
	prometheusPort: z.number().int().optional(),
	useLegacyAttributes: z.boolean().optional(),
}).strict();
export type TelemetryConfig = z.infer<typeof TelemetryConfig>;

/**
 * A token bucket. `refillPeriod` is a Kubernetes `metav1.Duration`: ToolHive's OpenAPI types it
 * as an object, but it serialises as a Go duration string (`"1m0s"`); both are accepted.
 */
export const RateLimitBucket = z.object({
	maxTokens: z.number().int().optional(),
	refillPeriod: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
}).strict();

/** Per-tool rate limits. */
export const ToolRateLimitConfig = z.object({
	name: z.string().optional(),
	perUser: RateLimitBucket.optional(),
	shared: RateLimitBucket.optional(),
}).strict();

/** `rate_limit_config`: per-user, shared and per-tool token buckets. */
export const RateLimitConfig = z.object({
	perUser: RateLimitBucket.optional(),
	shared: RateLimitBucket.optional(),
	tools: z.array(ToolRateLimitConfig).optional(),
}).strict();

/**
 * Hangar: what a guardrail does with what it finds in one direction. `block`: the call fails with
 * a JSON-RPC error naming the rule; `redact`: the match is replaced by `[REDACTED:<rule>]`;
 * `audit`: an audit event and a log line, nothing changed; `off`: not scanned.
 */
export const GuardrailAction = z.enum(['block', 'redact', 'audit', 'off']);
export type GuardrailAction = z.infer<typeof GuardrailAction>;

/**
 * One known false positive let through: a finding of `rule` (any rule when absent) whose matched
 * text is `match` (any text when absent), in calls of `tool` (any tool when absent). At least
 * `rule` or `match` is named (checked by the workloads service).
 */
export const SecretAllowRule = z.object({
	rule: z.string().optional(),
	match: z.string().optional(),
	tool: z.string().optional(),
}).strict();
export type SecretAllowRule = z.infer<typeof SecretAllowRule>;

/** Hangar: secret scanning of tool traffic (server/proxy/chain/guardrails/README.md). */
export const SecretScanConfig = z.object({
	/** Secrets in what the client sends (`tools/call` arguments, `prompts/get` arguments, `resources/read` URIs): `block` by default. */
	requests: GuardrailAction.optional(),
	/** Secrets in what the server answers (results and errors): `redact` by default. */
	responses: GuardrailAction.optional(),
	/** Also look for the values of the user's Hangar secrets, raw, base64 or URL-encoded (default true). */
	hangar_secrets: z.boolean().optional(),
	allow: z.array(SecretAllowRule).optional(),
	/** Characters of text scanned per message at most (default 1 MiB, 1 KiB to 16 MiB). */
	max_scan_bytes: z.number().int().min(1024).max(16 * 1024 * 1024).optional(),
	/** A message with more text than that: `pass` (the first part scanned, audited; the default) or `block`. */
	oversized: z.enum(['pass', 'block']).optional(),
}).strict();
export type SecretScanConfig = z.infer<typeof SecretScanConfig>;

/** Hangar: the kinds of personal data the guardrails look for. */
export const PersonalDataKind = z.enum(['email', 'phone', 'card', 'iban', 'national_id']);
export type PersonalDataKind = z.infer<typeof PersonalDataKind>;

/** Hangar: what the guardrails do with personal data in one direction; never `block` (it is the user's own data as often as not). */
export const PersonalDataAction = z.enum(['redact', 'audit', 'off']);

/** Hangar: personal data in tool traffic (server/proxy/chain/guardrails/README.md); off when absent. */
export const PersonalDataConfig = z.object({
	/** In what the client sends: `redact` by default. */
	requests: PersonalDataAction.optional(),
	/** In what the server sends (answers, its requests and notifications): `redact` by default. */
	responses: PersonalDataAction.optional(),
	/** The kinds looked for (default all; one at least). */
	kinds: z.array(PersonalDataKind).optional(),
	/** Known false positives, as for secrets (rules `pii.<kind>`). */
	allow: z.array(SecretAllowRule).optional(),
}).strict();
export type PersonalDataConfig = z.infer<typeof PersonalDataConfig>;

/** Hangar: the guardrails on a workload's tool traffic. */
export const GuardrailsConfig = z.object({
	secrets: SecretScanConfig.optional(),
	personal_data: PersonalDataConfig.optional(),
}).strict();
export type GuardrailsConfig = z.infer<typeof GuardrailsConfig>;

/** TLS settings of a webhook call. */
export const WebhookTlsConfig = z.object({
	ca_bundle_path: z.string().optional(),
	client_cert_path: z.string().optional(),
	client_key_path: z.string().optional(),
	insecure_skip_verify: z.boolean().optional(),
}).strict();

/**
 * One entry of `mutating_webhooks` / `validating_webhooks` (`webhook.Config`). Hangar: `url` is
 * https (or http to a loopback host), `timeout` in seconds (default 10), `failure_policy` `fail`
 * by default, `hmac_secret_ref` the name of a Hangar secret whose value signs each body.
 */
export const WebhookConfig = z.object({
	name: z.string().optional(),
	url: z.string().optional(),
	hmac_secret_ref: z.string().optional(),
	failure_policy: z.enum(['fail', 'ignore']).optional(),
	timeout: z.number().int().optional(),
	tls_config: WebhookTlsConfig.optional(),
});
export type WebhookConfig = z.infer<typeof WebhookConfig>;

/** One middleware of `middleware_configs` (`types.MiddlewareConfig`). */
export const MiddlewareConfig = z.object({
	type: z.string().optional(),
	parameters: z.record(z.string(), z.unknown()).optional(),
});

/** `scaling_config.session_redis`: shared session store of the proxy replicas. */
export const SessionRedisConfig = z.object({
	address: z.string().optional(),
	db: z.number().int().optional(),
	key_prefix: z.string().optional(),
}).strict();
export type SessionRedisConfig = z.infer<typeof SessionRedisConfig>;

/** `scaling_config` (`runner.ScalingConfig`), with Hangar's `replicas`. */
export const ScalingConfig = z.object({
	/** Proxy processes behind a load balancer on the workload's port (Hangar's; the operator's `spec.replicas`). */
	replicas: z.number().int().optional(),
	/** Server instances the proxies spread sessions across (`backendReplicas` in the operator's CRD). */
	backend_replicas: z.number().int().optional(),
	session_redis: SessionRedisConfig.optional(),
}).strict();
export type ScalingConfig = z.infer<typeof ScalingConfig>;

// --- embedded_auth_server_config (`authserver.RunConfig`) ---------------------------------------

/** Where the user-info fields are read from. */
export const UserInfoFieldMapping = z.object({
	subject_fields: z.array(z.string()).optional(),
	name_fields: z.array(z.string()).optional(),
	email_fields: z.array(z.string()).optional(),
});

/** An upstream's user-info endpoint. */
export const UserInfoConfig = z.object({
	endpoint_url: z.string().optional(),
	http_method: z.string().optional(),
	additional_headers: StringMap.optional(),
	field_mapping: UserInfoFieldMapping.optional(),
});

/** Dot paths of a non-standard token response. */
export const TokenResponseMapping = z.object({
	access_token_path: z.string().optional(),
	expires_in_path: z.string().optional(),
	refresh_token_path: z.string().optional(),
	scope_path: z.string().optional(),
});

/** Dynamic client registration (RFC 7591) at an OAuth 2 upstream. */
export const DcrUpstreamConfig = z.object({
	discovery_url: z.string().optional(),
	registration_endpoint: z.string().optional(),
	initial_access_token_env_var: z.string().optional(),
	initial_access_token_file: z.string().optional(),
	software_id: z.string().optional(),
	software_statement: z.string().optional(),
});

/** Identity read from the upstream token instead of a user-info call. */
export const IdentityFromTokenConfig = z.object({
	subject_path: z.string().optional(),
	name_path: z.string().optional(),
	email_path: z.string().optional(),
});

/** An OIDC upstream identity provider. */
export const OidcUpstreamConfig = z.object({
	issuer_url: z.string().optional(),
	client_id: z.string().optional(),
	client_secret_env_var: z.string().optional(),
	client_secret_file: z.string().optional(),
	redirect_uri: z.string().optional(),
	scopes: z.array(z.string()).optional(),
	additional_authorization_params: StringMap.optional(),
	subject_claim: z.string().optional(),
	allow_private_ips: z.boolean().optional(),
	insecure_allow_http: z.boolean().optional(),
	userinfo_override: UserInfoConfig.optional(),
});

/** A plain OAuth 2 upstream identity provider. */
export const OAuth2UpstreamConfig = z.object({
	authorization_endpoint: z.string().optional(),
	token_endpoint: z.string().optional(),
	client_id: z.string().optional(),
	client_secret_env_var: z.string().optional(),
	client_secret_file: z.string().optional(),
	redirect_uri: z.string().optional(),
	scopes: z.array(z.string()).optional(),
	additional_authorization_params: StringMap.optional(),
	allow_private_ips: z.boolean().optional(),
	insecure_allow_http: z.boolean().optional(),
	dcr_config: DcrUpstreamConfig.optional(),
	identity_from_token: IdentityFromTokenConfig.optional(),
	token_response_mapping: TokenResponseMapping.optional(),
	userinfo: UserInfoConfig.optional(),
});

/** One upstream identity provider of the embedded authorization server. */
export const AuthServerUpstream = z.object({
	name: z.string().optional(),
	type: z.enum(['oidc', 'oauth2']).optional(),
	oidc_config: OidcUpstreamConfig.optional(),
	oauth2_config: OAuth2UpstreamConfig.optional(),
});

/** Keys that sign the tokens the embedded authorization server issues. */
export const SigningKeyConfig = z.object({
	key_dir: z.string().optional(),
	signing_key_file: z.string().optional(),
	fallback_key_files: z.array(z.string()).optional(),
});

/** Lifetimes (Go duration strings) of issued codes and tokens. */
export const TokenLifespanConfig = z.object({
	access_token_lifespan: z.string().optional(),
	auth_code_lifespan: z.string().optional(),
	refresh_token_lifespan: z.string().optional(),
});

/** TLS to Redis or Redis Sentinel. */
export const RedisTlsConfig = z.object({
	ca_cert_file: z.string().optional(),
	insecure_skip_verify: z.boolean().optional(),
});

/** `storage.redis_config`: Redis storage of the embedded authorization server. */
export const RedisStorageConfig = z.object({
	addr: z.string().optional(),
	cluster_mode: z.boolean().optional(),
	auth_type: z.string().optional(),
	key_prefix: z.string().optional(),
	dial_timeout: z.string().optional(),
	read_timeout: z.string().optional(),
	write_timeout: z.string().optional(),
	acl_user_config: z
		.object({ username_env_var: z.string().optional(), password_env_var: z.string().optional() })
		.optional(),
	sentinel_config: z
		.object({
			master_name: z.string().optional(),
			sentinel_addrs: z.array(z.string()).optional(),
			db: z.number().int().optional(),
		})
		.optional(),
	sentinel_tls: RedisTlsConfig.optional(),
	tls: RedisTlsConfig.optional(),
});

/** `storage` of the embedded authorization server (`memory` by default). */
export const AuthServerStorageConfig = z.object({
	type: z.string().optional(),
	redis_config: RedisStorageConfig.optional(),
});

/** Client-ID metadata document lookup. */
export const CimdConfig = z.object({
	enabled: z.boolean().optional(),
	cache_max_size: z.number().int().optional(),
	cache_fallback_ttl: z.string().optional(),
});

/** A confidential client registered at start-up for token delegation. */
export const DelegateClientConfig = z.object({
	client_id: z.string().optional(),
	client_secret_env_var: z.string().optional(),
	client_secret_file: z.string().optional(),
	audiences: z.array(z.string()).optional(),
	scopes: z.array(z.string()).optional(),
});

/** A subject allowed to present JWT-bearer assertions for some resources. */
export const JwtBearerSubjectBinding = z.object({
	subject: z.string().optional(),
	allowed_resources: z.array(z.string()).optional(),
});

/** The JWT-bearer grant policy of a trusted issuer. */
export const JwtBearerGrantPolicy = z.object({
	accepted_audiences: z.array(z.string()).optional(),
	max_assertion_age: z.string().optional(),
	subject_bindings: z.array(JwtBearerSubjectBinding).optional(),
});

/** An external issuer whose tokens are accepted for token exchange. */
export const TrustedIssuer = z.object({
	issuer_url: z.string().optional(),
	jwks_url: z.string().optional(),
	expected_audience: z.string().optional(),
	actor_claim: z.string().optional(),
	actor_matcher: z.string().optional(),
	allowed_actors: z.array(z.string()).optional(),
	allowed_delegate_clients: z.array(z.string()).optional(),
	allow_may_act: z.boolean().optional(),
	allow_private_ips: z.boolean().optional(),
	insecure_allow_http: z.boolean().optional(),
	jwt_bearer_grant: JwtBearerGrantPolicy.optional(),
});

/** `embedded_auth_server_config`: an OAuth authorization server run in front of the workload. */
export const EmbeddedAuthServerConfig = z.object({
	schema_version: z.string().optional(),
	issuer: z.string().optional(),
	authorization_endpoint_base_url: z.string().optional(),
	allowed_audiences: z.array(z.string()).optional(),
	scopes_supported: z.array(z.string()).optional(),
	baseline_client_scopes: z.array(z.string()).optional(),
	hmac_secret_files: z.array(z.string()).optional(),
	signing_key_config: SigningKeyConfig.optional(),
	token_lifespans: TokenLifespanConfig.optional(),
	delegation_token_lifespan: z.string().optional(),
	storage: AuthServerStorageConfig.optional(),
	upstreams: z.array(AuthServerUpstream).optional(),
	cimd: CimdConfig.optional(),
	delegate_clients: z.array(DelegateClientConfig).optional(),
	trusted_issuers: z.array(TrustedIssuer).optional(),
	force_confidential_redirect_uris: z.array(z.string()).optional(),
	allow_confidential_client_registration: z.boolean().optional(),
	disable_upstream_token_injection: z.boolean().optional(),
	insecure_allow_http: z.boolean().optional(),
	insecure_allow_confidential_over_loopback_http: z.boolean().optional(),
});
export type EmbeddedAuthServerConfig = z.infer<typeof EmbeddedAuthServerConfig>;

// ---------------------------------------------------------------------------------------------
// The run configuration
// ---------------------------------------------------------------------------------------------

/**
 * The run configuration of a workload (spec 2.17), as `workloads/export` returns it. Secrets are
 * references (`"<name>,target=<ENV>"`), never values.
 */
/**
 * Hangar: the tool pinning policy. `block`: a tool or prompt that changed since it was approved,
 * or is new, is left out of lists and refused; `warn`: served, with the drift logged and
 * reported; `off`: not checked.
 */
export const ToolPinning = z.enum(['block', 'warn', 'off']);
export type ToolPinning = z.infer<typeof ToolPinning>;

export const RunConfig = z.object({
	schema_version: z.string().optional(),
	name: z.string(),
	base_name: z.string().optional(),
	container_name: z.string().optional(),
	image: z.string().optional(),
	remote_url: z.string().optional(),
	group: z.string().optional(),
	host: z.string().optional(),
	port: z.number().int().optional(),
	target_host: z.string().optional(),
	target_port: z.number().int().optional(),
	transport: RunTransport.optional(),
	proxy_mode: ProxyMode.optional(),
	/**
	 * Hangar: how clients share a stdio server. `shared` (default): one process per distinct
	 * protocol revision and capability set; `isolated`: one process per client session.
	 */
	session_mode: SessionMode.optional(),
	/** Hangar: an aggregate's settings (image `group://NAME`). */
	aggregation: AggregationConfig.optional(),
	/** Hangar: the most server processes a stdio server's container runs, its own included (default 16). */
	max_server_processes: z.number().int().optional(),
	/** Hangar: seconds a stdio server process beside the container's own may stay idle before it is ended (default 600). */
	server_process_idle_timeout: z.number().int().optional(),
	endpoint_prefix: z.string().optional(),
	cmd_args: z.array(z.string()).optional(),
	env_vars: StringMap.optional(),
	env_file_dir: z.string().optional(),
	/** Secret references, `"<secret name>,target=<ENV VAR>"`. */
	secrets: z.array(z.string()).optional(),
	volumes: z.array(z.string()).optional(),
	publish: z.array(z.string()).optional(),
	container_labels: StringMap.optional(),
	allowed_origins: z.array(z.string()).optional(),
	debug: z.boolean().optional(),
	stateless: z.boolean().optional(),
	session_ttl: z.string().optional(),
	strict_protocol_validation: z.boolean().optional(),
	isolate_network: z.boolean().optional(),
	allow_docker_gateway: z.boolean().optional(),
	trust_proxy_headers: z.boolean().optional(),
	permission_profile_name_or_path: z.string().optional(),
	permission_profile: PermissionProfile.optional(),
	tools_filter: z.array(z.string()).optional(),
	tools_override: z.record(z.string(), ToolOverride).optional(),
	/** Hangar: what the proxy does when a tool or prompt differs from its pin; absent means the global default (`block` unless set). */
	tool_pinning: ToolPinning.optional(),
	/** Hangar: serve `/metrics` without the workload's authentication, as ToolHive does; by default it needs it too. */
	metrics_without_auth: z.boolean().optional(),
	/** Hangar: guardrails on the workload's tool traffic (secret scanning); none when absent. */
	guardrails: GuardrailsConfig.optional(),
	header_forward: HeaderForwardConfig.optional(),
	runtime_config: RuntimeConfig.optional(),
	ignore_config: IgnoreConfig.optional(),
	middleware_configs: z.array(MiddlewareConfig).optional(),
	additional_middleware_configs: z.array(MiddlewareConfig).optional(),
	mutating_webhooks: z.array(WebhookConfig).optional(),
	validating_webhooks: z.array(WebhookConfig).optional(),
	oidc_config: TokenValidatorConfig.optional(),
	jwks_auth_token_file: z.string().optional(),
	thv_ca_bundle: z.string().optional(),
	authz_config: AuthzConfig.optional(),
	authz_config_path: z.string().optional(),
	audit_config: AuditConfig.optional(),
	audit_config_path: z.string().optional(),
	telemetry_config: TelemetryConfig.optional(),
	rate_limit_config: RateLimitConfig.optional(),
	rate_limit_namespace: z.string().optional(),
	remote_auth_config: RemoteAuthConfig.optional(),
	token_exchange_config: TokenExchangeConfig.optional(),
	upstream_swap_config: UpstreamSwapConfig.optional(),
	aws_sts_config: AwsStsConfig.optional(),
	embedded_auth_server_config: EmbeddedAuthServerConfig.optional(),
	scaling_config: ScalingConfig.optional(),
	registry_url: z.string().optional(),
	registry_api_url: z.string().optional(),
	registry_server_name: z.string().optional(),
	k8s_pod_template_patch: z.string().optional(),
	mcpserver_generation: z.number().int().optional(),
});
export type RunConfig = z.infer<typeof RunConfig>;
