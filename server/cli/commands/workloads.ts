/**
 * `hangar run|ls|info|export|edit|stop|restart|rm|logs|mcp|top`, and `hangar proxy` (the per-workload
 * proxy process the service starts by itself).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { HangarError } from '../../../protocol/errors.js';
import {
	type WorkloadDetail,
	type WorkloadSummary,
} from '../../../protocol/protocol.workloads.js';
import type { PermissionProfile, RunConfig, TelemetryConfig } from '../../../protocol/runConfig.js';
import { collect, printJson, printTable, repeatUntilInterrupted, type Cli, type CommandFactory } from '../cli.js';
import { port, wholeNumber } from '../values.js';
import { listTools, mcp, withMcpClient } from './mcp.js';
import { top } from './top.js';
import { addRuntimeOptions, packageSource, runtimeConfigOf, type RuntimeOptions } from './build.js';
import { addRemoteAuthOptions, remoteAuthOf, signin, signInFlow, type RemoteAuthOptions } from './signin.js';
import { personalDataSettingsOf, secretScanSettingsOf } from '../../runspec/guardrails.js';

const WAIT_MS = 120_000;
/** Lines a logs call returns (the service's window). */
const LOG_LINES = 1000;
const FOLLOW_INTERVAL_MS = 1_000;
/** Lines of an earlier read that must match to find where a later read goes on. */
const FOLLOW_OVERLAP = 20;

/** Flags shared by `run` and `edit`. */
interface SpecOptions extends TelemetryOptions {
	group?: string;
	transport?: string;
	proxyMode?: string;
	proxyPort?: number;
	targetPort?: number;
	host?: string;
	allowedOrigins: string[];
	env: string[];
	secret: string[];
	volume: string[];
	label: string[];
	tools: string[];
	toolsOverride?: string;
	aggregation?: string;
	permissionProfile?: string;
	isolateNetwork?: boolean;
	trustProxyHeaders?: boolean;
	restart?: string;
	requestTimeout?: number;
	sessionMode?: string;
	toolPinning?: string;
	metricsWithoutAuth?: boolean;
	maxServerProcesses?: number;
	serverProcessIdleTimeout?: number;
	header: string[];
	headerSecret: string[];
	oidcIssuer?: string;
	oidcAudience?: string;
	oidcClientId?: string;
	oidcJwksUrl?: string;
	oidcIntrospectionUrl?: string;
	oidcScopes: string[];
	oidcInsecureAllowHttp?: boolean;
	oidcAllowPrivateIp?: boolean;
	resourceUrl?: string;
	authzConfig?: string;
	auditConfig?: string;
	enableAudit?: boolean;
	rateLimitConfig?: string;
	guardrails?: boolean;
	guardrailsConfig?: string;
	guardrailsRequests?: string;
	guardrailsResponses?: string;
	guardrailsAllow: string[];
	guardrailsPersonalData?: string | boolean;
	guardrailsPersonalDataAction?: string;
	webhooksConfig?: string;
	sessionRedis?: string;
	replicas?: number;
	backendReplicas?: number;
}

/** The `--otel-*` flags. */
export interface TelemetryOptions {
	otelEndpoint?: string;
	otelServiceName?: string;
	otelSamplingRate?: string;
	otelHeaders: string[];
	otelInsecure?: boolean;
	otelTracingEnabled?: boolean;
	otelMetricsEnabled?: boolean;
	otelEnablePrometheusMetricsPath?: boolean;
	otelEnvVars: string[];
	otelCustomAttributes: string[];
}

/** The `--otel-*` flags, with ToolHive's names. */
export function addTelemetryOptions(command: Command): Command {
	return command
		.option('--otel-endpoint <url>', 'OTLP/HTTP collector for traces and metrics (URL, or host:port for https)')
		.option('--otel-service-name <name>', 'service.name of the spans and metrics (default hangar)')
		.option('--otel-sampling-rate <rate>', 'share of traces kept, 0 to 1 (default 0.1)')
		.option('--otel-headers <key=value>', 'header sent to the collector (repeatable or comma-separated)', collect, [])
		.option('--otel-insecure', 'plain http to a host:port endpoint')
		.option('--otel-tracing-enabled', 'send traces (on by default with --otel-endpoint)')
		.option('--otel-metrics-enabled', 'send metrics (on by default with --otel-endpoint)')
		.option('--otel-enable-prometheus-metrics-path', "serve Prometheus metrics on /metrics of the workload's port")
		.option('--metrics-without-auth', "serve /metrics without the workload's OIDC authentication (ToolHive's behaviour; by default it needs a token too)")
		.option('--otel-env-vars <name>', 'environment variable whose value becomes a resource attribute (repeatable or comma-separated)', collect, [])
		.option('--otel-custom-attributes <key=value>', 'resource attribute (repeatable or comma-separated)', collect, []);
}

/**
 * The options `run` and `edit` share, after the command's own: the common ones, then each area
 * under its heading in `--help` (remote sign-in and, for `run`, package builds among them).
 */
function addSpecOptions(command: Command, { builds }: { builds: boolean }): Command {
	command
		.option('--group <group>', 'group of the workload (default: default)')
		.option('--transport <transport>', 'how the server speaks MCP: stdio, sse or streamable-http')
		.option('-e, --env <KEY=VALUE>', 'environment variable of the server (repeatable)', collect, [])
		.option('--secret <NAME,target=ENV>', 'secret passed as an environment variable (repeatable)', collect, [])
		.option('-v, --volume <host:container[:ro]>', 'mount a host path (repeatable)', collect, [])
		.option('-l, --label <key=value>', 'label of the workload (repeatable)', collect, [])
		.option('--tools <name>', 'expose only these tools (repeatable or comma-separated)', collect, []);
	underHeading(command, 'Proxy:', (group) =>
		group
			.option('--proxy-mode <mode>', 'what the proxy advertises for a stdio server: streamable-http (default) or sse')
			.option('--proxy-port <port>', 'port of the proxy on the host (default: a free port, kept across restarts)', port)
			.option('--target-port <port>', 'port the server listens on in its container (sse, streamable-http)', port)
			.option('--host <host>', 'address the proxy binds (default 127.0.0.1)')
			.option('--allowed-origins <origin>', 'browser origin (scheme://host:port) the proxy accepts besides its own (repeatable or comma-separated)', collect, [])
			.option('--trust-proxy-headers', 'behind a reverse proxy: name the address its X-Forwarded-Proto, -Host and -Prefix give in the URLs the proxy hands out')
			.option('--request-timeout <seconds>', 'how long the proxy waits for an answer (default 60)', wholeNumber)
			.option('--session-mode <mode>', 'stdio servers: shared (default; one process per protocol revision and capability set) or isolated (one per client)')
			.option('--max-server-processes <n>', 'stdio servers: the most server processes the container runs, its own included (default 16)', wholeNumber)
			.option('--server-process-idle-timeout <seconds>', 'stdio servers: how long a server process beside the container\'s own may stay idle before it is ended (default 600)', wholeNumber),
	);
	underHeading(command, 'Tools:', (group) =>
		group
			.option('--tools-override <file>', 'JSON file: {"tool": {"name": "new name", "description": "…"}}')
			.option('--aggregation <file>', 'an aggregate (image group://NAME): JSON file of its settings, {"conflict": "prefix", "mode": "all", …}')
			.option('--tool-pinning <policy>', 'when a tool or prompt differs from its pin: block, warn or off (default: hangar tools policy, else block)'),
	);
	underHeading(command, 'Container:', (group) =>
		group
			.option('--permission-profile <profile>', 'none (no network), network (open network), or a JSON profile file')
			.option('--isolate-network', 'apply the permission profile\'s network rules (default)')
			.option('--no-isolate-network', 'do not isolate the network')
			.option('--restart <policy>', 'no, on-failure, unless-stopped (default) or always'),
	);
	if (builds) underHeading(command, 'Package builds (npx://, uvx://, go://):', addRuntimeOptions);
	underHeading(command, 'Remote servers:', (remote) =>
		addRemoteAuthOptions(
			remote
				.option('--header <Name=Value>', 'header sent to a remote server (repeatable)', collect, [])
				.option('--header-secret <Name=secret>', 'header sent to a remote server, its value from a secret (repeatable)', collect, []),
		),
	);
	underHeading(command, 'Client authentication (OIDC):', (group) =>
		group
			.option('--oidc-issuer <url>', 'OIDC issuer whose tokens clients must present')
			.option('--oidc-audience <audience>', 'audience the tokens must carry')
			.option('--oidc-client-id <id>', 'the proxy\'s OAuth client at the provider, for token introspection (its secret from $HANGAR_OIDC_CLIENT_SECRET)')
			.option('--oidc-jwks-url <url>', 'JWKS URL (else from the issuer\'s discovery document)')
			.option('--oidc-introspection-url <url>', 'RFC 7662 endpoint that checks tokens that are not JWTs (opaque tokens)')
			.option('--oidc-scopes <scope>', 'scopes advertised in the protected-resource metadata (repeatable or comma-separated)', collect, [])
			.option('--oidc-insecure-allow-http', 'accept a plain-http issuer or JWKS off loopback')
			.option('--oidc-allow-private-ip', 'accept an issuer or JWKS on a private address')
			.option('--resource-url <url>', 'the URL clients know the workload by, when not the proxy\'s own'),
	);
	underHeading(command, 'Authorization, audit and rate limits:', (group) =>
		group
			.option('--authz-config <file>', 'Cedar authorization configuration (JSON or YAML)')
			.option('--audit-config <file>', 'audit configuration (JSON or YAML: logFile, eventTypes, includeRequestData…); turns the audit log on')
			.option('--enable-audit', 'audit log with the default configuration (<data>/logs/NAME.audit.ndjson)')
			.option('--rate-limit-config <file>', 'rate limits (JSON or YAML: shared, perUser, tools)'),
	);
	underHeading(command, 'Guardrails:', (group) =>
		group
			.option('--guardrails', 'scan tool traffic for secrets: in arguments blocked, in answers redacted (the defaults of the flags below)')
			.option('--guardrails-config <file>', 'guardrails configuration (JSON or YAML: {"secrets": {"requests": …, "allow": […]}}); turns them on')
			.option('--guardrails-requests <action>', 'secrets in what clients send: block (default), redact, audit or off; turns guardrails on')
			.option('--guardrails-responses <action>', 'secrets in what servers answer: redact (default), block, audit or off; turns guardrails on')
			.option('--guardrails-allow <rule[=text]>', 'let a known false positive through: a rule name, or a rule name and the exact text it matched (repeatable)', collect, [])
			.option('--guardrails-personal-data [kinds]', 'scan tool traffic for personal data too, redacted both ways: all kinds, or some of email,phone,card,iban,national_id')
			.option('--guardrails-personal-data-action <action>', 'personal data in what clients send and servers answer: redact (default), audit or off; turns it on')
			.option('--webhooks-config <file>', "ToolHive's webhooks (JSON or YAML: {\"mutating_webhooks\": […], \"validating_webhooks\": […]})"),
	);
	underHeading(command, 'Scaling:', (group) =>
		group
			.option('--session-redis <host:port>', 'keep sessions and rate-limit buckets in this Redis, shared by the proxy replicas')
			.option('--replicas <n>', 'proxy processes behind a load balancer (HAProxy) on the workload\'s port', wholeNumber)
			.option('--backend-replicas <n>', 'server instances the proxies spread sessions across: containers of an HTTP server, or processes per handshake of a stdio server', wholeNumber),
	);
	return underHeading(command, 'Telemetry:', addTelemetryOptions);
}

/** Adds options under a heading of `--help`; options added afterwards go back to the command's own list. */
function underHeading(command: Command, heading: string, add: (command: Command) => Command): Command {
	add(command.optionsGroup(heading));
	return command.optionsGroup('');
}

function pairs(values: string[], separator: string, what: string): Record<string, string> {
	const map: Record<string, string> = {};
	for (const value of values) {
		const at = value.indexOf(separator);
		if (at <= 0) throw new HangarError(400, `invalid ${what} ${JSON.stringify(value)}: expected KEY${separator}VALUE`);
		map[value.slice(0, at)] = value.slice(at + 1);
	}
	return map;
}

function readJsonFile(path: string, what: string): unknown {
	try {
		return JSON.parse(readFileSync(path, 'utf8'));
	} catch (error) {
		throw new HangarError(400, `cannot read the ${what} file ${path}: ${(error as Error).message}`);
	}
}

/** A JSON or YAML file (YAML reads JSON too). */
async function readConfigFile(path: string, what: string): Promise<unknown> {
	const { parse } = await import('yaml');
	try {
		return parse(readFileSync(path, 'utf8'));
	} catch (error) {
		throw new HangarError(400, `cannot read the ${what} file ${path}: ${(error as Error).message.split('\n')[0]}`);
	}
}

function permissionProfileOf(value: string): PermissionProfile {
	if (value === 'none') return { name: 'none', network: { mode: 'none' } };
	if (value === 'network') return { name: 'network', network: { outbound: { insecure_allow_all: true } } };
	return readJsonFile(value, 'permission profile') as PermissionProfile;
}

/** `telemetry_config` from the `--otel-*` flags, or undefined when none is given. */
export function telemetryOf(options: TelemetryOptions): TelemetryConfig | undefined {
	const list = (values: string[]) => values.flatMap((value) => value.split(',')).filter(Boolean);
	const telemetry: TelemetryConfig = {
		endpoint: options.otelEndpoint,
		serviceName: options.otelServiceName,
		samplingRate: options.otelSamplingRate,
		headers: options.otelHeaders.length ? pairs(list(options.otelHeaders), '=', 'OpenTelemetry header') : undefined,
		insecure: options.otelInsecure,
		tracingEnabled: options.otelTracingEnabled,
		metricsEnabled: options.otelMetricsEnabled,
		enablePrometheusMetricsPath: options.otelEnablePrometheusMetricsPath,
		environmentVariables: options.otelEnvVars.length ? list(options.otelEnvVars) : undefined,
		customAttributes: options.otelCustomAttributes.length ? pairs(list(options.otelCustomAttributes), '=', 'OpenTelemetry attribute') : undefined,
	};
	if (Object.values(telemetry).every((value) => value === undefined)) return undefined;
	// As ToolHive: an endpoint alone sends both.
	if (telemetry.endpoint && telemetry.tracingEnabled === undefined && telemetry.metricsEnabled === undefined) {
		telemetry.tracingEnabled = true;
		telemetry.metricsEnabled = true;
	}
	return JSON.parse(JSON.stringify(telemetry)) as TelemetryConfig;
}

/** `guardrails` from the `--guardrails*` flags (a file's settings, the flags over them), or undefined when none is given. */
async function guardrailsOf(options: SpecOptions): Promise<Record<string, unknown> | undefined> {
	const secretsGiven = options.guardrails || options.guardrailsRequests || options.guardrailsResponses || options.guardrailsAllow.length;
	const personalGiven = options.guardrailsPersonalData !== undefined || options.guardrailsPersonalDataAction !== undefined;
	if (!secretsGiven && !personalGiven && !options.guardrailsConfig) return undefined;
	const file = options.guardrailsConfig ? ((await readConfigFile(options.guardrailsConfig, 'guardrails configuration')) as { secrets?: Record<string, unknown>; personal_data?: Record<string, unknown> }) : {};
	const guardrails: Record<string, unknown> = { ...file };
	if (personalGiven) {
		const personal: Record<string, unknown> = { ...file.personal_data };
		if (typeof options.guardrailsPersonalData === 'string') personal.kinds = options.guardrailsPersonalData.split(',').map((kind) => kind.trim()).filter(Boolean);
		if (options.guardrailsPersonalDataAction) personal.requests = personal.responses = options.guardrailsPersonalDataAction;
		guardrails.personal_data = personal;
	}
	if (!secretsGiven) return guardrails;
	const secrets: Record<string, unknown> = { ...file.secrets };
	if (options.guardrailsRequests) secrets.requests = options.guardrailsRequests;
	if (options.guardrailsResponses) secrets.responses = options.guardrailsResponses;
	if (options.guardrailsAllow.length) {
		const allowed = options.guardrailsAllow.map((value) => {
			const at = value.indexOf('=');
			return at < 0 ? { rule: value } : { rule: value.slice(0, at), match: value.slice(at + 1) };
		});
		secrets.allow = [...((secrets.allow as unknown[] | undefined) ?? []), ...allowed];
	}
	return { ...guardrails, secrets };
}

/** The request fields the flags set; fields whose flags were not given are left out. */
async function specOf(options: SpecOptions): Promise<Record<string, unknown>> {
	const spec: Record<string, unknown> = {};
	const set = (key: string, value: unknown) => {
		if (value !== undefined) spec[key] = value;
	};
	set('group', options.group);
	set('transport', options.transport);
	set('proxy_mode', options.proxyMode);
	set('proxy_port', options.proxyPort);
	set('target_port', options.targetPort);
	set('host', options.host);
	set('trust_proxy_headers', options.trustProxyHeaders);
	if (options.allowedOrigins.length) spec.allowed_origins = options.allowedOrigins.flatMap((value) => value.split(',')).filter(Boolean);
	if (options.env.length) spec.env_vars = pairs(options.env, '=', 'environment variable');
	if (options.secret.length) {
		spec.secrets = options.secret.map((value) => {
			const match = /^([^,]+),target=(.+)$/.exec(value);
			if (!match) throw new HangarError(400, `invalid secret ${JSON.stringify(value)}: expected NAME,target=ENV`);
			return { name: match[1], target: match[2] };
		});
	}
	if (options.volume.length) spec.volumes = options.volume;
	if (options.label.length) spec.labels = pairs(options.label, '=', 'label');
	if (options.tools.length) spec.tools = options.tools.flatMap((value) => value.split(',')).filter(Boolean);
	if (options.toolsOverride) spec.tools_override = readJsonFile(options.toolsOverride, 'tools override');
	if (options.aggregation) spec.aggregation = readJsonFile(options.aggregation, 'aggregation');
	if (options.permissionProfile) spec.permission_profile = permissionProfileOf(options.permissionProfile);
	set('network_isolation', options.isolateNetwork);
	set('restart_policy', options.restart);
	set('request_timeout', options.requestTimeout);
	set('session_mode', options.sessionMode);
	set('tool_pinning', options.toolPinning);
	set('metrics_without_auth', options.metricsWithoutAuth);
	set('max_server_processes', options.maxServerProcesses);
	set('server_process_idle_timeout', options.serverProcessIdleTimeout);
	if (options.header.length || options.headerSecret.length) {
		spec.header_forward = {
			...(options.header.length ? { add_plaintext_headers: pairs(options.header, '=', 'header') } : {}),
			...(options.headerSecret.length ? { add_headers_from_secret: pairs(options.headerSecret, '=', 'header') } : {}),
		};
	}
	const oidc = {
		issuer: options.oidcIssuer,
		audience: options.oidcAudience,
		client_id: options.oidcClientId,
		// A secret on the command line would show in the process list and the shell's history.
		client_secret: options.oidcClientId ? process.env.HANGAR_OIDC_CLIENT_SECRET || undefined : undefined,
		jwks_url: options.oidcJwksUrl,
		introspection_url: options.oidcIntrospectionUrl,
		scopes: options.oidcScopes.length ? options.oidcScopes.flatMap((value) => value.split(',')).filter(Boolean) : undefined,
		insecure_allow_http: options.oidcInsecureAllowHttp,
		allow_private_ip: options.oidcAllowPrivateIp,
		resource_url: options.resourceUrl,
	};
	if (Object.values(oidc).some((value) => value !== undefined)) spec.oidc = JSON.parse(JSON.stringify(oidc));
	set('authz_config', options.authzConfig && resolve(options.authzConfig));
	if (options.auditConfig) spec.audit_config = { enabled: true, ...((await readConfigFile(options.auditConfig, 'audit configuration')) as object) };
	else if (options.enableAudit) spec.audit_config = { enabled: true };
	if (options.rateLimitConfig) spec.rate_limit_config = await readConfigFile(options.rateLimitConfig, 'rate limit configuration');
	const guardrails = await guardrailsOf(options);
	if (guardrails) spec.guardrails = guardrails;
	if (options.webhooksConfig) {
		const read = await readConfigFile(options.webhooksConfig, 'webhooks configuration');
		if (read === null || typeof read !== 'object' || Array.isArray(read)) throw new HangarError(400, `the webhooks configuration ${options.webhooksConfig} is not an object of mutating_webhooks and validating_webhooks`);
		const { mutating_webhooks, validating_webhooks, ...other } = read as Record<string, unknown>;
		if (Object.keys(other).length) throw new HangarError(400, `the webhooks configuration ${options.webhooksConfig} has ${Object.keys(other).join(', ')}; it holds mutating_webhooks and validating_webhooks`);
		Object.assign(spec, JSON.parse(JSON.stringify({ mutating_webhooks, validating_webhooks })));
	}
	if (options.replicas || options.backendReplicas || options.sessionRedis) {
		spec.scaling_config = JSON.parse(JSON.stringify({ replicas: options.replicas, backend_replicas: options.backendReplicas, session_redis: options.sessionRedis && { address: options.sessionRedis } }));
	}
	const telemetry = telemetryOf(options);
	if (telemetry) spec.telemetry_config = telemetry;
	return spec;
}

/** A workload name from an image reference or a URL, when `--name` is not given. */
export function nameFrom(source: string): string {
	if (/^https?:\/\//.test(source)) {
		const url = new URL(source);
		return `${url.hostname}${url.port ? `-${url.port}` : ''}`.replace(/[^a-zA-Z0-9._-]/g, '-');
	}
	const packaged = /^(npx|uvx|go):\/\/@?(.*)$/.exec(source);
	const path = (packaged ? packaged[2]!.replace(/\/+$/, '') : source).split('@')[0]!;
	const last = path.split('/').at(-1)!;
	const colon = last.indexOf(':');
	return (colon > 0 ? last.slice(0, colon) : last).replace(/[^a-zA-Z0-9._-]/g, '-') || 'workload';
}

async function findSummary(cli: Cli, name: string): Promise<WorkloadSummary | undefined> {
	const { workloads } = await cli.call('workloads/list', { all: true });
	return workloads.find((workload) => workload.name === name);
}

/** Waits until every named workload satisfies `done` (or is gone, with `gone`). */
async function waitFor(cli: Cli, names: string[], done: (summary: WorkloadSummary | undefined) => boolean): Promise<Map<string, WorkloadSummary | undefined>> {
	const deadline = Date.now() + WAIT_MS;
	for (;;) {
		const { workloads } = await cli.call('workloads/list', { all: true });
		const found = new Map(names.map((name) => [name, workloads.find((workload) => workload.name === name)]));
		if ([...found.values()].every(done) || Date.now() > deadline) return found;
		await new Promise((resolve) => setTimeout(resolve, 200));
	}
}

async function namesOf(cli: Cli, names: string[], group: string | undefined): Promise<string[]> {
	if (!group) return names;
	const { workloads } = await cli.call('workloads/list', { all: true, group });
	return workloads.map((workload) => workload.name);
}

function describe(summary: WorkloadSummary | undefined): string {
	if (!summary) return 'gone';
	return `${summary.status}${summary.status_context ? ` (${summary.status_context})` : ''}`;
}

const FAILURE_LOG_LINES = 10;

/** Lines with their line ends, the last one only when complete. */
function splitLines(text: string): string[] {
	return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * The lines of `current` (a later window of the same log) that `previous` did not have: those
 * after `previous` when the log only grew (repeated lines, a server's start after a restart,
 * included), else those after the last place where `previous` ends. A log that was cut or
 * rotated in between is printed whole.
 */
export function linesAfter(previous: readonly string[], current: readonly string[]): string[] {
	if (!previous.length) return [...current];
	if (current.length > previous.length && previous.every((line, index) => current[index] === line)) return current.slice(previous.length);
	const overlap = Math.min(FOLLOW_OVERLAP, previous.length);
	const tail = previous.slice(-overlap);
	for (let end = current.length; end >= overlap; end--) {
		if (tail.every((line, index) => current[end - overlap + index] === line)) return current.slice(end);
	}
	return [...current];
}

/** How long ago `iso` was, as `ps` and `docker ps` say it: 45s, 12m, 3h, 2d. */
export function ageOf(iso: string | undefined, now: number): string | undefined {
	const since = iso ? Date.parse(iso) : NaN;
	if (Number.isNaN(since)) return undefined;
	const seconds = Math.max(0, Math.floor((now - since) / 1000));
	if (seconds < 60) return `${seconds}s`;
	if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
	if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
	return `${Math.floor(seconds / 86_400)}d`;
}

/**
 * What network isolation is in force for the workload's container: `network_isolation` only
 * limits traffic when a permission profile lists what may go out.
 */
export function networkOf(detail: WorkloadDetail): string {
	if (detail.url) return 'remote server (no container)';
	if (detail.image?.startsWith('group://')) return `an aggregate of ${detail.image} (no container; its members have their own)`;
	const network = detail.permission_profile?.network;
	if (network?.mode === 'none') return 'none (the container has no network)';
	const outbound = network?.outbound;
	if (detail.network_isolation === false) return 'open: the container reaches any address (network isolation is off)';
	if (!outbound) return 'open: the container reaches any address (no permission profile limits outbound traffic; give --permission-profile)';
	if (outbound.insecure_allow_all) return 'open: the container reaches any address (the permission profile allows all outbound traffic)';
	const hosts = outbound.allow_host?.length ? outbound.allow_host.join(', ') : 'no host';
	const ports = outbound.allow_port?.length ? ` on ports ${outbound.allow_port.join(', ')}` : '';
	return `isolated: outbound only to ${hosts}${ports}`;
}

/** Warns about `--tools` names the running workload does not offer. */
async function warnUnknownTools(cli: Cli, summary: WorkloadSummary, requested: readonly string[]): Promise<void> {
	if (!requested.length || summary.status !== 'running') return;
	const offered = await withMcpClient(summary, listTools).catch(() => undefined);
	if (!offered) return; // e.g. the proxy asks for a token: nothing to check against
	const names = new Set(offered.map((tool) => tool.name));
	const unknown = requested.filter((tool) => !names.has(tool));
	if (!unknown.length) return;
	process.stderr.write(
		`warning: workload ${summary.name} has no tool named ${unknown.join(', ')}; --tools keeps only ${offered.length ? offered.map((tool) => tool.name).join(', ') : 'nothing'}. ` +
			`Fix it with hangar edit ${summary.name} --tools …\n`,
	);
}

/** Tells why a workload that was just created or changed is not running, with its server's last lines; exit 1. */
async function reportNotRunning(cli: Cli, name: string, summary: WorkloadSummary | undefined): Promise<void> {
	process.exitCode = 1;
	process.stderr.write(`Workload ${name} is ${describe(summary)}\n`);
	if (summary?.remote) return;
	const logs = await cli.call('workloads/logs', { name }).catch(() => '');
	const lines = logs.trimEnd().split('\n').filter(Boolean).slice(-FAILURE_LOG_LINES);
	if (lines.length) process.stderr.write(`Last lines of its output (all of it: hangar logs ${name}):\n${lines.map((line) => `  ${line}`).join('\n')}\n`);
	process.stderr.write(`Change it with hangar edit ${name} …, or remove it with hangar rm ${name}.\n`);
}

function run(program: Command, cli: Cli): Command {
	return addSpecOptions(
		program
			.command('run')
			.description('Run an MCP server from an image, a registry server name, an npm or PyPI package or Go module, or a remote URL')
			.argument('<source>', 'image reference, registry server name, npx://PKG[@VERSION], uvx://PKG[@VERSION], go://MODULE[@VERSION], go://./dir, or http(s) URL of a remote MCP server')
			.argument('[args...]', 'arguments for the server (after --)')
			.option('--name <name>', 'name of the workload (default: from the image or URL)')
			.option('--json', 'print JSON'),
		{ builds: true },
	).action(async (given: string, args: string[], options: SpecOptions & RemoteAuthOptions & RuntimeOptions & { name?: string; json?: boolean }) => {
		const source = packageSource(given);
		const name = options.name ?? nameFrom(source);
		const runtimeConfig = runtimeConfigOf(options);
		const remote = /^https?:\/\//.test(source);
		const oauth = remoteAuthOf(options);
		if (oauth && !remote) throw new HangarError(400, '--remote-auth flags apply to a remote server URL only');
		const params = { name, ...(remote ? { url: source } : { image: source }), ...(args.length ? { cmd_arguments: args } : {}), ...(await specOf(options)), ...(oauth ? { oauth_config: oauth } : {}), ...(runtimeConfig ? { runtime_config: runtimeConfig } : {}) };
		const result = await cli.call('workloads/create', params as never);
		let summary = await findSummary(cli, name);
		// A server behind OAuth: the sign-in is part of running it.
		if (remote && summary?.status === 'unauthenticated' && !options.json) {
			const signedIn = await signInFlow(cli, name, { skipBrowser: options.remoteAuthSkipBrowser, timeout: options.remoteAuthTimeout });
			if (signedIn.status !== 'signed_in') return;
			summary = (await waitFor(cli, [name], (found) => found?.status !== 'unauthenticated')).get(name);
		}
		if (options.json) printJson({ ...result, url: summary?.url, status: summary?.status, status_context: summary?.status_context });
		else if (summary?.status === 'running') process.stdout.write(`Workload ${name} is running: ${summary.url}\n`);
		if (summary?.status !== 'running') return reportNotRunning(cli, name, summary);
		await warnUnknownTools(cli, summary, (params as { tools?: string[] }).tools ?? []);
	});
}

function listWorkloads(program: Command, cli: Cli): Command {
	return program
		.command('ls')
		.alias('list')
		.description('List workloads (running ones unless --all)')
		.option('-a, --all', 'include stopped workloads')
		.option('--group <group>', 'only this group')
		.option('--json', 'print JSON')
		.action(async (options: { all?: boolean; group?: string; json?: boolean }) => {
			const { workloads } = await cli.call('workloads/list', { all: options.all ?? false, ...(options.group ? { group: options.group } : {}) });
			if (options.json) return printJson(workloads);
			const now = Date.now();
			printTable(
				workloads,
				{
					name: (w) => w.name,
					package: (w) => w.package,
					status: (w) => w.status,
					port: (w) => w.port,
					url: (w) => w.url,
					group: (w) => w.group,
					age: (w) => ageOf(w.created_at, now),
					reason: (w) => w.status_context || undefined,
				},
				options.all ? 'No workloads.' : 'No running workloads (hangar ls --all shows stopped ones).',
			);
		});
}

function showWorkload(program: Command, cli: Cli): Command {
	return program
		.command('info')
		.description('Show a workload\'s configuration and status')
		.argument('<name>')
		.option('--json', 'print JSON')
		.action(async (name: string, options: { json?: boolean }) => {
			const [detail, summary] = await Promise.all([cli.call('workloads/get', { name }), findSummary(cli, name)]);
			// A running stdio server's processes, as its proxy counts them.
			const processes = detail.transport === 'stdio' && summary?.status === 'running' ? (await cli.call('workloads/stats', { name }).catch(() => undefined))?.server_processes : undefined;
			if (options.json) return printJson({ ...detail, status: summary?.status, status_context: summary?.status_context, url: summary?.url, network: networkOf(detail), server_processes: processes });
			const lines: Array<[string, unknown]> = [
				['name', detail.name],
				['status', describe(summary)],
				['url', summary?.url],
				['source', detail.url || detail.image],
				['transport', detail.transport],
				['processes', processes && `${processes.running} running, ${processes.in_use} in use (at most ${processes.max})`],
				['group', detail.group],
				['port', detail.proxy_port],
				['tools', detail.tools?.length ? detail.tools.join(', ') : 'all'],
				['network', networkOf(detail)],
				['args', detail.cmd_arguments?.length ? detail.cmd_arguments.join(' ') : undefined],
				// Names only: a value may be a token (hangar export prints them).
				['env', Object.keys(detail.env_vars ?? {}).join(', ') || undefined],
				['secrets', detail.secrets?.length ? detail.secrets.map((secret) => `${secret.name} as ${secret.target}`).join(', ') : undefined],
				['volumes', detail.volumes?.length ? detail.volumes.join(', ') : undefined],
				['guardrails', guardrailsSummary(detail.guardrails)],
				['webhooks', [...(detail.mutating_webhooks ?? []).map((hook) => `${hook.name} (mutating)`), ...(detail.validating_webhooks ?? []).map((hook) => `${hook.name} (validating)`)].join(', ') || undefined],
			];
			for (const [key, value] of lines) process.stdout.write(`${`${key}:`.padEnd(Math.max(11, key.length + 2))}${value ?? '-'}\n`);
		});
}

/** `secrets: requests block, answers redact, 2 allowed; personal data (email, card): requests redact, answers audit` (the defaults filled in), or off. */
function guardrailsSummary(guardrails: WorkloadDetail['guardrails']): string {
	const parts: string[] = [];
	if (guardrails?.secrets) {
		const settings = secretScanSettingsOf(guardrails.secrets);
		const allowed = settings.allow.length ? `, ${settings.allow.length} allowed` : '';
		const own = settings.hangarSecrets ? '' : ", not the user's secrets";
		parts.push(`secrets: requests ${settings.requests}, answers ${settings.responses}${allowed}${own}`);
	}
	if (guardrails?.personal_data) {
		const settings = personalDataSettingsOf(guardrails.personal_data);
		const allowed = settings.allow.length ? `, ${settings.allow.length} allowed` : '';
		parts.push(`personal data (${settings.kinds.join(', ')}): requests ${settings.requests}, answers ${settings.responses}${allowed}`);
	}
	return parts.join('; ') || 'off';
}

function exportWorkload(program: Command, cli: Cli): Command {
	return program
		.command('export')
		.description('Print a workload\'s run configuration (secrets as references)')
		.argument('<name>')
		.option('-o, --output <file>', 'write to a file instead')
		.addOption(new Option('--format <format>', 'json (the run configuration), mcpserver (ToolHive operator resources) or kubernetes (Deployment and Service)').choices(['json', 'mcpserver', 'kubernetes']).default('json'))
		.action(async (name: string, options: { output?: string; format: 'json' | 'mcpserver' | 'kubernetes' }) => {
			const config = await cli.call('workloads/export', { name });
			const text = options.format === 'json' ? `${JSON.stringify(config, null, 2)}\n` : await manifestsOf(config, options.format);
			if (options.output) writeFileSync(options.output, text, { mode: 0o600 });
			else process.stdout.write(text);
			if (refreshTokenOnlyInMemory(config)) {
				process.stderr.write(
					`warning: ${name} is signed in, but the export carries no cached_refresh_token_ref: its refresh token is held only by the running proxy (no secrets provider could store it), or the authorization server gave none; the exported workload must sign in again. ` +
						`Set up a secrets provider that can store it (hangar secret setup), sign in again (hangar signin ${name}), then export.\n`,
				);
			}
		});
}

/**
 * A sign-in whose refresh token no secrets provider stored (the proxy keeps it in memory): the
 * run configuration then has the token's expiry but no reference to the token.
 */
function refreshTokenOnlyInMemory(config: { remote_auth_config?: { cached_token_expiry?: string; cached_refresh_token_ref?: string } }): boolean {
	const auth = config.remote_auth_config;
	return Boolean(auth?.cached_token_expiry && !auth.cached_refresh_token_ref);
}

function editWorkload(program: Command, cli: Cli): Command {
	return addSpecOptions(
		program
			.command('edit')
			.description('Change a workload and recreate it; it keeps its port. Flags given replace those settings, --env adds to them')
			.argument('<name>')
			.option('--image <image>', 'new image')
			.option('--url <url>', 'new remote URL')
			.option('--json', 'print JSON'),
		{ builds: false },
	).action(async (name: string, options: SpecOptions & RemoteAuthOptions & { image?: string; url?: string; json?: boolean }) => {
		const current: WorkloadDetail = await cli.call('workloads/get', { name });
		const { registry: _registry, server: _server, ...editable } = current;
		const changes = await specOf(options);
		if (changes.env_vars) changes.env_vars = { ...(current.env_vars ?? {}), ...(changes.env_vars as Record<string, string>) };
		if (changes.oidc) changes.oidc = { ...(current.oidc ?? {}), ...(changes.oidc as object) };
		if (changes.telemetry_config) changes.telemetry_config = { ...(current.telemetry_config ?? {}), ...(changes.telemetry_config as object) };
		// The guardrails flags given change those settings; the others are kept.
		if (changes.guardrails) {
			const given = changes.guardrails as Record<'secrets' | 'personal_data', object | undefined>;
			changes.guardrails = {
				...current.guardrails,
				...(given.secrets && { secrets: { ...current.guardrails?.secrets, ...given.secrets } }),
				...(given.personal_data && { personal_data: { ...current.guardrails?.personal_data, ...given.personal_data } }),
			};
		}
		const oauth = remoteAuthOf(options);
		if (oauth && !(options.url ?? current.url)) throw new HangarError(400, '--remote-auth flags apply to a remote server URL only');
		if (oauth) changes.oauth_config = { ...(current.oauth_config ?? {}), ...oauth };
		const params = { ...editable, ...(options.image ? { image: options.image } : {}), ...(options.url ? { url: options.url } : {}), ...changes, name };
		const result = await cli.call('workloads/update', params as never);
		let summary = await findSummary(cli, name);
		if (summary?.status === 'unauthenticated' && !options.json) {
			const signedIn = await signInFlow(cli, name, { skipBrowser: options.remoteAuthSkipBrowser, timeout: options.remoteAuthTimeout });
			if (signedIn.status !== 'signed_in') return;
			summary = (await waitFor(cli, [name], (found) => found?.status !== 'unauthenticated')).get(name);
		}
		if (options.json) printJson({ ...result, url: summary?.url, status: summary?.status, status_context: summary?.status_context });
		if (summary?.status !== 'running') return reportNotRunning(cli, name, summary);
		if (!options.json) process.stdout.write(`Workload ${name} updated; it is running: ${summary.url}\n`);
		await warnUnknownTools(cli, summary, (changes.tools as string[] | undefined) ?? []);
	});
}

/** `stop`, `restart` and `rm`: one workload, several, or a group's, waited for unless --no-wait. */
function lifecycle(
	verb: 'stop' | 'restart' | 'rm',
	aliases: string[],
	description: string,
	single: 'workloads/stop' | 'workloads/restart' | 'workloads/delete',
	bulk: 'workloads/stopMany' | 'workloads/restartMany' | 'workloads/deleteMany',
	done: (summary: WorkloadSummary | undefined) => boolean,
	success: (summary: WorkloadSummary | undefined) => boolean,
): CommandFactory {
	return (program, cli) =>
		program
			.command(verb)
			.aliases(aliases)
			.description(description)
			.argument('[names...]', 'workloads')
			.option('--group <group>', 'every workload of this group')
			.option('--no-wait', 'return once the request is accepted')
			.action(async (names: string[], options: { group?: string; wait: boolean }) => {
				if (!names.length && !options.group) throw new HangarError(400, `name a workload, or give --group (hangar ${verb} --help)`);
				const targets = await namesOf(cli, names, options.group);
				if (names.length === 1 && !options.group) await cli.call(single, { name: names[0]! });
				else await cli.call(bulk, options.group ? { group: options.group } : { names });
				if (!options.wait) return;
				const outcome = await waitFor(cli, targets, done);
				let failed = false;
				for (const [name, summary] of outcome) {
					process.stdout.write(`${name}: ${describe(summary)}\n`);
					failed ||= !success(summary);
				}
				if (failed) process.exitCode = 1;
			});
}

const stopWorkloads = lifecycle(
	'stop',
	[],
	'Stop workloads (their container and proxy); they keep their configuration and port',
	'workloads/stop',
	'workloads/stopMany',
	(summary) => !summary || ['stopped', 'error'].includes(summary.status!),
	(summary) => summary?.status === 'stopped',
);

const restartWorkloads = lifecycle(
	'restart',
	['start'],
	'Restart workloads',
	'workloads/restart',
	'workloads/restartMany',
	// A remote server behind OAuth is up once its proxy serves, signed in or not (`hangar signin` then).
	(summary) => !summary || ['running', 'unhealthy', 'error', 'stopped', 'unauthenticated', 'auth_retrying'].includes(summary.status!),
	(summary) => summary?.status === 'running',
);

const deleteWorkloads = lifecycle('rm', ['delete'], 'Delete workloads', 'workloads/delete', 'workloads/deleteMany', (summary) => !summary || summary.status === 'error', (summary) => !summary);

function logs(program: Command, cli: Cli): Command {
	return program
		.command('logs')
		.description(`Print a workload's server output (its last ${LOG_LINES} lines), or its proxy's log with --proxy`)
		.argument('<name>')
		.option('--proxy', 'the proxy\'s log instead')
		.option('-n, --tail <lines>', `only the last lines (at most ${LOG_LINES})`, wholeNumber)
		.option('-f, --follow', 'keep printing new output until Ctrl-C')
		.action(async (name: string, options: { proxy?: boolean; tail?: number; follow?: boolean }) => {
			const read = async () => splitLines(await cli.call(options.proxy ? 'workloads/proxyLogs' : 'workloads/logs', { name }));
			let seen = await read();
			const first = options.tail === undefined ? seen : options.tail === 0 ? [] : seen.slice(-options.tail);
			process.stdout.write(first.join(''));
			if (!options.follow) return;
			await repeatUntilInterrupted(FOLLOW_INTERVAL_MS, async () => {
				const current = await read();
				process.stdout.write(linesAfter(seen, current).join(''));
				seen = current;
			});
		});
}

function proxy(program: Command): Command {
	return program
		.command('proxy')
		.description('Run the proxy of a workload in the foreground (Hangar starts it by itself)')
		.argument('<name>')
		.addOption(new Option('--replica <index>', 'serve as this replica, behind the workload\'s load balancer').argParser(wholeNumber).hideHelp())
		.addOption(new Option('--replica-port <port>', 'the replica\'s loopback port').argParser(port).hideHelp())
		.action(async (name: string, options: { replica?: number; replicaPort?: number }) => {
			const replica = options.replica && options.replicaPort ? { index: options.replica, port: options.replicaPort } : undefined;
			await (await import('../proxyEntry.js')).runProxyCommand(name, replica);
		});
}

/** The area's top-level commands, in `--help` order. */
export const workloadCommands: readonly CommandFactory[] = [signin, run, listWorkloads, showWorkload, exportWorkload, editWorkload, stopWorkloads, restartWorkloads, deleteWorkloads, logs, mcp, top, proxy];

/** The workload as Kubernetes resources, with the Cedar policy file it points at read from disk. */
async function manifestsOf(config: RunConfig, format: 'mcpserver' | 'kubernetes'): Promise<string> {
	const { handOver, renderYaml } = await import('../../kubernetes/manifests.js');
	const authzPolicy = config.authz_config_path ? await readFile(config.authz_config_path, 'utf8').catch(() => undefined) : undefined;
	return renderYaml(handOver(config, format, { authzPolicy }));
}
