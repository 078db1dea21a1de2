/**
 * The system rows: health and version.
 */
import { HangarError } from '../protocol/errors.js';
import { implement, type Implementation } from './dispatch.js';
import { reportEngine, type Runtime } from './runtime/runtime.js';
import { VERSION } from './version.js';

/** `runtime`, when given, must answer for the service to be healthy (503 otherwise). */
export function systemImplementations(runtime?: Runtime): Implementation[] {
	return [
		implement('system/health', async () => {
			if (!runtime) return { status: 'ok' as const };
			try {
				return { status: 'ok' as const, runtime: await runtime.info() };
			} catch (error) {
				throw error instanceof HangarError && error.status === 503
					? error
					: new HangarError(503, `the container runtime does not answer: ${(error as Error).message}`, 'runtime_unavailable');
			}
		}),
		implement('system/version', async () => ({ version: `v${VERSION}`, ...(runtime ? { runtime: await reportEngine(runtime) } : {}) })),
	];
}
