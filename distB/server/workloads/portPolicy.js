/**
 * Which port a workload's proxy gets: the one asked for, else the one it keeps across
 * restarts and updates, else a free one no other workload keeps; and a new one when another
 * program took its port while it was stopped.
 */
import { HangarError } from '../../protocol/errors.js';
import { isPortFree, pickFreePort } from './portAllocator.js';
export class PortPolicy {
    store;
    log;
    constructor(store, log) {
        this.store = store;
        this.log = log;
    }
    /**
     * The proxy port: the one asked for (400 when taken), else the workload's current one, else
     * a free port no other workload keeps.
     */
    async choose(config, requested, previous) {
        const host = config.host ?? '127.0.0.1';
        const others = await this.othersOf(config);
        if (requested) {
            const holder = others.find((other) => other.port === requested);
            if (holder)
                throw HangarError.badRequest(`invalid proxy_port: port ${requested} is kept by workload ${holder.name}`, 'port_unavailable');
            if (requested !== previous?.port && !(await isPortFree(requested, host))) {
                throw HangarError.badRequest(`invalid proxy_port: requested proxy port ${requested} is not available`, 'port_unavailable');
            }
            return requested;
        }
        if (previous?.port)
            return previous.port;
        return pickFreePort(host, new Set(others.map((other) => other.port ?? 0)));
    }
    /**
     * A stopped workload keeps its port; if another program took it meanwhile, the workload moves
     * to a free one (and registered clients follow). Returns the old port when it moved.
     */
    async keep(config) {
        const host = config.host ?? '127.0.0.1';
        if (await isPortFree(config.port, host))
            return undefined;
        const old = config.port;
        const others = await this.othersOf(config);
        config.port = await pickFreePort(host, new Set(others.map((other) => other.port ?? 0)));
        await this.store.configs.update(config.name, (stored) => ({ ...stored, port: config.port }));
        this.log.warn(`port ${old} of workload ${config.name} is taken by another program; moved to ${config.port}`);
        return old;
    }
    async othersOf(config) {
        return (await this.store.configs.list()).filter((other) => other.name !== config.name);
    }
}
//# sourceMappingURL=portPolicy.js.map