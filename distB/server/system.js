/**
 * The system rows: health and version.
 */
import { HangarError } from '../protocol/errors.js';
import { Health, Version } from '../protocol/protocol.system.js';
import { implement } from './dispatch.js';
import { VERSION } from './version.js';
/** `runtime`, when given, must answer for the service to be healthy (503 otherwise). */
export function systemImplementations(runtime) {
    return [
        implement(Health, async () => {
            if (!runtime)
                return { status: 'ok' };
            try {
                return { status: 'ok', runtime: await runtime.info() };
            }
            catch (error) {
                throw error instanceof HangarError && error.status === 503
                    ? error
                    : new HangarError(503, `the container runtime does not answer: ${error.message}`, 'runtime_unavailable');
            }
        }),
        implement(Version, () => ({ version: `v${VERSION}` })),
    ];
}
//# sourceMappingURL=system.js.map