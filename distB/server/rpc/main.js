import { createEnvironment } from '../environment.js';
import { startDaemon } from './daemon.js';
import { readManifest } from './manifest.js';
export function runDaemon() {
    const environment = createEnvironment('daemon');
    let dispatcher;
    startDaemon(environment, readManifest(), async () => (dispatcher = (await import('../services.js')).createDispatcher(environment, { door: 'daemon' })), { input: process.stdin, output: process.stdout, onExit: (code) => void Promise.resolve(dispatcher?.close()).finally(() => process.exit(code)) });
}
//# sourceMappingURL=main.js.map