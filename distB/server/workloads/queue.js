/** Workloads a bulk operation or reconcile works on at once. */
const CONCURRENCY = 4;
export class WorkloadQueue {
    store;
    log;
    queues = new Map();
    tasks = new Set();
    constructor(store, log) {
        this.store = store;
        this.log = log;
    }
    /** Serialises changes of one workload: in-process queue, then the cross-process lock. */
    exclusive(name, work) {
        const previous = this.queues.get(name) ?? Promise.resolve();
        const run = previous.then(() => this.store.withWorkloadLock(name, work), () => this.store.withWorkloadLock(name, work));
        this.queues.set(name, run);
        const forget = () => {
            if (this.queues.get(name) === run)
                this.queues.delete(name);
        };
        run.then(forget, forget);
        return run;
    }
    /** Runs `work` on the workload's current configuration, after its earlier changes, in the background. */
    background(name, work) {
        this.track(this.underLock(name, work, 'workload'));
    }
    backgroundMany(configs, work) {
        this.track(this.eachUnderLock(configs, work, 'workload'));
    }
    /** Runs `work` on the workload's current configuration under its lock; a failure is logged after `label`. */
    underLock(name, work, label) {
        return this.exclusive(name, async () => {
            const config = await this.store.configs.get(name);
            if (config)
                await work(config);
        }).catch((error) => this.log.error(`${label} ${name}: ${error.message}`));
    }
    /** `underLock` for each of `configs`, a few at a time. */
    async eachUnderLock(configs, work, label) {
        const queue = [...configs];
        const worker = async () => {
            for (let config = queue.shift(); config; config = queue.shift())
                await this.underLock(config.name, work, label);
        };
        await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
    }
    /** Keeps `task` until it ends, for `idle`. */
    track(task) {
        this.tasks.add(task);
        void task.finally(() => this.tasks.delete(task));
    }
    /** Resolves once the background work started so far is done. */
    async idle() {
        while (this.tasks.size)
            await Promise.allSettled([...this.tasks]);
    }
}
//# sourceMappingURL=queue.js.map