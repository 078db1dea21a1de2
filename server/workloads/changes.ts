/**
 * What changes workloads: create, update, stop, restart and delete (stop, restart and delete
 * return at once and finish in the background, as the spec's 202 says), a group's release, and
 * the repairs after a crash. The service makes this on the first change, so a command that
 * only reads loads none of it: the queue orders the changes of each workload, the lifecycle
 * runs its steps, the status feed records and announces them, the port policy picks ports, the
 * reconciler repairs, and config.ts checks every field of a request.
 */
import { HangarError } from '../../protocol/errors.js';
import type { OperationContext } from '../context.js';
import { DEFAULT_GROUP } from '../groups/store.js';
import type { PackageBuilder, PackagePlanner } from '../packages/builder.js';
import type { StoredWorkload, WorkloadStore } from '../runspec/store.js';
import { buildRunConfig, keepCachedAuth, type CreateRequest, type UpdateRequest } from './config.js';
import { checkCancelled, WorkloadLifecycle } from './lifecycle.js';
import type { WorkloadObserver } from './observer.js';
import { PinFeed } from './pinFeed.js';
import { PortPolicy } from './portPolicy.js';
import { WorkloadQueue } from './queue.js';
import { Reconciler } from './reconcile.js';
import type { WorkloadSelection, WorkloadServiceOptions } from './dependencies.js';
import { StatusFeed } from './statusFeed.js';
import { discoverTransport, type ProbeTarget } from './transport.js';

export class WorkloadChanges {
	private readonly queue: WorkloadQueue;
	private readonly statuses: StatusFeed;
	private readonly ports: PortPolicy;
	private readonly lifecycle: WorkloadLifecycle;
	private readonly reconciler: Reconciler;
	private readonly packages: PackagePlanner;

	constructor(
		private readonly options: WorkloadServiceOptions,
		private readonly store: WorkloadStore,
		private readonly observer: WorkloadObserver,
	) {
		const { log, notifier, paths } = options.environment;
		this.packages =
			options.packages ??
			plannerOnUse(async () => {
				const [{ PackageBuilder }, { RuntimeDefaults }] = await Promise.all([import('../packages/builder.js'), import('../packages/defaults.js')]);
				return new PackageBuilder(options.runtime, new RuntimeDefaults(paths), options.secrets);
			});
		this.queue = new WorkloadQueue(store, log);
		this.statuses = new StatusFeed(store, notifier, log);
		this.ports = new PortPolicy(store, log);
		this.lifecycle = new WorkloadLifecycle({
			store,
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
		this.reconciler = new Reconciler(store, this.queue, observer, this.lifecycle, this.statuses, log);
	}

	private get log() {
		return this.options.environment.log;
	}

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
				const { transport, found } = await discoverTransport(this.options.runtime, target);
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

	async stopMany(selection: WorkloadSelection): Promise<void> {
		const configs = await this.select(selection);
		await Promise.all(configs.map((config) => this.statuses.set(config.name, 'stopping')));
		this.queue.backgroundMany(configs, (config) => this.lifecycle.stop(config));
	}

	async restartMany(selection: WorkloadSelection): Promise<void> {
		const configs = await this.select(selection);
		await Promise.all(configs.map((config) => this.statuses.set(config.name, 'starting', 'restarting')));
		this.queue.backgroundMany(configs, (config) => this.lifecycle.restart(config));
	}

	async deleteMany(selection: WorkloadSelection): Promise<void> {
		const configs = await this.select(selection);
		await Promise.all(configs.map((config) => this.statuses.set(config.name, 'removing')));
		this.queue.backgroundMany(configs, (config) => this.lifecycle.delete(config));
	}

	/** The workloads named (unknown names are skipped) or in the group (400 when it does not exist). */
	private async select(selection: WorkloadSelection): Promise<StoredWorkload[]> {
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
	watch(): void {
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
