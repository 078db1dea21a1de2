/**
 * One SERVER span per management operation, named by its method (`workloads/create`), with the
 * door, and on failure the error's code and HTTP status; sent by OTLP/HTTP like the proxies'.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { HangarError } from '../../protocol/errors.js';
import type { OperationInterceptor } from '../dispatch.js';
import type { TelemetrySettings } from '../runspec/telemetryConfig.js';
import { resourceOf, startTracing } from './otlp.js';
import { within } from '../within.js';

const CLOSE_WAIT_MS = 2_000;

/** The long-running door whose operations are traced. */
export type Door = 'daemon' | 'serve';

export function traceOperations(settings: TelemetrySettings, door: Door): OperationInterceptor {
	const { tracer, shutdown } = startTracing(settings, resourceOf(settings, { 'hangar.door': door }), `hangar-${door}`);
	const around: OperationInterceptor['around'] = async (method, run) => {
		const span = tracer.startSpan(method, {
			kind: SpanKind.SERVER,
			attributes: { 'rpc.system': door === 'daemon' ? 'jsonrpc' : 'http', 'rpc.method': method, 'hangar.door': door },
		});
		try {
			return await run();
		} catch (error) {
			const failure = error instanceof HangarError ? error : undefined;
			span.setAttributes({ 'error.type': failure?.code ?? 'internal_error', 'http.response.status_code': failure?.status ?? 500 });
			span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
			throw error;
		} finally {
			span.end();
		}
	};
	// An exiting door waits for its last spans, but not for a collector that does not answer.
	const close = () => within(shutdown(), CLOSE_WAIT_MS, undefined);
	return { around, close };
}
