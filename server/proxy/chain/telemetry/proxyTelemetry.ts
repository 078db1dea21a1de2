/**
 * OpenTelemetry for one workload's proxy, loaded (with every OpenTelemetry package) only when its
 * `telemetry_config` turns something on.
 *
 * Traces: one SERVER span per client request, named `<method> <target>` as the MCP semantic
 * conventions name it, with the method, the tool/prompt/resource, the session, the protocol
 * revision, the JSON-RPC error code, the authorization decision and the HTTP status; its
 * child, a CLIENT span `upstream <method>`, times the server's part. A client's W3C
 * `traceparent` (HTTP header, or `params._meta` as 2026-07-28 carries it) is the parent; the
 * upstream span's context goes to HTTP servers as `traceparent` and replaces a `_meta`
 * `traceparent` the client sent. Spans go by OTLP/HTTP (protobuf, otlpSpans.ts) in batches, sent
 * from a thread of their own (otlpSender.ts), as the OTLP metrics are. The request's
 * span travels down the chain on the call (`McpCall.span`), so a request the proxy makes on a
 * call's behalf (authorization's `tools/list`) hangs under it too.
 *
 * Metrics (proxyMetrics.ts): by OTLP/HTTP every 10 s when an endpoint is set, and on `/metrics`
 * in Prometheus' text format when asked for.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ROOT_CONTEXT, SpanKind, trace, type SpanContext } from '@opentelemetry/api';
import { ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { JsonMetricsSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type MetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import type { Logger } from '../../../log.js';
import type { BackendState } from '../../core/backend.js';
import { callWith, type CallSpan, type HttpHandler, type McpCall, type McpHandler, type McpMiddleware } from '../chain.js';
import type { JsonRpcResponse } from '../../core/jsonrpc.js';
import { outboundContext } from '../../net/outbound.js';
import type { TelemetrySettings } from '../../../runspec/telemetryConfig.js';
import { exporterOptions, resourceAttributesOf } from '../../../telemetry/otlp.js';
import { OtlpSender } from './otlpSender.js';
import { encodeSpanRequest, type SpanAttributes } from './otlpSpans.js';
import type { CallListener } from './callStats.js';
import { ProxyMetrics, type RequestStatus } from './proxyMetrics.js';
import { RecordedSpan, SpanRecorder, UNSAMPLED_ROOT, type SpanDescription, type SpanExporter } from './spanRecorder.js';
import { tagsOf } from '../../core/tags.js';

const METRICS_INTERVAL_MS = 10_000;
export const METRICS_PATH = '/metrics';

export interface ProxyTelemetryOptions {
	readonly workload: string;
	/** Whether the workload authorizes requests (the spans then carry the decision). */
	readonly authorizes: boolean;
	/** How many client sessions are open now. */
	readonly sessions: () => number;
	/** Whether the server is reached over HTTP, where a call's trace goes along in headers. */
	readonly httpUpstream: boolean;
	readonly log: Logger;
}

export interface ProxyTelemetry {
	/** First in the MCP chain after the call statistics: the request's span. */
	readonly request: McpMiddleware;
	/** The metrics of a call the call statistics timed, when metrics are on. */
	readonly callEnded: CallListener | undefined;
	/** Last in the MCP chain, next to the backend: the upstream span and its propagation. */
	readonly upstream: McpMiddleware;
	/** `/metrics`, when Prometheus is asked for. */
	readonly routes: ReadonlyMap<string, HttpHandler>;
	/** Called on every change of the backend's state (reconnections are counted). */
	backendState(state: BackendState): void;
	/** Counts a guardrail's finding by rule, action and direction, when metrics are on. */
	guardrailFinding(rule: string, action: string, direction: string): void;
	/** Sends what is pending and stops. */
	close(): Promise<void>;
}

const propagator = new W3CTraceContextPropagator();

const headerGetter = {
	get: (carrier: Record<string, unknown>, key: string) => {
		const value = carrier[key];
		return typeof value === 'string' ? value : Array.isArray(value) ? (value[0] as string) : undefined;
	},
	keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
};

/** The span a client's W3C `traceparent` (and `tracestate`) names, if valid. */
function clientSpanOf(carrier: Record<string, unknown>): SpanContext | undefined {
	return trace.getSpanContext(propagator.extract(ROOT_CONTEXT, carrier, headerGetter));
}

/** What a request acts on, by the MCP semantic conventions' attribute names. */
function targetAttributes(method: string, params: Record<string, unknown>): { target: string | undefined; attributes: SpanAttributes } {
	// A fresh object each time: the caller adds to it.
	const name = typeof params.name === 'string' ? params.name : undefined;
	const uri = typeof params.uri === 'string' ? params.uri : undefined;
	if (method === 'tools/call') return { target: name, attributes: { 'gen_ai.tool.name': name, 'gen_ai.operation.name': 'execute_tool' } };
	if (method === 'prompts/get') return { target: name, attributes: { 'gen_ai.prompt.name': name } };
	if (uri) return { target: uri, attributes: { 'mcp.resource.uri': uri } };
	return { target: undefined, attributes: {} };
}

function protocolVersionOf(call: McpCall): string | undefined {
	const header = call.exchange.request.headers['mcp-protocol-version'];
	if (typeof header === 'string') return header;
	const params = call.request.params ?? {};
	const meta = params._meta as Record<string, unknown> | undefined;
	const version = call.request.method === 'initialize' ? params.protocolVersion : meta?.['io.modelcontextprotocol/protocolVersion'];
	return typeof version === 'string' ? version : undefined;
}

/** How a request ended, for its metrics and its span. */
interface Outcome {
	readonly status: RequestStatus;
	readonly httpStatus: number;
}

const ANSWERED: Outcome = { status: 'ok', httpStatus: 200 };

/** `ok`, `error` (a JSON-RPC error from the server), or why the proxy refused. */
function statusOf(response: JsonRpcResponse): Outcome {
	if (!response.error) return ANSWERED;
	const httpStatus = tagsOf(response)?.refusal?.status ?? 200;
	if (httpStatus === 403) return { status: 'denied', httpStatus };
	if (httpStatus === 429) return { status: 'rate_limited', httpStatus };
	if (httpStatus === 401) return { status: 'unauthorized', httpStatus };
	return { status: 'error', httpStatus };
}

/** The name and attributes of a request's span. */
function describeRequest(call: McpCall): SpanDescription {
	const { method } = call.request;
	const { target, attributes } = targetAttributes(method, call.request.params ?? {});
	attributes['mcp.method.name'] = method;
	attributes['mcp.session.id'] = call.session.id;
	attributes['jsonrpc.request.id'] = String(call.request.id);
	const version = protocolVersionOf(call);
	if (version) attributes['mcp.protocol.version'] = version;
	return { name: target ? `${method} ${target}` : method, attributes };
}

/** The name and attributes of the span of a call's way to the server. */
function describeUpstream(call: McpCall): SpanDescription {
	return { name: `upstream ${call.request.method}`, attributes: { 'mcp.method.name': call.request.method } };
}

/** The span of the client's own, from `params._meta` or the HTTP headers. */
function clientParentOf(call: McpCall): SpanContext | undefined {
	const meta = call.request.params?._meta as Record<string, unknown> | undefined;
	if (typeof meta?.traceparent === 'string') return clientSpanOf(meta);
	const { headers } = call.exchange.request;
	return headers.traceparent ? clientSpanOf(headers) : undefined;
}

function finishRequestSpan(span: RecordedSpan, response: JsonRpcResponse | undefined, authorizes: boolean): void {
	if (response) {
		const { status, httpStatus } = statusOf(response);
		span.attributes['http.response.status_code'] = httpStatus;
		if (authorizes) span.attributes['hangar.authz.decision'] = status === 'denied' ? 'deny' : 'allow';
		if (response.error) {
			span.attributes['rpc.jsonrpc.error_code'] = response.error.code;
			span.attributes['error.type'] = String(response.error.code);
			span.fail(response.error.message);
		}
	} else {
		span.fail('the proxy failed');
	}
	span.end();
}

/** Batches of the proxy's spans, sent by `sender` as `ExportTraceServiceRequest`s. */
function spanSender(sender: OtlpSender, resource: SpanAttributes): SpanExporter {
	return {
		export: (spans, done) => sender.send('traces', { body: encodeSpanRequest(resource, 'hangar-proxy', spans), count: spans.count }, done),
	};
}

/** The proxy's metrics, in OTLP's JSON as the official HTTP exporter writes them, sent by `sender`. */
function metricSender(sender: OtlpSender): PushMetricExporter {
	return {
		export(resourceMetrics, done) {
			const body = JsonMetricsSerializer.serializeRequest(resourceMetrics);
			if (!body) return done({ code: ExportResultCode.FAILED, error: new Error('the metrics could not be encoded') });
			const count = resourceMetrics.scopeMetrics.reduce((sum, scope) => sum + scope.metrics.reduce((points, metric) => points + metric.dataPoints.length, 0), 0);
			sender.send('metrics', { body, count }, done);
		},
		forceFlush: () => Promise.resolve(),
		shutdown: () => Promise.resolve(),
	};
}

export async function startTelemetry(settings: TelemetrySettings, options: ProxyTelemetryOptions): Promise<ProxyTelemetry> {
	const resourceAttributes = resourceAttributesOf(settings, { 'hangar.workload': options.workload });
	const resource = resourceFromAttributes(resourceAttributes);
	const closers: Array<() => Promise<void>> = [];
	const routes = new Map<string, HttpHandler>();

	const sender = settings.tracing || settings.metrics
		? new OtlpSender({ traces: settings.tracing ? exporterOptions(settings, 'traces') : undefined, metrics: settings.metrics ? exporterOptions(settings, 'metrics') : undefined }, options.log)
		: undefined;
	const spans = sender && settings.tracing ? new SpanRecorder(spanSender(sender, resourceAttributes), settings.samplingRate, options.log) : undefined;
	// The HTTP backend finds a call's trace by the signal it is handed (no context manager: an
	// AsyncLocalStorage one taxes every promise of the process). Over stdio nothing asks.
	const upstreams = spans && options.httpUpstream ? new WeakMap<AbortSignal, CallSpan>() : undefined;
	if (spans) closers.push(() => spans.flush());
	if (upstreams) outboundContext.headers = (signal) => upstreams.get(signal)?.headers;

	const readers: MetricReader[] = [];
	const metrics = settings.metrics || settings.prometheus ? new ProxyMetrics(resource, options.sessions) : undefined;
	if (metrics && sender && settings.metrics) {
		const exporter = metricSender(sender);
		readers.push(new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: METRICS_INTERVAL_MS, metricProducers: [metrics] }));
	}
	if (metrics && settings.prometheus) {
		const exporter = new PrometheusExporter({ preventServerStart: true, metricProducers: [metrics] });
		readers.push(exporter);
		routes.set(METRICS_PATH, async ({ request, response }: { request: IncomingMessage; response: ServerResponse }) => {
			if (request.method !== 'GET' && request.method !== 'HEAD') {
				response.writeHead(405, { Allow: 'GET, HEAD' }).end();
				return;
			}
			exporter.getMetricsRequestHandler(request, response);
		});
	}
	if (readers.length) {
		// The readers collect from `metrics`; the provider is what binds them.
		const meterProvider = new MeterProvider({ resource, readers });
		closers.push(() => meterProvider.shutdown());
	}

	/** A call's metrics, timed by the call statistics (response undefined when the chain failed). */
	const callEnded: CallListener | undefined =
		metrics &&
		((call, response, ms) => {
			const { method } = call.request;
			const tool = method === 'tools/call' ? String(call.request.params?.name ?? '') : undefined;
			metrics.request(method, tool, response ? statusOf(response).status : 'error', response?.error?.code, ms / 1000);
		});

	// Neither middleware is async: a promise of its own per call is measurable here.
	const request: McpMiddleware = (call, next) => {
		// A call a backend made for its client's (core/backend.ts CallOrigin) comes with that call's span: its own hangs under it, or, unsampled, it is not traced either.
		if (call.span && !(call.span instanceof RecordedSpan)) return next(call);
		const span = spans?.start(SpanKind.SERVER, describeRequest, call, call.span instanceof RecordedSpan ? call.span.context : clientParentOf(call));
		// A call without a span is in no trace: most calls go on as they came.
		if (!(span instanceof RecordedSpan)) return next(span && span !== UNSAMPLED_ROOT ? callWith(call, { span }) : call);
		return next(callWith(call, { span })).then(
			(response) => {
				finishRequestSpan(span, response, options.authorizes);
				return response;
			},
			(error: unknown) => {
				finishRequestSpan(span, undefined, options.authorizes);
				throw error;
			},
		);
	};

	// An unsampled call, the most of them, goes on as it came.
	const upstream: McpMiddleware = (call, next) => {
		if (!spans) return next(call);
		const parent = call.span;
		if (parent instanceof RecordedSpan) return timedUpstream(call, next, parent.child(SpanKind.CLIENT, describeUpstream, call));
		return untimedUpstream(call, next, parent ?? UNSAMPLED_ROOT);
	};

	/** Nothing to time. An HTTP server still hears that the trace is not sampled. */
	const untimedUpstream = (call: McpCall, next: McpHandler, span: CallSpan): Promise<JsonRpcResponse> => {
		if (!upstreams) return next(call);
		upstreams.set(call.signal, span);
		return next(call).finally(() => upstreams.delete(call.signal));
	};

	const timedUpstream = (call: McpCall, next: McpHandler, span: RecordedSpan): Promise<JsonRpcResponse> => {
		const { signal } = call;
		upstreams?.set(signal, span);
		const meta = call.request.params?._meta as Record<string, unknown> | undefined;
		if (typeof meta?.traceparent === 'string') {
			// The server's own spans then hang under the proxy's.
			call = callWith(call, { request: { ...call.request, params: { ...call.request.params, _meta: { ...meta, ...span.headers } } } });
		}
		return next(call).then(
			(response) => {
				upstreams?.delete(signal);
				if (response.error) span.fail(response.error.message);
				span.end();
				return response;
			},
			(error: unknown) => {
				upstreams?.delete(signal);
				span.end();
				throw error;
			},
		);
	};

	let lost = false;
	return {
		request,
		callEnded,
		upstream,
		routes,
		guardrailFinding(rule, action, direction) {
			metrics?.guardrailFinding(rule, action, direction);
		},
		backendState(state) {
			if (state === 'disconnected') lost = true;
			else if (state === 'connected' && lost) {
				lost = false;
				metrics?.restarted();
			}
		},
		async close() {
			outboundContext.headers = undefined;
			await Promise.allSettled(closers.map((close) => close()));
			// Last: the spans and metrics flushed above go through it.
			await sender?.shutdown();
		},
	};
}
