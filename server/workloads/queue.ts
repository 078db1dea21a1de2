/**
 * The order of lifecycle changes: every change of one workload runs under its lock (an
 * in-process queue, then the cross-process file lock), so daemons, `hangar serve` and the CLI
 * never interleave two changes of the same workload; work started in the background is
 * tracked until it ends.
 */
import type { Logger } from '../log.js';
import type { StoredWorkload, WorkloadStore } from '../runspec/store.js';

/** Workloads a bulk operation or reconcile works on at once. */
const CONCURRENCY = 4;

export class WorkloadQueue {
	private readonly queues = new Map<string, Promise<unknown>>();
	private readonly tasks = new Set<Promise<void>>();

	constructor(
		private readonly store: WorkloadStore,
		private readonly log: Logger,
	) {}

	/** Serialises changes of one workload: in-process queue, then the cross-process lock. */
	exclusive<T>(name: string, work: () => Promise<T>): Promise<T> {
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

	/** Runs `work` on the workload's current configuration, after its earlier changes, in the background. */
	background(name: string, work: (config: StoredWorkload) => Promise<void>): void {
		this.track(this.underLock(name, work, 'workload'));
	}

	backgroundMany(configs: readonly StoredWorkload[], work: (config: StoredWorkload) => Promise<void>): void {
		this.track(this.eachUnderLock(configs, work, 'workload'));
	}

	/** Runs `work` on the workload's current configuration under its lock; a failure is logged after `label`. */
	underLock(name: string, work: (config: StoredWorkload) => Promise<void>, label: string): Promise<void> {
		return this.exclusive(name, async () => {
			const config = await this.store.configs.get(name);
			if (config) await work(config);
		}).catch((error: Error) => this.log.error(`${label} ${name}: ${error.message}`));
	}

	/** `underLock` for each of `configs`, a few at a time. */
	async eachUnderLock(configs: readonly StoredWorkload[], work: (config: StoredWorkload) => Promise<void>, label: string): Promise<void> {
		const queue = [...configs];
		const worker = async () => {
			for (let config = queue.shift(); config; config = queue.shift()) await this.underLock(config.name, work, label);
		};
		await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
	}

	/** Keeps `task` until it ends, for `idle`. */
	track(task: Promise<void>): void {
		this.tasks.add(task);
		void task.finally(() => this.tasks.delete(task));
	}

	/** Resolves once the background work started so far is done. */
	async idle(): Promise<void> {
		while (this.tasks.size) await Promise.allSettled([...this.tasks]);
	}
}
