/**
 * System: health and version of the service itself.
 */
import { z } from 'zod';
import { NoParams } from './common.js';
import { operation } from './operation.js';
export const HealthReport = z.object({
    status: z.literal('ok'),
    /** The container engine, once the service checks one. */
    runtime: z.object({ name: z.string(), version: z.string().optional() }).optional(),
});
/**
 * Health of the service: 204 over REST (no body), the report over RPC. Fails with 503 when a
 * part the service depends on does not answer.
 */
export const Health = operation({
    method: 'system/health',
    summary: 'Health check',
    params: NoParams,
    result: HealthReport,
    rest: { verb: 'GET', path: '/health', status: 204, response: 'empty' },
    errors: [503],
    example: {},
});
/** Version of the running service. */
export const Version = operation({
    method: 'system/version',
    summary: 'Service version',
    params: NoParams,
    result: z.object({ version: z.string() }),
    rest: { verb: 'GET', path: '/api/v1beta/version', status: 200 },
    errors: [],
    example: {},
});
//# sourceMappingURL=protocol.system.js.map