import { stopProxy } from './proxyProcess.js';
import { CONTAINER_GONE } from './status.js';
/** A `starting` status younger than this belongs to work still in progress. */
const IN_PROGRESS_MS = 15 * 60_000;
export class Reconciler {
    store;
    queue;
    observer;
    lifecycle;
    statuses;
    log;
    constructor(store, queue, observer, lifecycle, statuses, log) {
        this.store = store;
        this.queue = queue;
        this.observer = observer;
        this.lifecycle = lifecycle;
        this.statuses = statuses;
        this.log = log;
    }
    /** Reconciles every workload, a few at a time, each under its lock. */
    async run() {
        await this.queue.eachUnderLock(await this.store.configs.list(), (config) => this.reconcileOne(config), 'reconciling workload');
    }
    async reconcileOne(config) {
        const { recorded, container, proxy } = await this.observer.observe(config);
        const status = recorded?.status;
        if (container && 'unavailable' in container)
            return; // try again next start
        // A create or update in another process may be pulling its image right now.
        if (status === 'starting' && Date.now() - Date.parse(recorded.updated_at) < IN_PROGRESS_MS)
            return;
        if (status === 'removing')
            return this.lifecycle.delete(config);
        if (status === 'stopping')
            return this.lifecycle.stop(config);
        if (status === 'stopped' || status === 'error' || status === 'policy_stopped') {
            if (proxy)
                await stopProxy(this.store, config.name);
            return;
        }
        const policy = config.restart_policy;
        if (config.container_name) {
            if (!container) {
                if (proxy)
                    await stopProxy(this.store, config.name);
                await this.statuses.set(config.name, 'error', CONTAINER_GONE);
                return;
            }
            if (container.state !== 'running' && container.state !== 'restarting') {
                const comesBack = policy === 'always' || policy === 'unless-stopped' || (policy === 'on-failure' && container.exitCode !== 0);
                if (comesBack) {
                    this.log.info(`starting workload ${config.name} again (restart policy ${policy})`);
                    await this.lifecycle.start(config, { recreate: false });
                    return;
                }
                if (proxy)
                    await stopProxy(this.store, config.name);
                await this.statuses.set(config.name, 'stopped', `the container exited${container.exitCode === undefined ? '' : ` with code ${container.exitCode}`}`);
                return;
            }
        }
        else if (!proxy && policy === 'no') {
            await this.statuses.set(config.name, 'stopped', 'the proxy ended');
            return;
        }
        if (proxy) {
            if (status === 'starting')
                await this.statuses.set(config.name, 'running');
            return;
        }
        this.log.info(`restarting the proxy of workload ${config.name} on port ${config.port}`);
        await this.lifecycle.relaunchProxy(config);
    }
}
//# sourceMappingURL=reconcile.js.map