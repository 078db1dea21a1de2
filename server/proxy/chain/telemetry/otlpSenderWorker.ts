/**
 * The worker thread that sends a proxy's OTLP requests (otlpSender.ts): the official OTLP/HTTP
 * transport, for each signal, fed with request bodies the proxy has already encoded.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { JsonMetricsSerializer, ProtobufTraceSerializer, type IExporterMetricsHelper, type ISerializer } from '@opentelemetry/otlp-transformer';
import type { OtlpRequest, OtlpSignal, SenderAnswer, SenderMessage, SenderOptions } from './otlpSender.js';

/** How each signal goes: its `OTEL_EXPORTER_OTLP_<SIGNAL>_*` variables, path, body type and response decoder. */
const SIGNALS = {
	traces: { env: 'TRACES', path: 'v1/traces', contentType: 'application/x-protobuf', decode: ProtobufTraceSerializer.deserializeResponse, counted: 'span' },
	metrics: { env: 'METRICS', path: 'v1/metrics', contentType: 'application/json', decode: JsonMetricsSerializer.deserializeResponse, counted: 'metric_data_point' },
} as const;

function exporterOf(signal: OtlpSignal, options: SenderOptions[OtlpSignal]): OTLPExporterBase<OtlpRequest> | undefined {
	if (!options) return undefined;
	const { env, path, contentType, decode, counted } = SIGNALS[signal];
	// The body is encoded already: the serializer hands it on, and decodes the response.
	const serializer: ISerializer<OtlpRequest, unknown> = { serializeRequest: (request) => request.body, deserializeResponse: decode };
	const counting: IExporterMetricsHelper<OtlpRequest> = { name: counted, countItems: (request) => request.count };
	const http = convertLegacyHttpOptions(options, env, path, { 'Content-Type': contentType });
	return new OTLPExporterBase(createOtlpHttpExportDelegate(http, serializer, `otlp_http_${signal}_exporter`, counting, undefined));
}

const given = workerData as SenderOptions;
const exporters = { traces: exporterOf('traces', given.traces), metrics: exporterOf('metrics', given.metrics) };
const port = parentPort!;

function answer(message: SenderAnswer): void {
	port.postMessage(message);
}

port.on('message', (message: SenderMessage) => {
	if (message.type === 'shutdown') {
		// Sends what is under way (the transport's shutdown flushes), then lets the thread end.
		void Promise.allSettled(Object.values(exporters).map((exporter) => exporter?.shutdown())).then(() => {
			answer({ type: 'closed' });
			port.close();
		});
		return;
	}
	const { id, signal, body, count } = message;
	const exporter = exporters[signal];
	const settle = ({ code, error }: ExportResult) => answer({ type: 'sent', id, code, error: error?.message });
	if (!exporter) return settle({ code: ExportResultCode.FAILED, error: new Error(`no ${signal} endpoint`) });
	try {
		exporter.export({ body, count }, settle);
	} catch (error) {
		// Every request gets its answer: the proxy's recorder waits for it.
		settle({ code: ExportResultCode.FAILED, error: error as Error });
	}
});
