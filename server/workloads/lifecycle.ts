/**
 * The steps of a workload's life, each run by the caller under the workload's lock: start
 * (container, then proxy, waiting until the server answers or fails), stop, restart, delete,
 * and putting a workload back after a failed update. Every step records its status.
 */
import { readFile } from 'node:fs/promises';
import { HangarError } from '../../protocol/errors.js';
import type { OperationContext } from '../context.js';
import type { Logger } from '../log.js';
import type { PackagePlanner } from '../packages/builder.js';
import type { ContainerInfo, Runtime } from '../runtime/runtime.js';
import { decodeSecret } from './secretReference.js';
import { isolatesNetwork, networkNameOf } from '../runspec/network.js';
import { containerSpecOf, instanceLabels, LABELS, resolveSecretEnv, type Egress } from './container.js';
import { backendInstancesOf, instanceContainerName } from '../runspec/instances.js';
import type { ClientConfigSync, SecretResolver } from './dependencies.js';
import { isPortFree, pickFreePort } from './portAllocator.js';
import type { PortPolicy } from './portPolicy.js';
import { launchProxy, stopProxy } from './proxyProcess.js';
import type { WorkloadQueue } from './queue.js';
import { unreachableReason } from './reachability.js';
import { pullNextStep } from './readiness.js';
import type { StatusFeed } from './statusFeed.js';
import { isSignInState, type StoredWorkload, type WorkloadStore } from '../runspec/store.js';

const STOP_GRACE_SECONDS = 10;
/** A server that failed to start has nothing to finish. */
const FAILED_STOP_GRACE_SECONDS = 1;
/** How often a starting container is checked for an early exit. */
const WATCH_INTERVAL_MS = 300;
/**
 * A stdio server is served once its container is attached, before it has read a line: one that
 * exits on its arguments (once its runtime has started, a second or more on a loaded machine)
 * would be taken for started. Its container's first this many ms are waited out, watched.
 */
const STDIO_SETTLE_MS = 1_500;

/** The secret values a configuration needs, resolved before anything starts. */
export interface ResolvedSecrets {
	readonly env: Record<string, string>;
	readonly headers: Record<string, string>;
}

/** The container of a starting workload exited or restarted before its server answered. */
class ServerExited extends Error {}

export interface LifecycleOptions {
	readonly store: WorkloadStore;
	readonly runtime: Runtime;
	readonly secrets: SecretResolver;
	readonly clients: ClientConfigSync;
	readonly statuses: StatusFeed;
	readonly ports: PortPolicy;
	readonly queue: WorkloadQueue;
	readonly log: Logger;
	/** How long a new proxy may take to reach its server before the workload is `unhealthy`. */
	readonly readyTimeoutMs: number;
	/** Builds the images of package references. */
	readonly packages: PackagePlanner;
	/** The `hangar` script that runs proxies (default: this build's). */
	readonly proxyEntry?: string;
	/** Environment of proxies; it must lead to the same state folders (default: this process's). */
	readonly env?: NodeJS.ProcessEnv;
}

export class WorkloadLifecycle {
	private readonly store: WorkloadStore;
	private readonly runtime: Runtime;
	private readonly statuses: StatusFeed;
	private readonly ports: PortPolicy;
	private readonly queue: WorkloadQueue;
	private readonly log: Logger;
	private readonly readyTimeoutMs: number;

	constructor(private readonly options: LifecycleOptions) {
		this.store = options.store;
		this.runtime = options.runtime;
		this.statuses = options.statuses;
		this.ports = options.ports;
		this.queue = options.queue;
		this.log = options.log;
		this.readyTimeoutMs = options.readyTimeoutMs;
	}

	/** Stops the proxy and removes the container and network of a configuration. */
	async dismantle(config: StoredWorkload): Promise<void> {
		await stopProxy(this.store, config.name);
		if (config.container_name) {
			await this.removeContainers(config);
			await this.runtime.removeNetwork(networkNameOf(config));
		}
	}

	/**
	 * The names of every container of a workload: its server instances (`backend_replicas`) as
	 * configured, and any the engine still holds under its labels (from a larger count before).
	 */
	private async containerNames(config: StoredWorkload, minimum = 1): Promise<string[]> {
		const names = new Set<string>();
		for (let replica = 1; replica <= Math.max(minimum, backendInstancesOf(config)); replica++) names.add(instanceContainerName(config, replica));
		const labelled = await this.runtime.list({ ...instanceLabels(this.store.instance), [LABELS.name]: config.name });
		for (const container of labelled) names.add(container.name);
		return [...names];
	}

	private async removeContainers(config: StoredWorkload): Promise<void> {
		for (const name of await this.containerNames(config)) await this.runtime.remove(name);
	}

	private async stopContainers(config: StoredWorkload, graceSeconds: number): Promise<void> {
		await Promise.all((await this.containerNames(config)).map((name) => this.runtime.stop(name, graceSeconds)));
	}

	/** Puts a workload back as `previous` after its update failed. */
	async restore(previous: StoredWorkload, failed: StoredWorkload): Promise<void> {
		this.log.warn(`update of workload ${previous.name} failed; starting its previous configuration again`);
		try {
			await this.dismantle(failed);
			await this.store.configs.update(previous.name, () => previous);
			await this.start(previous, { recreate: true });
		} catch (error) {
			this.log.error(`restoring workload ${previous.name}: ${(error as Error).message}`);
		}
	}

	/**
	 * The workload's image: a package reference's is built once (its tag says what went into it),
	 * any other is pulled unless the engine has it; either ends at once when cancelled.
	 */
	async ensureWorkloadImage(config: StoredWorkload, context: OperationContext): Promise<void> {
		if (!config.built_image) return this.ensureImage(config.image!, config.registry_server_name !== undefined, context);
		// Planned again from the pinned reference: no look-up, and the same tag unless the scheme's defaults changed.
		const plan = await this.options.packages.plan(config.image!, config.runtime_config, context.signal);
		if (plan.tag !== config.built_image) {
			config.built_image = plan.tag;
			await this.store.configs.update(config.name, (stored) => ({ ...stored, built_image: plan.tag }));
		}
		if (await this.runtime.imageExists(plan.tag)) return;
		await this.statuses.set(config.name, 'starting', `building image ${plan.tag} for ${plan.pinned}`);
		await this.options.packages.ensure(plan, context.progress, context.signal);
	}

	/** Pulls an image unless the engine has it; the pull ends at once when cancelled. */
	async ensureImage(image: string, fromRegistry: boolean, context: OperationContext): Promise<void> {
		if (await this.runtime.imageExists(image)) return;
		try {
			await this.runtime.pullImage(image, context.progress, context.signal);
		} catch (error) {
			// A bare word is more often a mistyped server name than an image on Docker Hub.
			if (error instanceof HangarError && error.code === 'image_not_found' && !fromRegistry && !image.includes('/')) {
				throw HangarError.notFound(`${image} is not a server in the registry (hangar registry servers lists them), and as an image: ${error.message}`, 'image_not_found');
			}
			if (error instanceof HangarError && error.code === 'image_not_found') {
				throw new HangarError(error.status, `${error.message}\nnext: ${pullNextStep(image)}`, error.code, { cause: error });
			}
			throw error;
		}
	}

	/**
	 * Starts the container (created afresh with `recreate`) and the proxy. Returns why the
	 * server did not come up when it did not (the workload is then in `error`); throws when a
	 * step fails.
	 */
	async start(
		config: StoredWorkload,
		options: { recreate: boolean; resolved?: ResolvedSecrets },
		context?: OperationContext,
	): Promise<{ failed?: string }> {
		const { name } = config;
		try {
			await this.statuses.set(name, 'starting', options.recreate ? undefined : 'restarting');
			const { env, headers } = options.resolved ?? (await this.resolveSecrets(config));
			if (context) checkCancelled(context, name);
			if (config.container_name) {
				context?.progress.report('starting the container');
				await this.ensureContainer(config, env, options.recreate);
			}
			await stopProxy(this.store, name);
			if (context) checkCancelled(context, name);
			context?.progress.report(config.remote_url ? `reaching ${config.remote_url}` : 'starting the proxy');
			return await this.launch(config, headers, (moved) => (moved === undefined ? undefined : `port ${moved} was taken; moved to ${config.port}`), context?.signal);
		} catch (error) {
			await this.statuses.set(name, 'error', (error as Error).message);
			throw error;
		} finally {
			this.syncClients();
		}
	}

	/** Every secret value a configuration needs (a missing one fails with the resolver's 404). */
	async resolveSecrets(config: StoredWorkload): Promise<ResolvedSecrets> {
		return { env: await resolveSecretEnv(config, this.options.secrets), headers: await this.secretHeadersOf(config) };
	}

	/**
	 * Values of the headers sent upstream from secrets (and a remote server's bearer token); the
	 * proxy receives them over IPC, never on disk.
	 */
	private async secretHeadersOf(config: StoredWorkload): Promise<Record<string, string>> {
		const headers: Record<string, string> = {};
		for (const [header, secret] of Object.entries(config.header_forward?.add_headers_from_secret ?? {})) {
			headers[header] = await this.options.secrets.resolve(secret);
		}
		const bearer = config.remote_auth_config?.bearer_token;
		if (bearer) headers.Authorization = `Bearer ${await this.options.secrets.resolve(decodeSecret(bearer).name)}`;
		const bearerFile = config.remote_auth_config?.bearer_token_file;
		if (bearerFile && !bearer) {
			const token = (await readFile(bearerFile, 'utf8').catch((error: Error) => {
				throw HangarError.badRequest(`cannot read the bearer token file ${bearerFile}: ${error.message}`);
			})).trim();
			headers.Authorization = `Bearer ${token}`;
		}
		return headers;
	}

	private async ensureContainer(config: StoredWorkload, env: Record<string, string>, recreate: boolean): Promise<void> {
		const instances = backendInstancesOf(config);
		const wanted = new Set(Array.from({ length: instances }, (_, index) => instanceContainerName(config, index + 1)));
		// Instances beyond the count (it was lowered) go; each of the others runs.
		for (const name of await this.containerNames(config)) if (!wanted.has(name)) await this.runtime.remove(name);
		let egress: Egress | undefined;
		for (let replica = 1; replica <= instances; replica++) {
			const existing = await this.runtime.inspect(instanceContainerName(config, replica));
			if (existing && !recreate) {
				if (existing.state !== 'running') await this.runtime.start(existing.id);
				continue;
			}
			if (existing) await this.runtime.remove(existing.id);
			if (isolatesNetwork(config)) egress ??= await this.prepareEgress(config);
			const id = await this.runtime.create(containerSpecOf(config, this.store.instance, env, egress, replica));
			try {
				await this.runtime.start(id);
			} catch (error) {
				await this.runtime.remove(id).catch(() => undefined);
				throw error;
			}
		}
	}

	/** The isolated network of the workload, and the port its proxy's egress side listens on. */
	private async prepareEgress(config: StoredWorkload): Promise<Egress> {
		const { gateway } = await this.runtime.createIsolatedNetwork(networkNameOf(config), instanceLabels(this.store.instance));
		if (!config.egress_port || !(await isPortFree(config.egress_port, gateway))) {
			config.egress_port = await pickFreePort(gateway, new Set());
			await this.store.configs.update(config.name, (stored) => ({ ...stored, egress_port: config.egress_port }));
		}
		return { gateway, port: config.egress_port };
	}

	/**
	 * Launches the proxy on the workload's port (moved first if another program took it) and
	 * records `running`, with the context `running` gives for the old port when it moved, or
	 * `unhealthy` when the server does not answer in time. A remote server is probed first; a
	 * container that exits or restarts before its server answers ends the wait at once. Either
	 * failure is recorded as `error` with the reason, and returned.
	 */
	private async launch(
		config: StoredWorkload,
		secretHeaders: Record<string, string>,
		running: (moved: number | undefined) => string | undefined,
		signal?: AbortSignal,
	): Promise<{ failed?: string }> {
		if (config.remote_url) {
			const unreachable = await unreachableReason(config.remote_url, signal);
			signal?.throwIfAborted();
			if (unreachable) return this.fail(config, unreachable);
		}
		const moved = await this.ports.keep(config);
		const watch = new AbortController();
		const cancel = () => watch.abort(HangarError.cancelled(`work on workload ${config.name}`));
		signal?.addEventListener('abort', cancel, { once: true });
		if (signal?.aborted) cancel(); // cancelled before the listener was there
		const started = config.container_name ? await this.runtime.inspect(config.container_name) : undefined;
		const watching = started ? this.watchContainer(config, started, watch) : undefined;
		try {
			const launched = await launchProxy(this.store, config.name, secretHeaders, this.readyTimeoutMs, this.proxyEnv(), this.options.proxyEntry, watch.signal);
			if (started && launched.ready && config.transport === 'stdio') await settled(started, watch.signal);
			// The server exited meanwhile, or the work was cancelled.
			if (watch.signal.aborted) throw watch.signal.reason;
			const exited = started && (await this.exitOf(config, started));
			if (exited) throw exited;
			if (launched.ready) {
				// A remote server behind OAuth may need a sign-in first: its proxy serves, and says so.
				const proxy = config.remote_url ? await this.store.proxies.get(config.name).catch(() => undefined) : undefined;
				if (isSignInState(proxy?.backend)) await this.statuses.set(config.name, proxy.backend, proxy.backend_detail);
				else await this.statuses.set(config.name, 'running', running(moved));
			}
			else await this.statuses.set(config.name, 'unhealthy', this.silenceReason(config));
			return {};
		} catch (error) {
			if (!(error instanceof ServerExited)) throw error;
			await stopProxy(this.store, config.name);
			// Stopped, not removed: its output stays for `hangar logs`, and a restart policy no longer loops it.
			await this.stopContainers(config, FAILED_STOP_GRACE_SECONDS).catch(() => undefined);
			return this.fail(config, error.message);
		} finally {
			signal?.removeEventListener('abort', cancel);
			watch.abort();
			await watching;
		}
	}

	private async fail(config: StoredWorkload, reason: string): Promise<{ failed: string }> {
		await this.statuses.set(config.name, 'error', reason);
		return { failed: reason };
	}

	/** Aborts `watch` with a `ServerExited` once the container exits or restarts. */
	private async watchContainer(config: StoredWorkload, started: ContainerInfo, watch: AbortController): Promise<void> {
		while (!watch.signal.aborted) {
			await new Promise((resolve) => setTimeout(resolve, WATCH_INTERVAL_MS));
			if (watch.signal.aborted) return;
			const exited = await this.exitOf(config, started).catch(() => undefined);
			if (exited) watch.abort(exited);
		}
	}

	/** A `ServerExited` when the container is no longer the one started, running. */
	private async exitOf(config: StoredWorkload, started: ContainerInfo): Promise<ServerExited | undefined> {
		const now = await this.runtime.inspect(config.container_name!);
		if (now && now.state === 'running' && now.startedAt === started.startedAt) return undefined;
		// A restarted container that runs again no longer tells the code its server exited with.
		const code = now && now.state !== 'running' ? now.exitCode : undefined;
		let reason = now
			? `the server exited${code === undefined ? '' : ` with code ${code}`}${now.state === 'exited' || now.state === 'dead' ? '' : ' and its container restarted'} before it answered`
			: 'the container vanished before its server answered';
		// A stdio server reads requests from its input; started as an HTTP server its input is closed, and it ends at once.
		if (now && config.transport !== 'stdio' && !code) reason += `; if ${config.image} is a stdio server, run it with transport stdio (--transport stdio)`;
		return new ServerExited(`${reason}; its output: hangar logs ${config.name}`);
	}

	/** Why a server that still runs has not answered. */
	private silenceReason(config: StoredWorkload): string {
		const seconds = this.readyTimeoutMs / 1000;
		if (config.remote_url || config.transport === 'stdio') return `the server did not answer within ${seconds} s`;
		return `the server did not answer over ${config.transport} on container port ${config.target_port} within ${seconds} s; if ${config.image} is a stdio server, run it with transport stdio (--transport stdio)`;
	}

	async stop(config: StoredWorkload): Promise<void> {
		try {
			await this.statuses.set(config.name, 'stopping');
			await stopProxy(this.store, config.name);
			if (config.container_name) await this.stopContainers(config, STOP_GRACE_SECONDS);
			await this.statuses.set(config.name, 'stopped');
		} catch (error) {
			await this.statuses.set(config.name, 'error', `stop failed: ${(error as Error).message}`);
			throw error;
		} finally {
			this.syncClients();
		}
	}

	async restart(config: StoredWorkload): Promise<void> {
		await this.statuses.set(config.name, 'starting', 'restarting');
		await stopProxy(this.store, config.name);
		if (config.container_name) await this.stopContainers(config, STOP_GRACE_SECONDS);
		await this.start(config, { recreate: false });
	}

	async delete(config: StoredWorkload): Promise<void> {
		try {
			await this.statuses.set(config.name, 'removing');
			await this.statuses.whileDeleting(config.name, () => this.purge(config));
		} catch (error) {
			await this.statuses.set(config.name, 'error', `delete failed: ${(error as Error).message}`);
			throw error;
		} finally {
			this.syncClients();
		}
	}

	/**
	 * Removes the proxy, the container and every record of a workload. A failed create cleans up
	 * with `bestEffort`: its records go even when the runtime cannot be reached (it then holds
	 * nothing of the workload); a delete keeps them until the container is gone.
	 */
	async purge(config: StoredWorkload, options: { bestEffort?: boolean } = {}): Promise<void> {
		await stopProxy(this.store, config.name);
		if (config.container_name) {
			try {
				await this.removeContainers(config);
				await this.runtime.removeNetwork(networkNameOf(config));
			} catch (error) {
				if (!options.bestEffort) throw error;
				this.log.warn(`cleaning up ${config.name}: ${(error as Error).message}`);
			}
		}
		await this.store.configs.delete(config.name);
		await this.store.forgetRuntimeState(config.name);
		await this.store.pins.remove(config.name);
		// A remote server's sign-in (proxy/chain/upstreamAuth/) leaves a refresh token and perhaps a client secret behind.
		const auth = config.remote_auth_config;
		for (const ref of [auth?.cached_refresh_token_ref, auth?.cached_client_secret_ref]) {
			if (ref) await this.options.secrets.delete?.(ref).catch((error: Error) => this.log.warn(`cannot delete the secret ${ref}: ${error.message}`));
		}
	}

	async relaunchProxy(config: StoredWorkload): Promise<void> {
		try {
			const secretHeaders = await this.secretHeadersOf(config);
			await this.launch(config, secretHeaders, (moved) => (moved === undefined ? 'proxy restarted' : `proxy restarted; port ${moved} was taken, moved to ${config.port}`));
		} catch (error) {
			await this.statuses.set(config.name, 'error', (error as Error).message);
		} finally {
			this.syncClients();
		}
	}

	/** Proxies log at `info` into their own files unless told otherwise. */
	private proxyEnv(): NodeJS.ProcessEnv {
		const env = this.options.env ?? process.env;
		return { ...env, HANGAR_LOG: env.HANGAR_PROXY_LOG ?? 'info' };
	}

	/** Brings registered clients up to date, in the background. */
	syncClients(): void {
		this.queue.track(this.options.clients.syncWorkloads().catch((error: Error) => this.log.warn(`client configuration sync failed: ${error.message}`)));
	}
}

export function checkCancelled(context: OperationContext, name: string): void {
	if (context.signal.aborted) throw HangarError.cancelled(`work on workload ${name}`);
}

/** Resolves once the container started at `started` has run STDIO_SETTLE_MS, or `signal` aborts. */
function settled(started: ContainerInfo, signal: AbortSignal): Promise<void> {
	const since = Date.parse(started.startedAt ?? '');
	const left = Number.isNaN(since) ? STDIO_SETTLE_MS : since + STDIO_SETTLE_MS - Date.now();
	if (left <= 0 || signal.aborted) return Promise.resolve();
	return new Promise((resolve) => {
		const timer = setTimeout(resolve, left);
		signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
	});
}
