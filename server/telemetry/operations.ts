/**
 * Spans of the management operations a long-running door serves (`hangar daemon`, `hangar
 * serve`), one per operation, when Hangar's global telemetry default turns tracing on.
 * OpenTelemetry is loaded only then.
 */
import type { TelemetryConfig } from '../../protocol/runConfig.js';
import type { OperationInterceptor } from '../dispatch.js';
import { telemetrySettingsOf } from '../runspec/telemetryConfig.js';
// Only its type: the module itself, and OpenTelemetry with it, is loaded by the import() below.
import type { Door } from './operationSpans.js';

export type { Door };

/** The interceptor that traces each operation, or undefined when tracing is off. */
export async function operationTracing(config: TelemetryConfig | undefined, door: Door): Promise<OperationInterceptor | undefined> {
	const settings = telemetrySettingsOf(config);
	if (!settings?.tracing) return undefined;
	const { traceOperations } = await import('./operationSpans.js');
	return traceOperations(settings, door);
}
