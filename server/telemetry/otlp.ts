/**
 * What every OpenTelemetry user in Hangar (the proxies, the daemon, `hangar serve`) sets up the
 * same way from `TelemetrySettings`: the resource, the OTLP/HTTP exporters' options and a tracer
 * provider with the configured sampling. Imported only once telemetry is on.
 */
import { readFileSync } from 'node:fs';
import { context, propagation, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import type { TelemetrySettings } from '../runspec/telemetryConfig.js';

export function resourceOf(settings: TelemetrySettings, attributes: Readonly<Record<string, string>>): Resource {
	return resourceFromAttributes({
		'service.name': settings.serviceName,
		...(settings.serviceVersion ? { 'service.version': settings.serviceVersion } : {}),
		...attributes,
		...settings.attributes,
	});
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

/** A tracer sending batches by OTLP/HTTP, with W3C trace context as the process's propagator. */
export function startTracing(settings: TelemetrySettings, resource: Resource, name: string): { tracer: Tracer; shutdown: () => Promise<void> } {
	context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
	propagation.setGlobalPropagator(new W3CTraceContextPropagator());
	const provider = new BasicTracerProvider({
		resource,
		sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.samplingRate) }),
		spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter(exporterOptions(settings, 'traces')))],
	});
	return { tracer: provider.getTracer(name), shutdown: () => provider.shutdown() };
}
