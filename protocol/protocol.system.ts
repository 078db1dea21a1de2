/**
 * System: health and version of the service itself.
 */
import { z } from 'zod';
import { NoParams } from './common.js';
import { operation } from './operation.js';

/** The container engine: `docker` or `podman`, its version, where it answers and how Hangar found it. */
export const EngineReport = z.object({
	name: z.string(),
	version: z.string().optional(),
	address: z.string().optional(),
	found_by: z.string().optional(),
});

export const HealthReport = z.object({
	status: z.literal('ok'),
	/** The container engine, once the service checks one. */
	runtime: EngineReport.optional(),
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
	result: z.object({
		version: z.string(),
		/** Hangar: the container engine in use (`name` is `none` when nothing answers at the address found). */
		runtime: EngineReport.extend({ error: z.string().optional() }).optional(),
	}),
	rest: { verb: 'GET', path: '/api/v1beta/version', status: 200 },
	errors: [],
	example: {},
});
