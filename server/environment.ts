/**
 * What services share for the life of a process: where state lives, a logger, and the
 * notification bus that the daemon forwards to its client.
 */
import { EventEmitter } from 'node:events';
import type { z } from 'zod';
import type { NotificationDefinition } from '../protocol/operation.js';
import { createLogger, type Logger } from './log.js';
import { resolvePaths, type HangarPaths } from './store/paths.js';

export type NotificationListener = (method: string, params: unknown) => void;

export class Notifier {
	private readonly emitter = new EventEmitter();

	notify<P extends z.ZodType>(definition: NotificationDefinition<P>, params: z.output<P>): void {
		this.emitter.emit('notification', definition.method, params);
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
