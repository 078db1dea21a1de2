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
 * `traceparent` the client sent. Spans go by OTLP/HTTP (JSON) in batches.
 *
 * Metrics: `mcp.server.operation.duration` (histogram, seconds) and `hangar.proxy.requests`
 * (counter) by method, tool and status; `hangar.proxy.denials` by reason; the active sessions;
 * upstream reconnections. By OTLP/HTTP every 10 s when an endpoint is set, and on `/metrics` in
 * Prometheus' text format when asked for.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider, PeriodicExportingMetricReader, type MetricReader } from '@opentelemetry/sdk-metrics';
import type { Logger } from '../../log.js';
import type { BackendState } from '../backend.js';
import { refusalOf, type HttpHandler, type McpCall, type McpMiddleware } from '../chain.js';
import type { JsonRpcResponse } from '../jsonrpc.js';
import { outboundContext } from '../outbound.js';
import type { TelemetrySettings } from '../../runspec/telemetryConfig.js';
import { exporterOptions, resourceOf, startTracing } from '../../telemetry/otlp.js';

const METRICS_INTERVAL_MS = 10_000;
export const METRICS_PATH = '/metrics';

export interface ProxyTelemetryOptions {
	readonly workload: string;
	/** Whether the workload authorizes requests (the spans then carry the decision). */
	readonly authorizes: boolean;
	/** How many client sessions are open now. */
	readonly sessions: () => number;
	readonly log: Logger;
}

export interface ProxyTelemetry {
	/** First in the MCP chain: the request's span and metrics. */
	readonly request: McpMiddleware;
	/** Last in the MCP chain, next to the backend: the upstream span and its propagation. */
	readonly upstream: McpMiddleware;
	/** `/metrics`, when Prometheus is asked for. */
	readonly routes: ReadonlyMap<string, HttpHandler>;
	/** Called on every change of the backend's state (reconnections are counted). */
	backendState(state: BackendState): void;
	/** Sends what is pending and stops. */
	close(): Promise<void>;
}

const headerGetter = {
	get: (carrier: Record<string, unknown>, key: string) => {
		const value = carrier[key];
		return typeof value === 'string' ? value : Array.isArray(value) ? (value[0] as string) : undefined;
	},
	keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
};

/** What a request acts on, by the MCP semantic conventions' attribute names. */
function targetAttributes(method: string, params: Record<string, unknown>): { target: string | undefined; attributes: Attributes } {
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

/** `ok`, `error` (a JSON-RPC error from the server), or why the proxy refused. */
function statusOf(response: JsonRpcResponse): { status: string; httpStatus: number } {
	const httpStatus = refusalOf(response)?.status ?? 200;
	if (httpStatus === 403) return { status: 'denied', httpStatus };
	if (httpStatus === 429) return { status: 'rate_limited', httpStatus };
	if (httpStatus === 401) return { status: 'unauthorized', httpStatus };
	return { status: response.error ? 'error' : 'ok', httpStatus };
}

export async function startTelemetry(settings: TelemetrySettings, options: ProxyTelemetryOptions): Promise<ProxyTelemetry> {
	const resource = resourceOf(settings, { 'hangar.workload': options.workload });
	const closers: Array<() => Promise<void>> = [];
	const routes = new Map<string, HttpHandler>();

	let tracer: Tracer | undefined;
	if (settings.tracing) {
		const tracing = startTracing(settings, resource, 'hangar-proxy');
		tracer = tracing.tracer;
		outboundContext.headers = () => {
			const headers: Record<string, string> = {};
			propagation.inject(context.active(), headers);
			return headers.traceparent ? headers : undefined;
		};
		closers.push(tracing.shutdown);
	}

	const readers: MetricReader[] = [];
	if (settings.metrics) readers.push(new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter(exporterOptions(settings, 'metrics')), exportIntervalMillis: METRICS_INTERVAL_MS }));
	if (settings.prometheus) {
		const exporter = new PrometheusExporter({ preventServerStart: true });
		readers.push(exporter);
		routes.set(METRICS_PATH, async ({ request, response }: { request: IncomingMessage; response: ServerResponse }) => {
			if (request.method !== 'GET' && request.method !== 'HEAD') {
				response.writeHead(405, { Allow: 'GET, HEAD' }).end();
				return;
			}
			exporter.getMetricsRequestHandler(request, response);
		});
	}
	let record: ((call: McpCall, response: JsonRpcResponse | undefined, seconds: number) => void) | undefined;
	let restarts: { add(value: number): void } | undefined;
	if (readers.length) {
		const meterProvider = new MeterProvider({ resource, readers });
		const meter = meterProvider.getMeter('hangar-proxy');
		const duration = meter.createHistogram('mcp.server.operation.duration', { unit: 's', description: 'How long the proxy took to answer an MCP request' });
		const requests = meter.createCounter('hangar.proxy.requests', { description: 'MCP requests answered by the proxy' });
		const denials = meter.createCounter('hangar.proxy.denials', { description: 'Requests the proxy refused (authorization, rate limit)' });
		restarts = meter.createCounter('hangar.proxy.upstream.restarts', { description: 'Times the MCP server came back after being lost' });
		meter.createObservableUpDownCounter('hangar.proxy.sessions.active', { description: 'Client sessions open' }).addCallback((result) => result.observe(options.sessions()));
		record = (call, response, seconds) => {
			const { status } = response ? statusOf(response) : { status: 'error' };
			const tool = call.request.method === 'tools/call' ? String(call.request.params?.name ?? '') : undefined;
			const attributes: Attributes = { 'mcp.method.name': call.request.method, status, ...(tool !== undefined ? { 'gen_ai.tool.name': tool } : {}) };
			if (response?.error) attributes['error.type'] = String(response.error.code);
			duration.record(seconds, attributes);
			requests.add(1, attributes);
			if (status === 'denied' || status === 'rate_limited') denials.add(1, { reason: status === 'denied' ? 'authorization' : 'rate_limit', 'mcp.method.name': call.request.method });
		};
		closers.push(() => meterProvider.shutdown());
	}

	const request: McpMiddleware = async (call, next) => {
		const started = performance.now();
		const { method } = call.request;
		const params = call.request.params ?? {};
		let span: Span | undefined;
		let parent: Context = ROOT_CONTEXT;
		if (tracer) {
			const meta = params._meta as Record<string, unknown> | undefined;
			parent = propagation.extract(ROOT_CONTEXT, typeof meta?.traceparent === 'string' ? meta : call.exchange.request.headers, headerGetter);
			const { target, attributes } = targetAttributes(method, params);
			const version = protocolVersionOf(call);
			span = tracer.startSpan(
				target ? `${method} ${target}` : method,
				{
					kind: SpanKind.SERVER,
					attributes: {
						'mcp.method.name': method,
						'mcp.session.id': call.session.id,
						'jsonrpc.request.id': String(call.request.id),
						'network.protocol.name': 'http',
						...(version ? { 'mcp.protocol.version': version } : {}),
						...attributes,
					},
				},
				parent,
			);
		}
		let response: JsonRpcResponse | undefined;
		try {
			response = span ? await context.with(trace.setSpan(parent, span), () => next(call)) : await next(call);
			return response;
		} finally {
			record?.(call, response, (performance.now() - started) / 1000);
			if (span) {
				if (response) {
					const { status, httpStatus } = statusOf(response);
					span.setAttribute('http.response.status_code', httpStatus);
					if (options.authorizes) span.setAttribute('hangar.authz.decision', status === 'denied' ? 'deny' : 'allow');
					if (response.error) {
						span.setAttribute('rpc.jsonrpc.error_code', response.error.code);
						span.setAttribute('error.type', String(response.error.code));
						span.setStatus({ code: SpanStatusCode.ERROR, message: response.error.message });
					}
				} else {
					span.setStatus({ code: SpanStatusCode.ERROR, message: 'the proxy failed' });
				}
				span.end();
			}
		}
	};

	const upstream: McpMiddleware = async (call, next) => {
		if (!tracer) return next(call);
		const span = tracer.startSpan(`upstream ${call.request.method}`, { kind: SpanKind.CLIENT, attributes: { 'mcp.method.name': call.request.method } });
		const active = trace.setSpan(context.active(), span);
		const meta = call.request.params?._meta as Record<string, unknown> | undefined;
		if (typeof meta?.traceparent === 'string') {
			// The server's own spans then hang under the proxy's.
			const carrier: Record<string, string> = {};
			propagation.inject(active, carrier);
			call = { ...call, request: { ...call.request, params: { ...call.request.params, _meta: { ...meta, ...carrier } } } };
		}
		try {
			const response = await context.with(active, () => next(call));
			if (response.error) span.setStatus({ code: SpanStatusCode.ERROR, message: response.error.message });
			return response;
		} finally {
			span.end();
		}
	};

	let lost = false;
	return {
		request,
		upstream,
		routes,
		backendState(state) {
			if (state === 'disconnected') lost = true;
			else if (state === 'connected' && lost) {
				lost = false;
				restarts?.add(1);
			}
		},
		async close() {
			outboundContext.headers = undefined;
			await Promise.allSettled(closers.map((close) => close()));
		},
	};
}
