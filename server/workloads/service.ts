/**
 * The workloads service: creates workloads (run configuration, image, container, proxy),
 * reports them, and stops, restarts, updates and deletes them. Stop, restart and delete
 * return at once and finish in the background, as the spec's 202 says.
 *
 * Every lifecycle change of one workload runs under its lock (in-process queue plus a
 * cross-process file lock), so daemons, `hangar serve` and the CLI never interleave two
 * changes of the same workload. Every status change is recorded and sent as
 * `workloads/didChange`.
 */
import { watch } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { HangarError } from '../../protocol/errors.js';
import {
	WorkloadsDidChange,
	type WorkloadDetail,
	type WorkloadStatus,
	type WorkloadSummary,
} from '../../protocol/protocol.workloads.js';
import type { OperationContext } from '../context.js';
import type { Environment } from '../environment.js';
import { DEFAULT_GROUP } from '../groups/store.js';
import type { ContainerInfo, Runtime } from '../runtime/runtime.js';
import { buildRunConfig, decodeSecret, detailOf, exportedRunConfig, type CreateRequest, type UpdateRequest } from './config.js';
import { isolatesNetwork, networkNameOf } from '../runspec/network.js';
import { containerSpecOf, instanceLabels, LABELS, resolveSecretEnv, type Egress } from './container.js';
import type { ClientConfigSync, SecretResolver, ServerCatalog } from './dependencies.js';
import { isPortFree, pickFreePort } from './portAllocator.js';
import { launchProxy, liveProxy, stopProxy } from './proxyProcess.js';
import { CONTAINER_GONE, effectiveStatus, isActive, type EffectiveStatus, type Observed } from './status.js';
import { WorkloadStore, type StoredWorkload } from '../runspec/store.js';
import { clientTransportOf, clientUrlOf, type ClientTransport } from '../runspec/urls.js';

const LOG_LINES = 1000;
const STOP_GRACE_SECONDS = 10;
/** Workloads a bulk operation or reconcile works on at once. */
const CONCURRENCY = 4;
const TRANSITIONAL = new Set<WorkloadStatus>(['starting', 'stopping', 'removing']);
const REMOVED = 'removed';
/** A `starting` status younger than this belongs to work still in progress. */
const IN_PROGRESS_MS = 15 * 60_000;

export interface GroupDirectory {
	exists(name: string): Promise<boolean>;
}

export interface WorkloadServiceOptions {
	readonly environment: Environment;
	readonly runtime: Runtime;
	readonly catalog: ServerCatalog;
	readonly secrets: SecretResolver;
	readonly clients: ClientConfigSync;
	readonly groups: GroupDirectory;
	/** How long a new proxy may take to reach its server before the workload is `unhealthy`. */
	readonly readyTimeoutMs?: number;
	/** The `hangar` script that runs proxies (default: this build's). */
	readonly proxyEntry?: string;
	/** Environment of proxies; it must lead to the same state folders (default: this process's). */
	readonly env?: NodeJS.ProcessEnv;
}

/** A running workload as registered clients reference it. */
export interface WorkloadEndpoint {
	readonly name: string;
	readonly group: string;
	readonly url: string;
	readonly transport: ClientTransport;
}

export class WorkloadService {
	readonly store: WorkloadStore;
	private readonly runtime: Runtime;
	private readonly queues = new Map<string, Promise<unknown>>();
	private readonly tasks = new Set<Promise<void>>();
	private readonly readyTimeoutMs: number;
	/** Workload → `updated_at` of the last status reported as `workloads/didChange`. */
	private readonly notified = new Map<string, string>();
	/** Workloads this process is deleting: it reports their removal itself, once purged. */
	private readonly deleting = new Set<string>();

	constructor(private readonly options: WorkloadServiceOptions) {
		this.store = new WorkloadStore(options.environment.paths);
		this.runtime = options.runtime;
		this.readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
	}

	private get log() {
		return this.options.environment.log;
	}

	// --- Create and update ------------------------------------------------------------------

	async create(request: CreateRequest, context: OperationContext): Promise<{ name: string; port: number }> {
		const { name } = request;
		if (await this.store.configs.get(name)) throw this.duplicate(name);
		const config = await buildRunConfig(request, this.buildOptions());
		config.port = await this.choosePort(config, request.proxy_port, undefined);
		if (!(await this.store.configs.create(name, config))) throw this.duplicate(name);
		context.progress.begin(`Creating workload ${name}`);
		try {
			await this.setStatus(name, 'starting', 'creating');
			if (config.image) await this.ensureImage(config.image, context);
			checkCancelled(context, name);
			await this.exclusive(name, () => this.startWorkload(config, { recreate: true }, context));
			context.progress.end(`${name} is listening on port ${config.port}`);
			return { name, port: config.port };
		} catch (error) {
			context.progress.end(`${name} could not be created`);
			await this.exclusive(name, () => this.purge(config, { bestEffort: true })).catch((purgeError: Error) => this.log.error(`cleaning up ${name}: ${purgeError.message}`));
			throw error;
		}
	}

	/** Recreates a workload with a new configuration, keeping its port unless another is asked for. */
	async update(request: UpdateRequest, context: OperationContext): Promise<{ name: string; port: number }> {
		const previous = await this.require(request.name);
		const config = await buildRunConfig(request, this.buildOptions(previous));
		config.port = await this.choosePort(config, request.proxy_port, previous);
		context.progress.begin(`Updating workload ${request.name}`);
		try {
			if (config.image) await this.ensureImage(config.image, context);
			checkCancelled(context, request.name);
			await this.exclusive(request.name, async () => {
				await this.setStatus(request.name, 'starting', 'updating');
				await stopProxy(this.store, request.name);
				if (previous.container_name) {
					await this.runtime.remove(previous.container_name);
					await this.runtime.removeNetwork(networkNameOf(previous));
				}
				await this.store.configs.update(request.name, () => config);
				await this.startWorkload(config, { recreate: true }, context);
			});
		} finally {
			context.progress.end();
		}
		return { name: request.name, port: config.port! };
	}

	private buildOptions(previous?: StoredWorkload) {
		return {
			catalog: this.options.catalog,
			groupExists: (group: string) => this.options.groups.exists(group),
			previous,
			now: new Date().toISOString(),
			instance: this.store.instance,
		};
	}

	private duplicate(name: string): HangarError {
		return HangarError.conflict(`workload with name ${name} already exists`, 'workload_exists');
	}

	/**
	 * The proxy port: the one asked for (400 when taken), else the workload's current one, else
	 * a free port no other workload keeps.
	 */
	private async choosePort(config: StoredWorkload, requested: number | undefined, previous: StoredWorkload | undefined): Promise<number> {
		const host = config.host ?? '127.0.0.1';
		const others = (await this.store.configs.list()).filter((other) => other.name !== config.name);
		if (requested) {
			const holder = others.find((other) => other.port === requested);
			if (holder) throw HangarError.badRequest(`invalid proxy_port: port ${requested} is kept by workload ${holder.name}`, 'port_unavailable');
			if (requested !== previous?.port && !(await isPortFree(requested, host))) {
				throw HangarError.badRequest(`invalid proxy_port: requested proxy port ${requested} is not available`, 'port_unavailable');
			}
			return requested;
		}
		if (previous?.port) return previous.port;
		return pickFreePort(host, new Set(others.map((other) => other.port ?? 0)));
	}

	private async ensureImage(image: string, context: OperationContext): Promise<void> {
		if (await this.runtime.imageExists(image)) return;
		context.progress.report(`pulling ${image}`);
		await this.runtime.pullImage(image, context.progress, context.signal);
	}

	// --- Lifecycle (each step under the workload's lock) -----------------------------------------

	/** Starts the container (created afresh with `recreate`) and the proxy. */
	private async startWorkload(config: StoredWorkload, options: { recreate: boolean }, context?: OperationContext): Promise<void> {
		const { name } = config;
		try {
			await this.setStatus(name, 'starting', options.recreate ? undefined : 'restarting');
			const secretHeaders = await this.secretHeadersOf(config);
			if (config.container_name) {
				const env = await resolveSecretEnv(config, this.options.secrets);
				context?.progress.report('starting the container');
				await this.ensureContainer(config, env, options.recreate);
			}
			await stopProxy(this.store, name);
			context?.progress.report('starting the proxy');
			await this.launch(config, secretHeaders, (moved) => (moved === undefined ? undefined : `port ${moved} was taken; moved to ${config.port}`));
		} catch (error) {
			await this.setStatus(name, 'error', (error as Error).message);
			throw error;
		} finally {
			this.syncClients();
		}
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
		return headers;
	}

	private async ensureContainer(config: StoredWorkload, env: Record<string, string>, recreate: boolean): Promise<void> {
		const existing = await this.runtime.inspect(config.container_name!);
		if (existing && !recreate) {
			if (existing.state !== 'running') await this.runtime.start(existing.id);
			return;
		}
		if (existing) await this.runtime.remove(existing.id);
		const egress = isolatesNetwork(config) ? await this.prepareEgress(config) : undefined;
		const id = await this.runtime.create(containerSpecOf(config, this.store.instance, env, egress));
		try {
			await this.runtime.start(id);
		} catch (error) {
			await this.runtime.remove(id).catch(() => undefined);
			throw error;
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
	 * `unhealthy` when the server does not answer in time.
	 */
	private async launch(config: StoredWorkload, secretHeaders: Record<string, string>, running: (moved: number | undefined) => string | undefined): Promise<void> {
		const moved = await this.keepPort(config);
		const launched = await launchProxy(this.store, config.name, secretHeaders, this.readyTimeoutMs, this.proxyEnv(), this.options.proxyEntry);
		if (launched.ready) await this.setStatus(config.name, 'running', running(moved));
		else await this.setStatus(config.name, 'unhealthy', `the server did not answer within ${this.readyTimeoutMs / 1000} s`);
	}

	/**
	 * A stopped workload keeps its port; if another program took it meanwhile, the workload moves
	 * to a free one (and registered clients follow). Returns the old port when it moved.
	 */
	private async keepPort(config: StoredWorkload): Promise<number | undefined> {
		const host = config.host ?? '127.0.0.1';
		if (await isPortFree(config.port!, host)) return undefined;
		const old = config.port!;
		const others = (await this.store.configs.list()).filter((other) => other.name !== config.name);
		config.port = await pickFreePort(host, new Set(others.map((other) => other.port ?? 0)));
		await this.store.configs.update(config.name, (stored) => ({ ...stored, port: config.port }));
		this.log.warn(`port ${old} of workload ${config.name} is taken by another program; moved to ${config.port}`);
		return old;
	}

	private async stopWorkload(config: StoredWorkload): Promise<void> {
		try {
			await this.setStatus(config.name, 'stopping');
			await stopProxy(this.store, config.name);
			if (config.container_name) await this.runtime.stop(config.container_name, STOP_GRACE_SECONDS);
			await this.setStatus(config.name, 'stopped');
		} catch (error) {
			await this.setStatus(config.name, 'error', `stop failed: ${(error as Error).message}`);
			throw error;
		} finally {
			this.syncClients();
		}
	}

	private async restartWorkload(config: StoredWorkload): Promise<void> {
		await this.setStatus(config.name, 'starting', 'restarting');
		await stopProxy(this.store, config.name);
		if (config.container_name) await this.runtime.stop(config.container_name, STOP_GRACE_SECONDS);
		await this.startWorkload(config, { recreate: false });
	}

	private async deleteWorkload(config: StoredWorkload): Promise<void> {
		try {
			await this.setStatus(config.name, 'removing');
			this.deleting.add(config.name);
			await this.purge(config);
			this.notified.set(config.name, REMOVED);
			this.options.environment.notifier.notify(WorkloadsDidChange, { name: config.name, status: 'removing', status_context: 'removed' });
		} catch (error) {
			await this.setStatus(config.name, 'error', `delete failed: ${(error as Error).message}`);
			throw error;
		} finally {
			this.deleting.delete(config.name);
			this.syncClients();
		}
	}

	/**
	 * Removes the proxy, the container and every record of a workload. A failed create cleans up
	 * with `bestEffort`: its records go even when the runtime cannot be reached (it then holds
	 * nothing of the workload); a delete keeps them until the container is gone.
	 */
	private async purge(config: StoredWorkload, options: { bestEffort?: boolean } = {}): Promise<void> {
		await stopProxy(this.store, config.name);
		if (config.container_name) {
			try {
				await this.runtime.remove(config.container_name);
				await this.runtime.removeNetwork(networkNameOf(config));
			} catch (error) {
				if (!options.bestEffort) throw error;
				this.log.warn(`cleaning up ${config.name}: ${(error as Error).message}`);
			}
		}
		await this.store.configs.delete(config.name);
		await this.store.forgetRuntimeState(config.name);
	}

	// --- The 202 operations ------------------------------------------------------------------

	async stop(name: string): Promise<void> {
		await this.require(name);
		await this.setStatus(name, 'stopping');
		this.background(name, (config) => this.stopWorkload(config));
	}

	async restart(name: string): Promise<void> {
		await this.require(name);
		await this.setStatus(name, 'starting', 'restarting');
		this.background(name, (config) => this.restartWorkload(config));
	}

	async delete(name: string): Promise<void> {
		await this.require(name);
		await this.setStatus(name, 'removing');
		this.background(name, (config) => this.deleteWorkload(config));
	}

	async stopMany(selection: { names?: string[]; group?: string }): Promise<void> {
		const configs = await this.select(selection);
		await Promise.all(configs.map((config) => this.setStatus(config.name, 'stopping')));
		this.backgroundMany(configs, (config) => this.stopWorkload(config));
	}

	async restartMany(selection: { names?: string[]; group?: string }): Promise<void> {
		const configs = await this.select(selection);
		await Promise.all(configs.map((config) => this.setStatus(config.name, 'starting', 'restarting')));
		this.backgroundMany(configs, (config) => this.restartWorkload(config));
	}

	async deleteMany(selection: { names?: string[]; group?: string }): Promise<void> {
		const configs = await this.select(selection);
		await Promise.all(configs.map((config) => this.setStatus(config.name, 'removing')));
		this.backgroundMany(configs, (config) => this.deleteWorkload(config));
	}

	/** The workloads named (unknown names are skipped) or in the group (400 when it does not exist). */
	private async select(selection: { names?: string[]; group?: string }): Promise<StoredWorkload[]> {
		const all = await this.store.configs.list();
		if (selection.group) {
			if (!(await this.options.groups.exists(selection.group))) {
				throw HangarError.badRequest(`group '${selection.group}' does not exist`, 'group_not_found');
			}
			return all.filter((config) => (config.group ?? DEFAULT_GROUP) === selection.group);
		}
		const names = new Set(selection.names ?? []);
		return all.filter((config) => names.has(config.name));
	}

	/** Runs `work` on the workload's current configuration, after its earlier changes, in the background. */
	private background(name: string, work: (config: StoredWorkload) => Promise<void>): void {
		this.track(this.underLock(name, work, 'workload'));
	}

	private backgroundMany(configs: StoredWorkload[], work: (config: StoredWorkload) => Promise<void>): void {
		this.track(this.eachUnderLock(configs, work, 'workload'));
	}

	/** Runs `work` on the workload's current configuration under its lock; a failure is logged after `label`. */
	private underLock(name: string, work: (config: StoredWorkload) => Promise<void>, label: string): Promise<void> {
		return this.exclusive(name, async () => {
			const config = await this.store.configs.get(name);
			if (config) await work(config);
		}).catch((error: Error) => this.log.error(`${label} ${name}: ${error.message}`));
	}

	/** `underLock` for each of `configs`, a few at a time. */
	private async eachUnderLock(configs: readonly StoredWorkload[], work: (config: StoredWorkload) => Promise<void>, label: string): Promise<void> {
		const queue = [...configs];
		const worker = async () => {
			for (let config = queue.shift(); config; config = queue.shift()) await this.underLock(config.name, work, label);
		};
		await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
	}

	private track(task: Promise<void>): void {
		this.tasks.add(task);
		void task.finally(() => this.tasks.delete(task));
	}

	/** Resolves once the background work started so far is done. */
	async idle(): Promise<void> {
		while (this.tasks.size) await Promise.allSettled([...this.tasks]);
	}

	/** Serialises changes of one workload: in-process queue, then the cross-process lock. */
	private exclusive<T>(name: string, work: () => Promise<T>): Promise<T> {
		const previous = this.queues.get(name) ?? Promise.resolve();
		const run = previous.then(
			() => this.store.withWorkloadLock(name, work),
			() => this.store.withWorkloadLock(name, work),
		);
		this.queues.set(name, run);
		const forget = () => {
			if (this.queues.get(name) === run) this.queues.delete(name);
		};
		run.then(forget, forget);
		return run;
	}

	// --- Reading -----------------------------------------------------------------------------

	private async require(name: string): Promise<StoredWorkload> {
		const config = await this.store.configs.get(name);
		if (!config) throw HangarError.notFound(`workload ${name} not found`, 'workload_not_found');
		return config;
	}

	/** Containers of this Hangar by workload name, or why the runtime could not tell. */
	private async containers(): Promise<Map<string, ContainerInfo> | { unavailable: string }> {
		try {
			const list = await this.runtime.list(instanceLabels(this.store.instance));
			return new Map(list.map((container) => [container.labels[LABELS.name] ?? '', container]));
		} catch (error) {
			return { unavailable: `the container runtime does not answer: ${(error as Error).message}` };
		}
	}

	private async observe(config: StoredWorkload, containers?: Map<string, ContainerInfo> | { unavailable: string }): Promise<Observed> {
		const [recorded, proxy] = await Promise.all([this.store.statuses.get(config.name).catch(() => undefined), liveProxy(this.store, config.name)]);
		let container: Observed['container'];
		if (config.container_name) {
			if (containers instanceof Map) container = containers.get(config.name);
			else if (containers) container = containers;
			else {
				try {
					container = await this.runtime.inspect(config.container_name);
				} catch (error) {
					container = { unavailable: `the container runtime does not answer: ${(error as Error).message}` };
				}
			}
		}
		return { recorded, container, proxy };
	}

	private summaryOf(config: StoredWorkload, status: EffectiveStatus, startedAt: string | undefined): WorkloadSummary {
		return {
			name: config.name,
			package: config.remote_url ?? config.image ?? '',
			url: clientUrlOf(config),
			port: config.port ?? 0,
			transport_type: config.transport ?? 'stdio',
			proxy_mode: config.proxy_mode ?? 'streamable-http',
			status: status.status,
			status_context: status.context ?? '',
			created_at: config.created_at,
			started_at: startedAt ?? '',
			labels: config.container_labels ?? {},
			group: config.group ?? DEFAULT_GROUP,
			tools: config.tools_filter ?? [],
			remote: Boolean(config.remote_url),
		};
	}

	async list(params: { all?: boolean; group?: string }): Promise<{ workloads: WorkloadSummary[] }> {
		const listed = await this.listed(params);
		return { workloads: listed.map(({ summary }) => summary) };
	}

	/** The workloads a list shows, each with the configuration its summary was made from. */
	private async listed(params: { all?: boolean; group?: string }): Promise<Array<{ config: StoredWorkload; summary: WorkloadSummary }>> {
		if (params.group && !(await this.options.groups.exists(params.group))) {
			throw HangarError.notFound(`group '${params.group}' not found`, 'group_not_found');
		}
		const configs = (await this.store.configs.list()).filter((config) => !params.group || (config.group ?? DEFAULT_GROUP) === params.group);
		const containers = configs.some((config) => config.container_name) ? await this.containers() : new Map<string, ContainerInfo>();
		const listed = await Promise.all(
			configs.map(async (config) => {
				const observed = await this.observe(config, containers);
				return { config, summary: this.summaryOf(config, effectiveStatus(config, observed), observed.recorded?.started_at) };
			}),
		);
		return listed.filter(({ summary }) => params.all || isActive(summary.status!));
	}

	async get(name: string): Promise<WorkloadDetail> {
		return detailOf(await this.require(name));
	}

	async export(name: string): Promise<Record<string, unknown>> {
		return exportedRunConfig(await this.require(name));
	}

	async status(name: string): Promise<EffectiveStatus> {
		const config = await this.require(name);
		return effectiveStatus(config, await this.observe(config));
	}

	async logs(name: string): Promise<string> {
		const config = await this.require(name);
		if (!config.container_name) throw HangarError.notFound(`workload ${name} is a remote server and has no container logs; see its proxy logs`, 'no_container');
		const container = await this.runtime.inspect(config.container_name);
		if (!container) throw HangarError.notFound(`the container of workload ${name} is gone`, 'container_not_found');
		return this.runtime.logs(container.id, LOG_LINES);
	}

	async proxyLogs(name: string): Promise<string> {
		await this.require(name);
		let text: string;
		try {
			text = await readFile(this.store.logFile(name), 'utf8');
		} catch {
			throw HangarError.notFound(`no proxy log for workload ${name}`, 'log_not_found');
		}
		const lines = text.split('\n');
		if (lines.at(-1) === '') lines.pop();
		return lines.slice(-LOG_LINES).map((line) => `${line}\n`).join('');
	}

	/** Running workloads as registered clients reference them (the clients area's port). */
	async listEndpoints(): Promise<WorkloadEndpoint[]> {
		const listed = await this.listed({ all: false });
		return listed
			.filter(({ summary }) => summary.status === 'running')
			.map(({ config, summary }) => ({ name: summary.name, group: summary.group ?? DEFAULT_GROUP, url: summary.url!, transport: clientTransportOf(config) }));
	}

	// --- Groups ------------------------------------------------------------------------------

	/** A group is being deleted: its workloads move to `default`, or are deleted with it. */
	async releaseGroup(group: string, deleteWorkloads: boolean): Promise<void> {
		const members = (await this.store.configs.list()).filter((config) => config.group === group);
		if (deleteWorkloads) {
			await Promise.all(members.map((config) => this.exclusive(config.name, () => this.deleteWorkload(config))));
			return;
		}
		for (const config of members) await this.store.configs.update(config.name, (stored) => ({ ...stored, group: DEFAULT_GROUP }));
		if (members.length) this.syncClients();
	}

	// --- Reconcile ---------------------------------------------------------------------------

	/**
	 * Brings workloads back to what was asked of them, after a crash, a reboot or a daemon
	 * restart: finishes interrupted stops and deletes, restarts dead proxies on their ports,
	 * starts containers whose restart policy says so, and marks workloads whose container is gone.
	 */
	async reconcile(): Promise<void> {
		await this.eachUnderLock(await this.store.configs.list(), (config) => this.reconcileOne(config), 'reconciling workload');
	}

	/** Runs `reconcile` in the background (daemon and `hangar serve` start-up). */
	startReconcile(): void {
		this.track(this.reconcile().catch((error: Error) => this.log.error(`reconcile: ${error.message}`)));
	}

	private async reconcileOne(config: StoredWorkload): Promise<void> {
		const { recorded, container, proxy } = await this.observe(config);
		const status = recorded?.status;
		if (container && 'unavailable' in container) return; // try again next start
		// A create or update in another process may be pulling its image right now.
		if (status === 'starting' && Date.now() - Date.parse(recorded!.updated_at) < IN_PROGRESS_MS) return;
		if (status === 'removing') return this.deleteWorkload(config);
		if (status === 'stopping') return this.stopWorkload(config);
		if (status === 'stopped' || status === 'error' || status === 'policy_stopped') {
			if (proxy) await stopProxy(this.store, config.name);
			return;
		}
		const policy = config.restart_policy;
		if (config.container_name) {
			if (!container) {
				if (proxy) await stopProxy(this.store, config.name);
				await this.setStatus(config.name, 'error', CONTAINER_GONE);
				return;
			}
			if (container.state !== 'running' && container.state !== 'restarting') {
				const comesBack = policy === 'always' || policy === 'unless-stopped' || (policy === 'on-failure' && container.exitCode !== 0);
				if (comesBack) {
					this.log.info(`starting workload ${config.name} again (restart policy ${policy})`);
					return this.startWorkload(config, { recreate: false });
				}
				if (proxy) await stopProxy(this.store, config.name);
				await this.setStatus(config.name, 'stopped', `the container exited${container.exitCode === undefined ? '' : ` with code ${container.exitCode}`}`);
				return;
			}
		} else if (!proxy && policy === 'no') {
			await this.setStatus(config.name, 'stopped', 'the proxy ended');
			return;
		}
		if (proxy) {
			if (status === 'starting') await this.setStatus(config.name, 'running');
			return;
		}
		this.log.info(`restarting the proxy of workload ${config.name} on port ${config.port}`);
		await this.relaunchProxy(config);
	}

	private async relaunchProxy(config: StoredWorkload): Promise<void> {
		try {
			const secretHeaders = await this.secretHeadersOf(config);
			await this.launch(config, secretHeaders, (moved) => (moved === undefined ? 'proxy restarted' : `proxy restarted; port ${moved} was taken, moved to ${config.port}`));
		} catch (error) {
			await this.setStatus(config.name, 'error', (error as Error).message);
		} finally {
			this.syncClients();
		}
	}

	// --- Status and clients ------------------------------------------------------------------

	private async setStatus(name: string, status: WorkloadStatus, context?: string): Promise<void> {
		const now = new Date().toISOString();
		const previous = await this.store.statuses.get(name).catch(() => undefined);
		// `starting` for a create, then for its start, is one change.
		if (previous?.status === status && (TRANSITIONAL.has(status) || previous.status_context === context)) return;
		this.notified.set(name, now);
		await this.store.statuses.put(name, {
			status,
			status_context: context,
			started_at: status === 'running' ? now : previous?.started_at,
			updated_at: now,
		});
		this.options.environment.notifier.notify(WorkloadsDidChange, { name, status, status_context: context });
	}

	/**
	 * Reports status changes other processes make (the CLI, `hangar serve`, another daemon) as
	 * `workloads/didChange` too, by watching the status folder. Changes this process made were
	 * reported already.
	 */
	watchStatuses(): void {
		const folder = this.store.statuses.collection.folder;
		const pending = new Map<string, NodeJS.Timeout>();
		const check = async (name: string) => {
			const record = await this.store.statuses.get(name).catch(() => undefined);
			const seen = this.notified.get(name);
			if (!record) {
				if (seen === undefined || seen === REMOVED || this.deleting.has(name)) return;
				this.notified.set(name, REMOVED);
				this.options.environment.notifier.notify(WorkloadsDidChange, { name, status: 'removing', status_context: 'removed' });
			} else if (record.updated_at !== seen) {
				this.notified.set(name, record.updated_at);
				this.options.environment.notifier.notify(WorkloadsDidChange, { name, status: record.status, status_context: record.status_context });
			}
		};
		void (async () => {
			await mkdir(folder, { recursive: true, mode: 0o700 });
			for (const name of await this.store.statuses.collection.names()) {
				const record = await this.store.statuses.get(name).catch(() => undefined);
				if (record) this.notified.set(name, record.updated_at);
			}
			const watcher = watch(folder, (_event, file) => {
				if (!file || !file.endsWith('.json') || file.startsWith('.')) return;
				const name = decodeURIComponent(file.slice(0, -'.json'.length));
				clearTimeout(pending.get(name));
				pending.set(name, setTimeout(() => void check(name), 10));
			});
			watcher.unref();
		})().catch((error: Error) => this.log.warn(`cannot watch workload statuses: ${error.message}`));
	}

	/** Proxies log at `info` into their own files unless told otherwise. */
	private proxyEnv(): NodeJS.ProcessEnv {
		const env = this.options.env ?? process.env;
		return { ...env, HANGAR_LOG: env.HANGAR_PROXY_LOG ?? 'info' };
	}

	private syncClients(): void {
		this.track(this.options.clients.syncWorkloads().catch((error: Error) => this.log.warn(`client configuration sync failed: ${error.message}`)));
	}
}

function checkCancelled(context: OperationContext, name: string): void {
	if (context.signal.aborted) throw HangarError.cancelled(`work on workload ${name}`);
}

