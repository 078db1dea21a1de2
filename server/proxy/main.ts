/**
 * `hangar proxy NAME`: the per-workload proxy process. The workloads service spawns it
 * detached, with its output in `<data>/logs/NAME.log`, so it outlives the daemon, the CLI and
 * the editor that started it. It reads the workload's run configuration, connects to the
 * server (container stdio, container HTTP port, or remote URL), serves clients on the
 * workload's port, and keeps `<data>/proxies/NAME.json` up to date for the services.
 *
 * When spawned by the service it receives secret header values over its IPC channel, says
 * `ready` (or why it failed) there, and is then left alone.
 */
import { randomBytes } from 'node:crypto';
import { createEnvironment } from '../environment.js';
import type { Logger } from '../log.js';
import type { Runtime } from '../runtime/runtime.js';
import { VERSION } from '../version.js';
import { boundedReason, isServing, isSignInState, WorkloadStore, type BackendState, type ProxyRecord, type StoredWorkload } from '../runspec/store.js';
import { remotePathOf } from '../runspec/urls.js';
import { isolatesNetwork, networkNameOf } from '../runspec/network.js';
import { backendInstancesOf, instanceContainerName } from '../runspec/instances.js';
import type { LaunchMessage, ProxyReport } from '../runspec/messages.js';
import type { EgressProxy } from './net/egress.js';
import type { Backend } from './core/backend.js';
import type { HttpBackend } from './backends/http.js';
import { StdioBridge } from './backends/stdio.js';
import { aggregatedGroupOf } from '../runspec/aggregation.js';
import { composeHttp, type HttpHandler, type HttpMiddleware, type McpMiddleware } from './chain/chain.js';
import { guardMiddleware } from './fronts/guard.js';
import { DEFAULT_REQUEST_TIMEOUT_MAX_MS, DEFAULT_REQUEST_TIMEOUT_MS, timeoutMiddleware, type RequestTimeouts } from './chain/timeouts/timeout.js';
import { toolsMiddleware } from './chain/toolFilter/tools.js';
import { PinGuard } from './chain/pinning/middleware.js';
import { PinningDefault } from '../runspec/pins/policy.js';
import { PublicAddress } from './net/publicAddress.js';
import { buildSecurity } from './chain/security.js';
import { ProxyServer } from './fronts/server.js';
import { localLinkPath, STOP_PATH } from '../runspec/localLink.js';
import { STATS_PATH } from '../runspec/stats.js';
import { telemetrySettingsOf } from '../runspec/telemetryConfig.js';
import { CallStats } from './chain/telemetry/callStats.js';
import { optimiseWhenBusy } from './chain/compiler/compiler.js';
import type { UpstreamAuthenticator } from './chain/upstreamAuth/authenticator.js';
import type { Environment } from '../environment.js';
import type { Auditor } from './chain/audit/audit.js';


const CONFIGURE_WAIT_MS = 10_000;

function report(message: ProxyReport): void {
	if (process.connected) process.send?.(message, undefined, undefined, () => undefined);
}

/** Secret header values from the service (or the replicas' supervisor), when it spawned this process. */
function receiveConfiguration(): Promise<Omit<LaunchMessage, 'type'>> {
	if (!process.connected) return Promise.resolve({ headers: {} });
	return new Promise((resolve) => {
		const timer = setTimeout(() => resolve({ headers: {} }), CONFIGURE_WAIT_MS);
		process.once('message', (message: LaunchMessage) => {
			clearTimeout(timer);
			resolve(message?.type === 'configure' ? message : { headers: {} });
		});
	});
}

/** One of the proxy processes of a replicated workload, behind its load balancer (scale/replicas.ts). */
export interface ReplicaRole {
	/** From 1. */
	readonly index: number;
	/** The loopback port it serves on. */
	readonly port: number;
}

/** The headers every request to an HTTP server carries: the configured ones, and those made of secrets. */
function upstreamHeadersOf(workload: StoredWorkload, secretHeaders: Record<string, string>): Record<string, string> {
	return { ...(workload.header_forward?.add_plaintext_headers ?? {}), ...secretHeaders };
}

/**
 * The OAuth client of a remote server, unless its configuration gives a static credential: a
 * bearer token (the service passes it as the `Authorization` header) or an `Authorization`
 * header to forward; a refusal of that credential then reaches the client as the server's 401.
 * Its modules (and the secrets service's) are loaded only for such a server.
 */
async function authenticatorOf(workload: StoredWorkload, headers: Record<string, string>, environment: Environment, store: WorkloadStore): Promise<UpstreamAuthenticator | undefined> {
	if (!workload.remote_url || Object.keys(headers).some((header) => header.toLowerCase() === 'authorization')) return undefined;
	const [{ SecretsService }, { UpstreamAuthenticator }, { accessFor, policyFetch }, { TokenStore }] = await Promise.all([
		import('../secrets/service.js'),
		import('./chain/upstreamAuth/authenticator.js'),
		import('./chain/upstreamAuth/fetch.js'),
		import('./chain/upstreamAuth/tokenStore.js'),
	]);
	const serverUrl = new URL(workload.remote_url);
	const secrets = new SecretsService(environment);
	return new UpstreamAuthenticator({
		name: workload.name,
		serverUrl,
		config: workload.remote_auth_config ?? {},
		tokens: new TokenStore(workload.name, store, secrets, environment.log),
		fetch: policyFetch(accessFor(serverUrl)),
		resolveSecret: (name) => secrets.resolve(name),
		log: environment.log,
	});
}

/** The sign-in page of a remote server behind OAuth. */
async function signInRoutesOf(auth: UpstreamAuthenticator | undefined, statsToken: string): Promise<Array<readonly [string, HttpHandler]>> {
	if (!auth) return [];
	const [{ signInRoute }, { SIGNIN_PATH }] = await Promise.all([import('./chain/upstreamAuth/route.js'), import('../runspec/signin.js')]);
	return [[SIGNIN_PATH, signInRoute(auth, statsToken)]];
}

/** The server side, with the asking of a remote server for its sign-in challenge. Only the backend used is loaded. */
async function backendOf(
	workload: StoredWorkload,
	runtime: Runtime,
	headers: Record<string, string>,
	environment: Environment,
	auth: UpstreamAuthenticator | undefined,
	replica: ReplicaRole | undefined,
	store: WorkloadStore,
): Promise<{ backend: Backend; challenge?: HttpBackend['challenge'] }> {
	const { log } = environment;
	const group = aggregatedGroupOf(workload);
	if (group !== undefined) {
		const { AggregateBackend } = await import('./backends/aggregate/backend.js');
		// The secrets service is loaded only when a secret is asked for (an embeddings endpoint's API key).
		const resolveSecret = async (secret: string) => new (await import('../secrets/service.js')).SecretsService(environment).resolve(secret);
		return { backend: new AggregateBackend({ name: workload.name, group, config: workload.aggregation ?? {}, store, log, resolveSecret }) };
	}
	const container = workload.container_name!;
	if (!workload.remote_url && workload.transport === 'stdio') {
		const execMain = replica !== undefined && replica.index > 1;
		const processes = workload.scaling_config?.backend_replicas;
		return { backend: new StdioBridge({ runtime, container, log, clientInfo: { name: 'hangar-proxy', version: VERSION }, mode: workload.session_mode, execMain, processes, maxProcesses: workload.max_server_processes, idleTimeout: workload.server_process_idle_timeout }) };
	}
	const { HttpBackend } = await import('./backends/http.js');
	if (workload.remote_url) {
		const url = new URL(workload.remote_url);
		const remote = new HttpBackend({
			transport: workload.transport === 'sse' ? 'sse' : 'streamable-http',
			locate: async () => url,
			headers,
			guardAddresses: true,
			probe: false,
			log,
			auth,
		});
		return { backend: remote, challenge: () => remote.challenge() };
	}
	const path = workload.transport === 'sse' ? '/sse' : '/mcp';
	const instances = backendInstancesOf(workload);
	if (instances > 1) {
		// Several server containers (scaling_config.backend_replicas): sessions spread across them (backends/spread.ts).
		const { instanceLocator, SpreadBackend } = await import('./backends/spread.js');
		const members = Array.from({ length: instances }, (_, index) => {
			const locate = instanceLocator(runtime, instanceContainerName(workload, index + 1), workload.target_port!, path, workload.restart_policy, log);
			return new HttpBackend({ transport: workload.transport === 'sse' ? 'sse' : 'streamable-http', locate, headers, guardAddresses: false, probe: true, log });
		});
		return { backend: new SpreadBackend(members, log) };
	}
	const backend = new HttpBackend({
		transport: workload.transport === 'sse' ? 'sse' : 'streamable-http',
		locate: async () => {
			const info = await runtime.inspect(container);
			if (!info) throw new Error(`container ${container} not found`);
			if (info.state !== 'running') throw new Error(`container ${container} is ${info.state}`);
			const endpoint = await runtime.endpoint(info.id, workload.target_port!);
			return new URL(`http://${endpoint.host}:${endpoint.port}${path}`);
		},
		headers,
		guardAddresses: false,
		probe: true,
		log,
	});
	return { backend };
}

/**
 * A sign-in state change becomes the workload's recorded status too (the services announce it
 * as `workloads/didChange`), while the workload is one the proxy serves: not while it is being
 * started, stopped or removed.
 */
async function recordAuthStatus(store: WorkloadStore, name: string, state: BackendState, detail: string | undefined): Promise<void> {
	// Read and written under the record's lock: a service stopping the workload meanwhile wins.
	await store.statuses.update(name, (recorded) => {
		if (!isServing(recorded.status)) return recorded;
		const status = isSignInState(state) ? state : isSignInState(recorded.status) ? 'running' : undefined;
		if (!status || (status === recorded.status && detail === recorded.status_context)) return recorded;
		const context = status === 'running' ? 'signed in' : boundedReason(detail);
		return { ...recorded, status, status_context: context, updated_at: new Date().toISOString() };
	});
}

/** A remote server's own path, served too so its URL works through the proxy unchanged. */
function remotePaths(workload: StoredWorkload): { streamable: string[]; sse: string[] } {
	const path = remotePathOf(workload);
	if (!path) return { streamable: [], sse: [] };
	return workload.transport === 'sse' ? { streamable: [], sse: [path] } : { streamable: [path], sse: [] };
}

function requestTimeouts(workload: StoredWorkload): RequestTimeouts {
	const fromEnv = Number(process.env.HANGAR_PROXY_REQUEST_TIMEOUT);
	const idleMs = workload.request_timeout ? workload.request_timeout * 1000 : Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv * 1000 : DEFAULT_REQUEST_TIMEOUT_MS;
	const totalMs = workload.request_timeout_max ? workload.request_timeout_max * 1000 : DEFAULT_REQUEST_TIMEOUT_MAX_MS;
	return { idleMs, totalMs: Math.max(idleMs, totalMs) };
}

/** The egress side of a network-isolated workload, on its network's gateway. */
async function startEgress(workload: StoredWorkload, runtime: Runtime, log: Logger): Promise<EgressProxy> {
	const { EgressProxy } = await import('./net/egress.js');
	const gateway = await runtime.networkGateway(networkNameOf(workload));
	if (!gateway || !workload.egress_port) throw new Error(`the isolated network ${networkNameOf(workload)} is missing`);
	const outbound = workload.permission_profile?.network?.outbound;
	const egress = new EgressProxy({ allowHosts: outbound?.allow_host ?? [], allowPorts: outbound?.allow_port ?? [] }, log);
	await egress.listen(gateway, workload.egress_port);
	log.info(`egress proxy listening on ${gateway}:${workload.egress_port}`);
	return egress;
}

/** The webhooks' middleware: their TLS files read and signing secrets resolved now, so a missing one stops the start. */
async function startWebhooks(workload: StoredWorkload, environment: Environment, auditor: Auditor | undefined): Promise<McpMiddleware> {
	const [{ WebhookClient }, { webhookMiddleware }] = await Promise.all([import('./chain/webhooks/client.js'), import('./chain/webhooks/middleware.js')]);
	const resolveSecret = async (secret: string) => new (await import('../secrets/service.js')).SecretsService(environment).resolve(secret);
	const clients = (configs: StoredWorkload['validating_webhooks']) => Promise.all((configs ?? []).map((config) => WebhookClient.create(config, resolveSecret)));
	const [mutating, validating] = await Promise.all([clients(workload.mutating_webhooks), clients(workload.validating_webhooks)]);
	environment.log.info(`webhooks: ${[...mutating, ...validating].map((webhook) => webhook.name).join(', ')}`);
	return webhookMiddleware({ workload: workload.name, transport: workload.transport ?? 'streamable-http', mutating, validating, log: environment.log, auditor });
}

/**
 * Runs the proxy of workload `name`, reaching its container through `runtime`: for a
 * workload with replicas, their supervisor, unless this is one of them (`replica`).
 */
export async function runProxy(name: string, runtime: Runtime, replica?: ReplicaRole): Promise<void> {
	const environment = createEnvironment(replica ? `proxy ${name}#${replica.index}` : `proxy ${name}`);
	const { log } = environment;
	const store = new WorkloadStore(environment.paths);
	const fail = (message: string): never => {
		log.error(message);
		report({ type: 'failed', message });
		process.exit(1);
	};

	const workload = await store.configs.get(name).catch((error: Error) => fail(`cannot read the run configuration: ${error.message}`));
	if (!workload) return fail(`no workload named ${name}`);
	if (!workload.port) return fail(`workload ${name} has no port`);
	if (!replica && (workload.scaling_config?.replicas ?? 1) > 1) {
		const { superviseReplicas } = await import('./scale/replicas.js');
		return superviseReplicas(workload, environment, store, await receiveConfiguration());
	}
	const configuration = await receiveConfiguration();
	const secretHeaders = configuration.headers;

	const paths = remotePaths(workload);
	const endpoints = {
		main: paths.streamable[0] ?? paths.sse[0] ?? '/mcp',
		mcp: ['/mcp', '/sse', '/messages', ...paths.streamable, ...paths.sse],
		sse: new Set(['/sse', '/messages', ...paths.sse]),
	};
	const publicAddress = new PublicAddress(workload.trust_proxy_headers === true);
	const security = await buildSecurity(workload, endpoints, publicAddress, environment.paths, log).catch((error: Error) =>
		fail(`the security configuration is invalid: ${error.message}`),
	);
	const upstreamHeaders = upstreamHeadersOf(workload, secretHeaders);
	const auth = await authenticatorOf(workload, upstreamHeaders, environment, store);
	const group = aggregatedGroupOf(workload);
	const { backend, challenge } = await backendOf(workload, runtime, upstreamHeaders, environment, auth, replica, store);
	const sessionRedis = replica && workload.scaling_config?.session_redis;
	const sessionStore = sessionRedis?.address
		? await import('./sessions/store.js').then(({ RedisClientSessionStore }) => RedisClientSessionStore.connect({ ...sessionRedis, address: sessionRedis.address! }, name, log))
		: undefined;
	if (sessionStore) {
		report({ type: 'sessions', shared: sessionStore.available });
		sessionStore.onAvailability = (shared) => report({ type: 'sessions', shared });
	}
	// OpenTelemetry is loaded only for a workload that turns it on.
	const telemetrySettings = telemetrySettingsOf(workload.telemetry_config);
	const telemetry = telemetrySettings
		? await import('./chain/telemetry/proxyTelemetry.js')
				.then(({ startTelemetry }) => startTelemetry(telemetrySettings, { workload: name, authorizes: Boolean(workload.authz_config_path), sessions: () => server.sessionCount, httpUpstream: Boolean(workload.remote_url) || workload.transport !== 'stdio', log }))
				.catch((error: Error) => fail(`cannot start telemetry: ${error.message}`))
		: undefined;
	// The statistics time every call, and hand the timing to telemetry's metrics.
	const stats = new CallStats(Date.now, telemetry?.callEnded);
	const statsToken = configuration.statsToken ?? randomBytes(24).toString('base64url');
	// An aggregate's tools are its members', each pinned and screened by the member's own proxy:
	// pinning them again here would block every tool of a member that joins the group.
	const pinning = group !== undefined ? 'off' : await new PinningDefault(environment.paths).of(workload.tool_pinning);
	const pins = pinning === 'off' ? undefined : await PinGuard.start({ workload: name, policy: pinning, store: store.pins, log, auditor: security.auditor });
	// Guardrails (secret and personal data scanning) are loaded only for a workload that asks for them.
	const guardrails = workload.guardrails
		? await import('./chain/guardrails/guardrails.js')
				.then(({ startGuardrails }) => startGuardrails(workload.guardrails!, { workload: name, environment, auditor: security.auditor, onFinding: telemetry?.guardrailFinding }))
				.catch((error: Error) => fail(`cannot start the guardrails: ${error.message}`))
		: undefined;
	// ToolHive's webhooks, after the guardrails: a webhook is another server, and sees what they let through.
	const webhooks = workload.mutating_webhooks?.length || workload.validating_webhooks?.length
		? await startWebhooks(workload, environment, security.auditor).catch((error: Error) => fail(`cannot start the webhooks: ${error.message}`))
		: undefined;
	const mcpMiddlewares = [
		optimiseWhenBusy(),
		stats.middleware,
		telemetry?.request,
		...security.mcpMiddlewares,
		toolsMiddleware(workload.tools_filter, workload.tools_override),
		pins?.middleware,
		guardrails?.middleware,
		webhooks,
		timeoutMiddleware(requestTimeouts(workload)),
		telemetry?.upstream,
	].filter((middleware): middleware is McpMiddleware => middleware !== undefined);
	const host = workload.host ?? '127.0.0.1';
	// Clients name the workload's own address, which a replica's load balancer listens on.
	const guard = guardMiddleware(host, workload.port, { allowedOrigins: workload.allowed_origins });
	// `/metrics` names the tools callers used: behind the workload's authentication unless opted out.
	const metricsGuards = security.authentication && !workload.metrics_without_auth ? [guard, security.authentication] : [guard];
	const behind = (entries: Iterable<readonly [string, HttpHandler]>, middlewares: HttpMiddleware[]) =>
		[...entries].map(([path, handler]) => [path, composeHttp(middlewares, handler)] as const);
	const ownRoutes = [...security.routes, [STATS_PATH, stats.route(statsToken, backend.serverProcesses?.bind(backend))] as const, ...(await signInRoutesOf(auth, statsToken))];
	const routes = new Map([...behind(ownRoutes, [guard]), ...behind(telemetry?.routes ?? [], metricsGuards)]);
	// Windows has no SIGTERM: the workloads service asks over the local channel, which only the user reaches.
	let stopAsked = () => undefined as void;
	const stopRoute: HttpHandler = async ({ response }) => {
		response.writeHead(202).end();
		stopAsked();
	};
	const server: ProxyServer = new ProxyServer({
		host: replica ? '127.0.0.1' : host,
		port: replica?.port ?? workload.port,
		sessions: {
			...(replica && { idPrefix: (await import('./scale/haproxy.js')).replicaPrefix(replica.index), store: sessionStore }),
			outbound: guardrails?.outbound,
		},
		backend,
		httpMiddlewares: [guard, ...security.httpMiddlewares],
		mcpMiddlewares,
		noticeMiddlewares: guardrails ? [...security.noticeMiddlewares, guardrails.notice] : security.noticeMiddlewares,
		streamablePaths: paths.streamable,
		ssePaths: paths.sse,
		routes,
		address: publicAddress,
		// A replica is reached through its load balancer alone.
		socketPath: replica ? undefined : localLinkPath(environment.paths.data, process.pid),
		localRoutes: new Map([[STOP_PATH, stopRoute]]),
		log,
	});
	try {
		await server.listen();
	} catch (error) {
		fail(`cannot listen on ${replica ? `127.0.0.1:${replica.port}` : `${host}:${workload.port}`}: ${(error as Error).message}`);
	}
	// One egress proxy per workload: the first replica runs it.
	const egress = isolatesNetwork(workload) && (replica?.index ?? 1) === 1 ? await startEgress(workload, runtime, log).catch((error: Error) => fail(`cannot start the egress proxy: ${error.message}`)) : undefined;

	const record: ProxyRecord = {
		pid: process.pid,
		host,
		port: workload.port,
		socket: server.socketPath,
		started_at: new Date().toISOString(),
		backend: backend.state,
		backend_detail: backend.detail,
		stats_token: statsToken,
		tool_pinning: pinning,
	};
	let writes = Promise.resolve();
	const save = (state: BackendState, detail: string | undefined) => {
		if (replica) return report({ type: 'state', state, detail }); // the supervisor keeps the record
		record.backend = state;
		record.backend_detail = detail;
		const snapshot = { ...record };
		writes = writes.then(() => store.proxies.put(name, snapshot)).catch((error: Error) => log.warn(`cannot record the proxy state: ${error.message}`));
	};
	backend.onStateChange = (state, detail) => {
		log.info(`server ${state}${detail ? `: ${detail}` : ''}`);
		telemetry?.backendState(state);
		save(state, detail);
		if (auth) writes = writes.then(() => recordAuthStatus(store, name, state, detail)).catch((error: Error) => log.warn(`cannot record the status: ${error.message}`));
	};
	save(backend.state, backend.detail);
	if (pins) pins.onServedChanged = (kinds) => {
		for (const kind of kinds) server.notifyAll({ jsonrpc: '2.0', method: `notifications/${kind}/list_changed` });
	};
	const address = replica ? `127.0.0.1:${replica.port}, replica ${replica.index}` : `${host}:${workload.port}`;
	log.info(`proxy for ${name} listening on http://${address} (${workload.transport}${workload.remote_url ? ` → ${workload.remote_url}` : ''}${group ? ` → the workloads of group ${group}` : ''})`);

	let stopping = false;
	const stop = async (why: string) => {
		if (stopping) return;
		stopping = true;
		log.info(`stopping (${why})`);
		await Promise.allSettled([server.close(), backend.close(), egress?.close()]);
		pins?.close();
		guardrails?.close();
		await Promise.allSettled([security.close(), telemetry?.close(), sessionStore?.close()]);
		await writes;
		const current = replica ? undefined : await store.proxies.get(name).catch(() => undefined);
		if (current?.pid === process.pid) await store.proxies.remove(name).catch(() => undefined);
		process.exit(0);
	};
	// A failure in one exchange must not take every client's server down with it.
	process.on('unhandledRejection', (reason) => log.error(`unhandled: ${(reason as Error)?.stack ?? reason}`));
	process.on('SIGTERM', () => void stop('SIGTERM'));
	process.on('SIGINT', () => void stop('SIGINT'));
	stopAsked = () => void stop('asked over its local channel');
	// A replica ends with its supervisor; a proxy the service spawned is let go once ready.
	process.on('disconnect', () => (replica ? void stop('its supervisor is gone') : undefined));

	void backend.start().then(async () => {
		await auth?.start(challenge).catch((error: Error) => log.warn(`cannot resume the sign-in: ${error.message}`));
		await writes;
		report({ type: 'ready', port: workload.port! });
	});
}
