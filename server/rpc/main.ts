/**
 * Entry of `hangar daemon` over the process's stdio.
 */
import { createEnvironment } from '../environment.js';
import { startDaemon } from './daemon.js';
import { readManifest } from './manifest.js';

export function runDaemon(): void {
	const environment = createEnvironment('daemon');
	startDaemon(
		environment,
		readManifest(),
		async () => (await import('../services.js')).createDispatcher(environment, { door: 'daemon' }),
		{ input: process.stdin, output: process.stdout, onExit: (code) => process.exit(code) },
	);
}
