export const DEFAULT_SERVICE_NAME = 'hangar';
/** The field at fault and why, or undefined when the configuration is sound. */
export function telemetryConfigProblem(config) {
    if (config.samplingRate !== undefined && config.samplingRate !== '') {
        const rate = Number(config.samplingRate);
        if (!Number.isFinite(rate) || rate < 0 || rate > 1)
            return { field: 'samplingRate', message: `must be a number from 0 to 1, not ${JSON.stringify(config.samplingRate)}` };
    }
    if (config.endpoint && !endpointOf(config))
        return { field: 'endpoint', message: `${JSON.stringify(config.endpoint)} is neither an http(s) URL nor host:port` };
    if (config.tracingEnabled && !config.endpoint)
        return { field: 'endpoint', message: 'tracing needs the OTLP endpoint spans go to (--otel-endpoint)' };
    if (config.metricsEnabled && !config.endpoint && !config.enablePrometheusMetricsPath) {
        return { field: 'endpoint', message: 'metrics need the OTLP endpoint (--otel-endpoint) or the Prometheus path (--otel-enable-prometheus-metrics-path)' };
    }
    for (const name of Object.keys(config.headers ?? {})) {
        if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name))
            return { field: `headers.${name}`, message: 'is not a valid HTTP header name' };
    }
    return undefined;
}
function endpointOf(config) {
    const raw = config.endpoint?.trim();
    if (!raw)
        return undefined;
    try {
        const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `${config.insecure ? 'http' : 'https'}://${raw}`);
        return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
    }
    catch {
        return undefined;
    }
}
/** What the proxy should do, or undefined when telemetry is off (nothing of OpenTelemetry loads). */
export function telemetrySettingsOf(config, env = process.env) {
    if (!config)
        return undefined;
    const endpoint = endpointOf(config);
    const tracing = Boolean(config.tracingEnabled && endpoint);
    const prometheus = Boolean(config.enablePrometheusMetricsPath);
    const metrics = Boolean(config.metricsEnabled && endpoint);
    if (!tracing && !metrics && !prometheus)
        return undefined;
    const attributes = { ...config.customAttributes };
    for (const name of config.environmentVariables ?? [])
        if (env[name] !== undefined)
            attributes[name] = env[name];
    return {
        serviceName: config.serviceName || DEFAULT_SERVICE_NAME,
        serviceVersion: config.serviceVersion || undefined,
        endpoint,
        headers: config.headers ?? {},
        caCertPath: config.caCertPath || undefined,
        tracing,
        metrics,
        prometheus,
        samplingRate: config.samplingRate ? Number(config.samplingRate) : 1,
        attributes,
    };
}
//# sourceMappingURL=telemetryConfig.js.map