/**
 * Brings workloads back to what was asked of them, after a crash, a reboot or a daemon
 * restart: finishes interrupted stops and deletes, restarts dead proxies on their ports,
 * starts containers whose restart policy says so, and marks workloads whose container is gone.
 */
import type { Logger } from '../log.js';
import type { WorkloadLifecycle } from './lifecycle.js';
import type { WorkloadObserver } from './observer.js';
import { stopProxy } from './proxyProcess.js';
import type { WorkloadQueue } from './queue.js';
import { CONTAINER_GONE } from './status.js';
import type { StatusFeed } from './statusFeed.js';
import { comesBack } from '../runspec/instances.js';
import type { StoredWorkload, WorkloadStore } from '../runspec/store.js';

/** A `starting` status younger than this belongs to work still in progress. */
const IN_PROGRESS_MS = 15 * 60_000;

export class Reconciler {
	constructor(
		private readonly store: WorkloadStore,
		private readonly queue: WorkloadQueue,
		private readonly observer: WorkloadObserver,
		private readonly lifecycle: WorkloadLifecycle,
		private readonly statuses: StatusFeed,
		private readonly log: Logger,
	) {}

	/** Reconciles every workload, a few at a time, each under its lock. */
	async run(): Promise<void> {
		await this.queue.eachUnderLock(await this.store.configs.list(), (config) => this.reconcileOne(config), 'reconciling workload');
	}

	private async reconcileOne(config: StoredWorkload): Promise<void> {
		const { recorded, container, proxy } = await this.observer.observe(config);
		const status = recorded?.status;
		if (container && 'unavailable' in container) return; // try again next start
		// A create or update in another process may be pulling its image right now.
		if (status === 'starting' && Date.now() - Date.parse(recorded!.updated_at) < IN_PROGRESS_MS) return;
		if (status === 'removing') return this.lifecycle.delete(config);
		if (status === 'stopping') return this.lifecycle.stop(config);
		if (status === 'stopped' || status === 'error' || status === 'policy_stopped') {
			if (proxy) await stopProxy(this.store, config.name);
			return;
		}
		const policy = config.restart_policy;
		if (config.container_name) {
			if (!container) {
				if (proxy) await stopProxy(this.store, config.name);
				await this.statuses.set(config.name, 'error', CONTAINER_GONE);
				return;
			}
			if (container.state !== 'running' && container.state !== 'restarting') {
				if (comesBack(policy, container.exitCode)) {
					this.log.info(`starting workload ${config.name} again (restart policy ${policy})`);
					await this.lifecycle.start(config, { recreate: false });
					return;
				}
				if (proxy) await stopProxy(this.store, config.name);
				await this.statuses.set(config.name, 'stopped', `the container exited${container.exitCode === undefined ? '' : ` with code ${container.exitCode}`}`);
				return;
			}
		} else if (!proxy && policy === 'no') {
			await this.statuses.set(config.name, 'stopped', 'the proxy ended');
			return;
		}
		if (proxy) {
			if (status === 'starting') await this.statuses.set(config.name, 'running');
			return;
		}
		this.log.info(`restarting the proxy of workload ${config.name} on port ${config.port}`);
		await this.lifecycle.relaunchProxy(config);
	}
}
