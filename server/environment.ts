/**
 * What services share for the life of a process: where state lives, a logger, and the
 * notification bus that the daemon forwards to its client.
 */
import { EventEmitter } from 'node:events';
import type { z } from 'zod';
import type { NotificationMethod, Notifications } from '../protocol/methods.js';
import { createLogger, type Logger } from './log.js';
import { resolvePaths, type HangarPaths } from './store/paths.js';

export type NotificationListener = (method: string, params: unknown) => void;

export class Notifier {
	private readonly emitter = new EventEmitter();

	notify<M extends NotificationMethod>(method: M, params: z.output<Notifications[M]['params']>): void {
		this.emitter.emit('notification', method, params);
	}

	subscribe(listener: NotificationListener): () => void {
		this.emitter.on('notification', listener);
		return () => this.emitter.off('notification', listener);
	}
}

export interface Environment {
	readonly paths: HangarPaths;
	readonly log: Logger;
	readonly notifier: Notifier;
}

export function createEnvironment(component: string, env: NodeJS.ProcessEnv = process.env): Environment {
	return { paths: resolvePaths(env), log: createLogger(component), notifier: new Notifier() };
}
