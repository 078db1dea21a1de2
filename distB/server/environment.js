/**
 * What services share for the life of a process: where state lives, a logger, and the
 * notification bus that the daemon forwards to its client.
 */
import { EventEmitter } from 'node:events';
import { createLogger } from './log.js';
import { resolvePaths } from './store/paths.js';
export class Notifier {
    emitter = new EventEmitter();
    notify(definition, params) {
        this.emitter.emit('notification', definition.method, params);
    }
    subscribe(listener) {
        this.emitter.on('notification', listener);
        return () => this.emitter.off('notification', listener);
    }
}
export function createEnvironment(component, env = process.env) {
    return { paths: resolvePaths(env), log: createLogger(component), notifier: new Notifier() };
}
//# sourceMappingURL=environment.js.map