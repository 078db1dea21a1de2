/**
 * The workloads service: creates workloads (run configuration, image, container, proxy),
 * reports them, and stops, restarts, updates and deletes them. Stop, restart and delete
 * return at once and finish in the background, as the spec's 202 says.
 *
 * The work is done by smaller parts: the queue orders the changes of each workload, the
 * lifecycle runs its steps, the observer tells its state, the status feed records and
 * announces it, the port policy picks ports, and the reconciler repairs after a crash.
 */
import { readFile } from 'node:fs/promises';
import { HangarError } from '../../protocol/errors.js';
import type { WorkloadDetail, WorkloadPinsResult, WorkloadSignInResult, WorkloadStats, WorkloadSummary } from '../../protocol/protocol.workloads.js';
import type { OperationContext } from '../context.js';
import type { Environment } from '../environment.js';
import { DEFAULT_GROUP } from '../groups/store.js';
import type { Runtime } from '../runtime/runtime.js';
import { buildRunConfig, detailOf, exportedRunConfig, keepCachedAuth, type CreateRequest, type UpdateRequest } from './config.js';
import type { ClientConfigSync, GroupDirectory, SecretResolver, ServerCatalog } from './dependencies.js';
import { checkCancelled, WorkloadLifecycle } from './lifecycle.js';
import { mergedLogs } from './logs.js';
import { discoverTransport, type ProbeTarget } from './transport.js';
import { WorkloadObserver } from './observer.js';
import { PortPolicy } from './portPolicy.js';
import { WorkloadQueue } from './queue.js';
import { Reconciler } from './reconcile.js';
import { effectiveStatus, type EffectiveStatus } from './status.js';
import { StatusFeed } from './statusFeed.js';
import { backendInstancesOf, instanceContainerName } from '../runspec/instances.js';
import { aggregatedGroupOf } from '../runspec/aggregation.js';
import { isSignInState, WorkloadStore, type StoredWorkload } from '../runspec/store.js';
import { clientTransportOf, type ClientTransport } from '../runspec/urls.js';
import type { PackageBuilder, PackagePlanner } from '../packages/builder.js';
import { PinReview } from './pins.js';
import { PinFeed } from './pinFeed.js';
import { PinningDefault } from '../runspec/pins/policy.js';

const LOG_LINES = 1000;

export type { GroupDirectory } from './dependencies.js';

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
	/** Builds the images of package references (default: with the runtime and the per-scheme defaults). */
	readonly packages?: PackagePlanner;
}

/** A running workload as registered clients reference it. */
export interface WorkloadEndpoint {
	readonly name: string;
	readonly group: string;
	readonly url: string;
	readonly transport: ClientTransport;
	/** The group an aggregate serves. */
	readonly aggregates?: string;
}

export class WorkloadService {
	readonly store: WorkloadStore;
	private readonly runtime: Runtime;
	private readonly queue: WorkloadQueue;
	private readonly statuses: StatusFeed;
	private readonly ports: PortPolicy;
	private readonly observer: WorkloadObserver;
	private readonly lifecycle: WorkloadLifecycle;
	private readonly reconciler: Reconciler;
	private readonly packages: PackagePlanner;
	private readonly pins: PinReview;

	constructor(private readonly options: WorkloadServiceOptions) {
		const { log, notifier, paths } = options.environment;
		this.packages =
			options.packages ??
			plannerOnUse(async () => {
				const [{ PackageBuilder }, { RuntimeDefaults }] = await Promise.all([import('../packages/builder.js'), import('../packages/defaults.js')]);
				return new PackageBuilder(options.runtime, new RuntimeDefaults(paths), options.secrets);
			});
		this.store = new WorkloadStore(paths);
		this.runtime = options.runtime;
		this.queue = new WorkloadQueue(this.store, log);
		this.statuses = new StatusFeed(this.store, notifier, log);
		this.ports = new PortPolicy(this.store, log);
		this.observer = new WorkloadObserver(this.store, options.runtime, options.groups);
		this.lifecycle = new WorkloadLifecycle({
			store: this.store,
			runtime: options.runtime,
			secrets: options.secrets,
			clients: options.clients,
			statuses: this.statuses,
			ports: this.ports,
			queue: this.queue,
			log,
			readyTimeoutMs: options.readyTimeoutMs ?? 60_000,
			packages: this.packages,
			proxyEntry: options.proxyEntry,
			env: options.env,
		});
		this.reconciler = new Reconciler(this.store, this.queue, this.observer, this.lifecycle, this.statuses, log);
		this.pins = new PinReview(this.store, new PinningDefault(paths));
	}

	private get log() {
		return this.options.environment.log;
	}

	// --- Create and update ------------------------------------------------------------------

	/**
	 * Creates a workload. A server that does not come up (its container exits, a remote URL does
	 * not answer) leaves the workload in `error` with the reason, for `logs` and `edit`; a
	 * failure or a cancellation before that leaves nothing behind.
	 */
	async create(request: CreateRequest, context: OperationContext): Promise<{ name: string; port: number }> {
		const { name } = request;
		if (await this.store.configs.get(name)) throw this.duplicate(name);
		const config = await buildRunConfig(request, { ...this.buildOptions(undefined, context), defaultTelemetry: await new (await import('./telemetryDefault.js')).TelemetryDefault(this.options.environment.paths).get() });
		config.port = await this.ports.choose(config, request.proxy_port, undefined);
		if (!(await this.store.configs.create(name, config))) throw this.duplicate(name);
		context.progress.begin(`Creating workload ${name}`);
		try {
			await this.statuses.set(name, 'starting', 'creating');
			const resolved = await this.lifecycle.resolveSecrets(config);
			if (config.container_name) await this.lifecycle.ensureWorkloadImage(config, context);
			checkCancelled(context, name);
			const outcome = await this.queue.exclusive(name, () => this.lifecycle.start(config, { recreate: true, resolved }, context));
			// Why it failed is in its status, which every door shows: said once.
			context.progress.end(outcome.failed ? `${name} did not start` : `${name} is listening on port ${config.port}`);
			return { name, port: config.port };
		} catch (error) {
			context.progress.end(`${name} could not be created`);
			await this.queue.exclusive(name, () => this.lifecycle.purge(config, { bestEffort: true })).catch((purgeError: Error) => this.log.error(`cleaning up ${name}: ${purgeError.message}`));
			throw error;
		}
	}

	/**
	 * Recreates a workload with a new configuration, keeping its port unless another is asked
	 * for. Transactional: everything the new configuration needs is checked and resolved before
	 * the running workload is touched, and when the new one fails to start the old one is put
	 * back, with its configuration.
	 */
	async update(request: UpdateRequest, context: OperationContext): Promise<{ name: string; port: number }> {
		const previous = await this.observer.require(request.name);
		const config = await buildRunConfig(request, this.buildOptions(previous, context));
		keepCachedAuth(previous, config);
		config.port = await this.ports.choose(config, request.proxy_port, previous);
		const resolved = await this.lifecycle.resolveSecrets(config);
		context.progress.begin(`Updating workload ${request.name}`);
		try {
			if (config.container_name) await this.lifecycle.ensureWorkloadImage(config, context);
			checkCancelled(context, request.name);
			await this.queue.exclusive(request.name, async () => {
				await this.statuses.set(request.name, 'starting', 'updating');
				await this.lifecycle.dismantle(previous);
				await this.store.configs.update(request.name, () => config);
				let failure: Error;
				try {
					const outcome = await this.lifecycle.start(config, { recreate: true, resolved }, context);
					if (!outcome.failed) return;
					failure = new HangarError(502, `workload ${request.name} was not updated: the new configuration does not start: ${outcome.failed}; the previous configuration runs again`, 'server_failed');
				} catch (error) {
					failure = error as Error;
				}
				await this.lifecycle.restore(previous, config);
				throw failure;
			});
		} finally {
			context.progress.end();
		}
		return { name: request.name, port: config.port! };
	}

	private buildOptions(previous: StoredWorkload | undefined, context: OperationContext) {
		return {
			catalog: this.options.catalog,
			groupExists: (group: string) => this.options.groups.exists(group),
			workloadOf: (name: string) => this.store.configs.get(name),
			// The MCP SDK client it uses loads only for an aggregate that checks its names (`manual`).
			memberTools: async (group: string) => (await import('./memberTools.js')).memberTools(this.store, group, context.signal),
			previous,
			now: new Date().toISOString(),
			instance: this.store.instance,
			discoverTransport: async (target: ProbeTarget, fromRegistry: boolean) => {
				await this.lifecycle.ensureImage(target.image, fromRegistry, context);
				context.progress.report(`finding the transport of ${target.image}`);
				const { transport, found } = await discoverTransport(this.runtime, target);
				this.log.debug(`${target.image} serves ${transport}, found by ${found}`);
				context.progress.report(`transport ${transport}, found by ${found}`);
				return transport;
			},
			packages: this.packages,
			signal: context.signal,
		};
	}

	private duplicate(name: string): HangarError {
		return HangarError.conflict(`workload with name ${name} already exists`, 'workload_exists');
	}

	async stop(name: string): Promise<void> {
		await this.observer.require(name);
		await this.statuses.set(name, 'stopping');
		this.queue.background(name, (config) => this.lifecycle.stop(config));
	}

	async restart(name: string): Promise<void> {
		await this.observer.require(name);
		await this.statuses.set(name, 'starting', 'restarting');
		this.queue.background(name, (config) => this.lifecycle.restart(config));
	}

	async delete(name: string): Promise<void> {
		await this.observer.require(name);
		await this.statuses.set(name, 'removing');
		this.queue.background(name, (config) => this.lifecycle.delete(config));
	}

	async stopMany(selection: { names?: string[]; group?: string }): Promise<void> {
		const configs = await this.select(selection);
		await Promise.all(configs.map((config) => this.statuses.set(config.name, 'stopping')));
		this.queue.backgroundMany(configs, (config) => this.lifecycle.stop(config));
	}

	async restartMany(selection: { names?: string[]; group?: string }): Promise<void> {
		const configs = await this.select(selection);
		await Promise.all(configs.map((config) => this.statuses.set(config.name, 'starting', 'restarting')));
		this.queue.backgroundMany(configs, (config) => this.lifecycle.restart(config));
	}

	async deleteMany(selection: { names?: string[]; group?: string }): Promise<void> {
		const configs = await this.select(selection);
		await Promise.all(configs.map((config) => this.statuses.set(config.name, 'removing')));
		this.queue.backgroundMany(configs, (config) => this.lifecycle.delete(config));
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

	async list(params: { all?: boolean; group?: string }): Promise<{ workloads: WorkloadSummary[] }> {
		const listed = await this.observer.listed(params);
		return { workloads: listed.map(({ summary }) => summary) };
	}

	async get(name: string): Promise<WorkloadDetail> {
		return detailOf(await this.observer.require(name));
	}

	async export(name: string): Promise<Record<string, unknown>> {
		return exportedRunConfig(await this.observer.require(name));
	}

	async status(name: string): Promise<EffectiveStatus> {
		const config = await this.observer.require(name);
		return effectiveStatus(config, await this.observer.observe(config));
	}

	/**
	 * The server's last output: a stdio server's stderr only, since its stdout is the MCP traffic
	 * itself (answers, tool results, whatever a tool echoes). A workload of several server instances (`backend_replicas`) gives
	 * every instance's, merged in time, each line after its container's name (`name-2 | …`), as
	 * `docker compose logs` shows them.
	 */
	async logs(name: string): Promise<string> {
		const config = await this.observer.require(name);
		if (!config.container_name) {
			const kind = aggregatedGroupOf(config) === undefined ? 'a remote server' : 'an aggregate';
			throw HangarError.notFound(`workload ${name} is ${kind} and has no container logs; see its proxy logs`, 'no_container');
		}
		const instances = backendInstancesOf(config);
		const stderrOnly = config.transport === 'stdio';
		if (instances === 1) {
			const container = await this.runtime.inspect(config.container_name);
			if (!container) throw HangarError.notFound(`the container of workload ${name} is gone`, 'container_not_found');
			return this.runtime.logs(container.id, LOG_LINES, { stderrOnly });
		}
		const read = Array.from({ length: instances }, async (_, index) => {
			const container = await this.runtime.inspect(instanceContainerName(config, index + 1));
			// An instance the engine is replacing has no container for a moment: the others still tell.
			return container && { container: container.name, text: await this.runtime.logs(container.id, LOG_LINES, { timestamps: true, stderrOnly }) };
		});
		const outputs = (await Promise.all(read)).filter((output) => output !== undefined);
		if (!outputs.length) throw HangarError.notFound(`the containers of workload ${name} are gone`, 'container_not_found');
		return mergedLogs(outputs, LOG_LINES);
	}

	async proxyLogs(name: string): Promise<string> {
		await this.observer.require(name);
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

	async signIn(name: string, params: { device?: boolean; wait?: number }, context?: OperationContext): Promise<WorkloadSignInResult> {
		const [{ signIn }, config] = await Promise.all([import('./signIn.js'), this.observer.require(name)]);
		return signIn(this.store, config, params, context?.signal);
	}

	async stats(name: string, window?: number, context?: OperationContext): Promise<WorkloadStats> {
		const [{ readStats }, config] = await Promise.all([import('./stats.js'), this.observer.require(name)]);
		return readStats(this.store, config, window, context?.signal);
	}

	/** Each tool and prompt against its pin (tool pinning). */
	async tools(name: string): Promise<WorkloadPinsResult> {
		return this.pins.review(await this.observer.require(name));
	}

	/** Re-pins drifted tools and prompts; the workload's proxy serves them again at once. */
	async approveTools(name: string, selection: { tools?: string[]; prompts?: string[] }): Promise<{ name: string; tools: string[]; prompts: string[] }> {
		const config = await this.observer.require(name);
		return this.pins.approve(config, selection);
	}

	/** Running workloads as registered clients reference them (the clients area's port). */
	async listEndpoints(): Promise<WorkloadEndpoint[]> {
		const listed = await this.observer.listed({ all: false });
		return listed
			.filter(({ summary }) => summary.status === 'running' || isSignInState(summary.status))
			.map(({ config, summary }) => {
				const aggregates = aggregatedGroupOf(config);
				return { name: summary.name, group: summary.group ?? DEFAULT_GROUP, url: summary.url!, transport: clientTransportOf(config), ...(aggregates === undefined ? {} : { aggregates }) };
			});
	}

	// --- Groups ------------------------------------------------------------------------------

	/** A group is being deleted: its workloads move to `default`, or are deleted with it. */
	async releaseGroup(group: string, deleteWorkloads: boolean): Promise<void> {
		const members = (await this.store.configs.list()).filter((config) => config.group === group);
		if (deleteWorkloads) {
			await Promise.all(members.map((config) => this.queue.exclusive(config.name, () => this.lifecycle.delete(config))));
			return;
		}
		for (const config of members) await this.store.configs.update(config.name, (stored) => ({ ...stored, group: DEFAULT_GROUP }));
		if (members.length) this.lifecycle.syncClients();
	}

	// --- Reconcile and background work -------------------------------------------------------

	/**
	 * Brings workloads back to what was asked of them, after a crash, a reboot or a daemon
	 * restart (see reconcile.ts).
	 */
	reconcile(): Promise<void> {
		return this.reconciler.run();
	}

	/** Runs `reconcile` in the background (daemon and `hangar serve` start-up). */
	startReconcile(): void {
		this.queue.track(this.reconcile().catch((error: Error) => this.log.error(`reconcile: ${error.message}`)));
	}

	/** Announces status changes other processes make, and tool drift, as `workloads/didChange` too. */
	watchStatuses(): void {
		this.statuses.watch();
		const { notifier, log } = this.options.environment;
		new PinFeed(this.store, notifier, log).watch();
	}

	/** Resolves once the background work started so far is done. */
	idle(): Promise<void> {
		return this.queue.idle();
	}
}

/** A planner whose builder (with the registries' and the package resolvers' code) is made on first use. */
function plannerOnUse(make: () => Promise<PackageBuilder>): PackagePlanner {
	let made: Promise<PackageBuilder> | undefined;
	const builder = () => (made ??= make());
	return {
		plan: async (...args) => (await builder()).plan(...args),
		ensure: async (...args) => (await builder()).ensure(...args),
	};
}
