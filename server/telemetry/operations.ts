/**
 * Spans of the management operations a long-running door serves (`hangar daemon`, `hangar
 * serve`), one per operation, when Hangar's global telemetry default turns tracing on.
 * OpenTelemetry is loaded only then.
 */
import type { TelemetryConfig } from '../../protocol/runConfig.js';
import type { OperationInterceptor } from '../dispatch.js';
import { telemetrySettingsOf } from '../runspec/telemetryConfig.js';

export type Door = 'daemon' | 'serve';

/** The interceptor that traces each operation, or undefined when tracing is off. */
export async function operationTracing(config: TelemetryConfig | undefined, door: Door): Promise<OperationInterceptor | undefined> {
	const settings = telemetrySettingsOf(config);
	if (!settings?.tracing) return undefined;
	const { traceOperations } = await import('./operationSpans.js');
	return traceOperations(settings, door);
}
