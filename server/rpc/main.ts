/**
 * Entry of `hangar daemon` over the process's stdio.
 */
import { constants } from 'node:os';
import type { Dispatcher } from '../dispatch.js';
import { createEnvironment } from '../environment.js';
import { startDaemon } from './daemon.js';
import { readManifest } from '../manifest.js';

export function runDaemon(): void {
	const environment = createEnvironment('daemon');
	let dispatcher: Dispatcher | undefined;
	let exiting = false;
	// Work the calls started in the background ends first (Dispatcher.close).
	const exit = (code: number) => {
		if (exiting) return;
		exiting = true;
		void Promise.resolve(dispatcher?.close()).finally(() => process.exit(code));
	};
	startDaemon(
		environment,
		readManifest(),
		async () => (dispatcher = (await import('../services.js')).createDispatcher(environment, { door: 'daemon' })),
		{ input: process.stdin, output: process.stdout, onExit: exit },
	);
	// Ended by a signal (a service manager, a terminal's Ctrl-C): the same way out, with the signal's code.
	for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => exit(128 + constants.signals[signal]));
}
