/**
 * The security middleware a workload's run configuration asks for, in the chain's order:
 * audit → authentication → (MCP parsing) → authorization → rate limit. A workload that asks
 * for none gets none, and none of their modules (nor jose, Cedar or the Redis client) is
 * loaded for it: each feature's folder is imported when configured. A workload
 * whose server speaks HTTP gets one more: an upstream 401/403 passed on as such.
 *
 * Building fails (and the proxy refuses to start) when a configuration is wrong, with a
 * message that names the file, field or policy at fault.
 */
import { join } from 'node:path';
import type { Logger } from '../../log.js';
import type { HangarPaths } from '../../store/paths.js';
import type { StoredWorkload } from '../../runspec/store.js';
import type { HttpHandler, HttpMiddleware, McpMiddleware, NoticeMiddleware } from './chain.js';
import type { PublicAddress } from '../net/publicAddress.js';
import type { Auditor } from './audit/audit.js';
import type { BucketStore } from './rateLimits/tokenBuckets.js';
import { aggregatedGroupOf } from '../../runspec/aggregation.js';

export interface ProxySecurity {
	/** HTTP middleware, after the request guard. */
	readonly httpMiddlewares: readonly HttpMiddleware[];
	/** MCP middleware, before tool filtering and the timeout. */
	readonly mcpMiddlewares: readonly McpMiddleware[];
	/** Notice middleware (notifications, the client's responses), in the same order. */
	readonly noticeMiddlewares: readonly NoticeMiddleware[];
	/** Routes outside the chain (protected-resource metadata). */
	readonly routes: ReadonlyMap<string, HttpHandler>;
	/** The workload's authentication, for routes outside the MCP endpoint that need it too (`/metrics`). */
	readonly authentication?: HttpMiddleware;
	/** The audit log's writer, when the workload keeps one (for other middleware's events). */
	readonly auditor?: Auditor;
	close(): Promise<void>;
}

export interface Endpoints {
	/** The workload's main MCP path (`/mcp`, or a remote server's own path). */
	readonly main: string;
	/** Every path the proxy serves MCP on. */
	readonly mcp: readonly string[];
	/** The paths of the legacy SSE transport: its streams and its `/messages` endpoint. */
	readonly sse: ReadonlySet<string>;
}

/** Where a workload's audit events go unless its `audit_config.logFile` says otherwise. */
export function defaultAuditFile(paths: HangarPaths, name: string): string {
	return join(paths.data, 'logs', `${name}.audit.ndjson`);
}

export function isAuditEnabled(workload: StoredWorkload): boolean {
	return workload.audit_config !== undefined && workload.audit_config.enabled !== false;
}

export async function buildSecurity(workload: StoredWorkload, endpoints: Endpoints, address: PublicAddress, paths: HangarPaths, log: Logger): Promise<ProxySecurity> {
	const httpMiddlewares: HttpMiddleware[] = [];
	const mcpMiddlewares: McpMiddleware[] = [];
	const noticeMiddlewares: NoticeMiddleware[] = [];
	const closers: Array<() => Promise<void>> = [];
	let routes = new Map<string, HttpHandler>();
	let auditor: Auditor | undefined;
	let authentication: HttpMiddleware | undefined;

	if (isAuditEnabled(workload)) {
		const config = workload.audit_config!;
		const [{ Auditor }, { AuditLog }] = await Promise.all([import('./audit/audit.js'), import('./audit/auditLog.js')]);
		const auditLog = new AuditLog(config.logFile || defaultAuditFile(paths, workload.name), config, log);
		auditor = new Auditor(auditLog, config, config.component || workload.name, endpoints.sse);
		httpMiddlewares.push(auditor.http);
		mcpMiddlewares.push(auditor.mcp);
		noticeMiddlewares.push(auditor.notice);
		closers.push(() => auditLog.close());
		log.info(`audit events go to ${auditLog.file}`);
	}

	const oidc = workload.oidc_config;
	if (oidc?.issuer) {
		const [{ TokenValidator }, { authenticationMiddleware }] = await Promise.all([import('./authentication/tokenValidator.js'), import('./authentication/authentication.js')]);
		const validator = await TokenValidator.create(oidc);
		authentication = authenticationMiddleware(validator, oidc.resourceURL || undefined, address);
		httpMiddlewares.push(authentication);
		log.info(`clients must present tokens of ${oidc.issuer} for audience ${oidc.audience}`);
	}

	// An HTTP server may refuse the proxy (401/403): the client is told so, and where the metadata is.
	const httpUpstream = Boolean(workload.remote_url) || workload.transport !== 'stdio';
	if (httpUpstream) {
		const { upstreamAuthMiddleware } = await import('./upstreamAuth/middleware.js');
		mcpMiddlewares.push(upstreamAuthMiddleware(oidc?.resourceURL || undefined, address));
	}
	if (oidc?.issuer || httpUpstream) {
		const { protectedResourceRoutes } = await import('./authentication/protectedResource.js');
		routes = protectedResourceRoutes(oidc?.issuer ? oidc : undefined, endpoints.main, endpoints.mcp, address);
	}

	if (workload.authz_config_path) {
		const [{ loadAuthzConfig }, { CedarAuthorizer }, { authorizationMiddleware }] = await Promise.all([
			import('../../runspec/authzConfig.js'),
			import('./authorization/cedarAuthorizer.js'),
			import('./authorization/authorization.js'),
		]);
		const config = await loadAuthzConfig(workload.authz_config_path);
		const authorizer = await CedarAuthorizer.create(config, workload.name);
		const authorization = authorizationMiddleware(authorizer, log, { search: aggregatedGroupOf(workload) !== undefined && workload.aggregation?.mode === 'search' });
		mcpMiddlewares.push(authorization.mcp);
		noticeMiddlewares.push(authorization.notice);
		log.info(`requests are authorized by ${config.policies.length} Cedar policies from ${workload.authz_config_path}`);
	}

	if (workload.rate_limit_config) {
		const [{ rateLimitsOf }, { rateLimitMiddleware }, { LocalBuckets }] = await Promise.all([
			import('../../runspec/rateLimitConfig.js'),
			import('./rateLimits/rateLimit.js'),
			import('./rateLimits/tokenBuckets.js'),
		]);
		const limits = rateLimitsOf(workload.rate_limit_config);
		const redis = workload.scaling_config?.session_redis;
		const buckets: BucketStore = redis?.address
			? await import('./rateLimits/redisBuckets.js').then(({ RedisBuckets }) => RedisBuckets.connect({ ...redis, address: redis.address! }, log))
			: new LocalBuckets();
		// Replicas of a workload (same name and namespace, same Redis) share its buckets.
		const prefix = `${redis?.key_prefix ?? 'hangar:'}rl:{${workload.rate_limit_namespace || 'default'}:${workload.name}}`;
		const rateLimit = rateLimitMiddleware(limits, buckets, prefix);
		mcpMiddlewares.push(rateLimit.mcp);
		noticeMiddlewares.push(rateLimit.notice);
		closers.push(() => buckets.close());
	}

	return {
		httpMiddlewares,
		mcpMiddlewares,
		noticeMiddlewares,
		routes,
		auditor,
		authentication,
		close: async () => {
			await Promise.allSettled(closers.map((close) => close()));
		},
	};
}
