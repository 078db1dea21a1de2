/**
 * What every OpenTelemetry user in Hangar (the proxies, the daemon, `hangar serve`) sets up the
 * same way from `TelemetrySettings`: the resource, the OTLP/HTTP exporters' options and a tracer
 * provider with the configured sampling. Imported only once telemetry is on.
 */
import { readFileSync } from 'node:fs';
import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import type { TelemetrySettings } from '../runspec/telemetryConfig.js';

/** The resource's attributes: the service, then Hangar's `attributes`, then the user's own. */
export function resourceAttributesOf(settings: TelemetrySettings, attributes: Readonly<Record<string, string>>): Record<string, string> {
	return {
		'service.name': settings.serviceName,
		...(settings.serviceVersion ? { 'service.version': settings.serviceVersion } : {}),
		...attributes,
		...settings.attributes,
	};
}

export function resourceOf(settings: TelemetrySettings, attributes: Readonly<Record<string, string>>): Resource {
	return resourceFromAttributes(resourceAttributesOf(settings, attributes));
}

/** The options of the OTLP/HTTP exporter of `signal` (`<endpoint>/v1/<signal>`). */
export function exporterOptions(settings: TelemetrySettings, signal: 'traces' | 'metrics') {
	const base = settings.endpoint!.href.endsWith('/') ? settings.endpoint! : `${settings.endpoint!.href}/`;
	return {
		url: new URL(`v1/${signal}`, base).href,
		headers: { ...settings.headers },
		...(settings.caCertPath ? { httpAgentOptions: { ca: readFileSync(settings.caCertPath) } } : {}),
	};
}

/** The OTLP/HTTP (protobuf) span exporter to the configured endpoint. */
export function traceExporter(settings: TelemetrySettings): OTLPTraceExporter {
	return new OTLPTraceExporter(exporterOptions(settings, 'traces'));
}

/**
 * A tracer sending batches by OTLP/HTTP. No context manager is installed (an AsyncLocalStorage
 * one taxes every promise of the process): callers pass parents explicitly.
 */
export function startTracing(settings: TelemetrySettings, resource: Resource, name: string): { tracer: Tracer; shutdown: () => Promise<void> } {
	const provider = new BasicTracerProvider({
		resource,
		sampler: new ParentBasedSampler({ root: settings.samplingRate >= 1 ? new AlwaysOnSampler() : new TraceIdRatioBasedSampler(settings.samplingRate) }),
		spanProcessors: [new BatchSpanProcessor(traceExporter(settings))],
	});
	return { tracer: provider.getTracer(name), shutdown: () => provider.shutdown() };
}
