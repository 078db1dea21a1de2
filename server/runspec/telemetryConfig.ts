/**
 * A workload's `telemetry_config` (interface spec §2.17, ToolHive's fields) checked and
 * resolved, without loading OpenTelemetry: the proxy loads it only when this says telemetry is on.
 *
 * - `endpoint`: an OTLP/HTTP collector, as a URL (`http://127.0.0.1:4318`) or, as ToolHive
 *   takes it, `host:port` (https, or http with `insecure`); `/v1/traces` and `/v1/metrics` are
 *   appended. Traces need it; metrics go there when it is set.
 * - `enablePrometheusMetricsPath`: metrics on `/metrics` of the proxy's own port.
 * - `samplingRate`: the share of traces kept, `"0"`–`"1"` (default 0.1, as ToolHive's); a
 *   client's sampled `traceparent` decides for its own trace.
 */
import type { TelemetryConfig } from '../../protocol/runConfig.js';

export interface TelemetrySettings {
	readonly serviceName: string;
	readonly serviceVersion: string | undefined;
	/** Base URL of the OTLP/HTTP collector. */
	readonly endpoint: URL | undefined;
	readonly headers: Readonly<Record<string, string>>;
	readonly caCertPath: string | undefined;
	readonly tracing: boolean;
	readonly metrics: boolean;
	readonly prometheus: boolean;
	readonly samplingRate: number;
	/** Resource attributes: `customAttributes` and the values of `environmentVariables`. */
	readonly attributes: Readonly<Record<string, string>>;
}

export const DEFAULT_SERVICE_NAME = 'hangar';
/** ToolHive's default: a tenth of the traces that no client's `traceparent` decides for. */
export const DEFAULT_SAMPLING_RATE = 0.1;

/** The field at fault and why, or undefined when the configuration is sound. */
export function telemetryConfigProblem(config: TelemetryConfig): { field: string; message: string } | undefined {
	if (config.samplingRate !== undefined && config.samplingRate !== '') {
		const rate = Number(config.samplingRate);
		if (!Number.isFinite(rate) || rate < 0 || rate > 1) return { field: 'samplingRate', message: `must be a number from 0 to 1, not ${JSON.stringify(config.samplingRate)}` };
	}
	if (config.endpoint && !endpointOf(config)) return { field: 'endpoint', message: `${JSON.stringify(config.endpoint)} is neither an http(s) URL nor host:port` };
	if (config.tracingEnabled && !config.endpoint) return { field: 'endpoint', message: 'tracing needs the OTLP endpoint spans go to (--otel-endpoint)' };
	if (config.metricsEnabled && !config.endpoint && !config.enablePrometheusMetricsPath) {
		return { field: 'endpoint', message: 'metrics need the OTLP endpoint (--otel-endpoint) or the Prometheus path (--otel-enable-prometheus-metrics-path)' };
	}
	for (const name of Object.keys(config.headers ?? {})) {
		if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) return { field: `headers.${name}`, message: 'is not a valid HTTP header name' };
	}
	return undefined;
}

function endpointOf(config: TelemetryConfig): URL | undefined {
	const raw = config.endpoint?.trim();
	if (!raw) return undefined;
	try {
		const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `${config.insecure ? 'http' : 'https'}://${raw}`);
		return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
	} catch {
		return undefined;
	}
}

/** What the proxy should do, or undefined when telemetry is off (nothing of OpenTelemetry loads). */
export function telemetrySettingsOf(config: TelemetryConfig | undefined, env: NodeJS.ProcessEnv = process.env): TelemetrySettings | undefined {
	if (!config) return undefined;
	const endpoint = endpointOf(config);
	const tracing = Boolean(config.tracingEnabled && endpoint);
	const prometheus = Boolean(config.enablePrometheusMetricsPath);
	const metrics = Boolean(config.metricsEnabled && endpoint);
	if (!tracing && !metrics && !prometheus) return undefined;
	const attributes: Record<string, string> = { ...config.customAttributes };
	for (const name of config.environmentVariables ?? []) if (env[name] !== undefined) attributes[name] = env[name]!;
	return {
		serviceName: config.serviceName || DEFAULT_SERVICE_NAME,
		serviceVersion: config.serviceVersion || undefined,
		endpoint,
		headers: config.headers ?? {},
		caCertPath: config.caCertPath || undefined,
		tracing,
		metrics,
		prometheus,
		samplingRate: config.samplingRate ? Number(config.samplingRate) : DEFAULT_SAMPLING_RATE,
		attributes,
	};
}
