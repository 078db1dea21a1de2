/**
 * Entry of `hangar daemon` over the process's stdio.
 */
import type { Dispatcher } from '../dispatch.js';
import { createEnvironment } from '../environment.js';
import { startDaemon } from './daemon.js';
import { readManifest } from './manifest.js';

export function runDaemon(): void {
	const environment = createEnvironment('daemon');
	let dispatcher: Dispatcher | undefined;
	startDaemon(
		environment,
		readManifest(),
		async () => (dispatcher = (await import('../services.js')).createDispatcher(environment, { door: 'daemon' })),
		{ input: process.stdin, output: process.stdout, onExit: (code) => void Promise.resolve(dispatcher?.close()).finally(() => process.exit(code)) },
	);
}
