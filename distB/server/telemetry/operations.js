import { telemetrySettingsOf } from '../runspec/telemetryConfig.js';
/** The interceptor that traces each operation, or undefined when tracing is off. */
export async function operationTracing(config, door) {
    const settings = telemetrySettingsOf(config);
    if (!settings?.tracing)
        return undefined;
    const { traceOperations } = await import('./operationSpans.js');
    return traceOperations(settings, door);
}
//# sourceMappingURL=operations.js.map