import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { refusalOf } from '../chain.js';
import { outboundContext } from '../outbound.js';
import { exporterOptions, resourceOf, traceExporter } from '../../telemetry/otlp.js';
import { SpanRecorder } from './spanRecorder.js';
const METRICS_INTERVAL_MS = 10_000;
/** Series of the request metrics kept at most (tool names come from clients); the rest share one. */
const MAX_SERIES = 2_000;
const OVERFLOW = '';
export const METRICS_PATH = '/metrics';
const propagator = new W3CTraceContextPropagator();
const headerGetter = {
    get: (carrier, key) => {
        const value = carrier[key];
        return typeof value === 'string' ? value : Array.isArray(value) ? value[0] : undefined;
    },
    keys: (carrier) => Object.keys(carrier),
};
/** The span a client's W3C `traceparent` (and `tracestate`) names, if valid. */
function clientSpanOf(carrier) {
    return trace.getSpanContext(propagator.extract(ROOT_CONTEXT, carrier, headerGetter));
}
/** What a request acts on, by the MCP semantic conventions' attribute names. */
function targetAttributes(method, params) {
    // A fresh object each time: the caller adds to it.
    const name = typeof params.name === 'string' ? params.name : undefined;
    const uri = typeof params.uri === 'string' ? params.uri : undefined;
    if (method === 'tools/call')
        return { target: name, attributes: { 'gen_ai.tool.name': name, 'gen_ai.operation.name': 'execute_tool' } };
    if (method === 'prompts/get')
        return { target: name, attributes: { 'gen_ai.prompt.name': name } };
    if (uri)
        return { target: uri, attributes: { 'mcp.resource.uri': uri } };
    return { target: undefined, attributes: {} };
}
function protocolVersionOf(call) {
    const header = call.exchange.request.headers['mcp-protocol-version'];
    if (typeof header === 'string')
        return header;
    const params = call.request.params ?? {};
    const meta = params._meta;
    const version = call.request.method === 'initialize' ? params.protocolVersion : meta?.['io.modelcontextprotocol/protocolVersion'];
    return typeof version === 'string' ? version : undefined;
}
/** `ok`, `error` (a JSON-RPC error from the server), or why the proxy refused. */
function statusOf(response) {
    const httpStatus = refusalOf(response)?.status ?? 200;
    if (httpStatus === 403)
        return { status: 'denied', httpStatus };
    if (httpStatus === 429)
        return { status: 'rate_limited', httpStatus };
    if (httpStatus === 401)
        return { status: 'unauthorized', httpStatus };
    return { status: response.error ? 'error' : 'ok', httpStatus };
}
export async function startTelemetry(settings, options) {
    const resource = resourceOf(settings, { 'hangar.workload': options.workload });
    const closers = [];
    const routes = new Map();
    let spans;
    // No context manager: an AsyncLocalStorage one taxes every promise of the process. The
    // request's span reaches the upstream middleware through `calls`, keyed by the exchange and
    // the request id (middleware in between may replace the call, its request and its signal);
    // the upstream span reaches the HTTP backend (its `traceparent` header) through `upstreams`,
    // keyed by the signal it is handed.
    const calls = new WeakMap();
    const upstreams = new WeakMap();
    if (settings.tracing) {
        const recorder = (spans = new SpanRecorder(traceExporter(settings), resource, settings.samplingRate, options.log));
        outboundContext.headers = (signal) => upstreams.get(signal)?.headers;
        closers.push(() => recorder.shutdown());
    }
    const readers = [];
    if (settings.metrics)
        readers.push(new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter(exporterOptions(settings, 'metrics')), exportIntervalMillis: METRICS_INTERVAL_MS }));
    if (settings.prometheus) {
        const exporter = new PrometheusExporter({ preventServerStart: true });
        readers.push(exporter);
        routes.set(METRICS_PATH, async ({ request, response }) => {
            if (request.method !== 'GET' && request.method !== 'HEAD') {
                response.writeHead(405, { Allow: 'GET, HEAD' }).end();
                return;
            }
            exporter.getMetricsRequestHandler(request, response);
        });
    }
    let record;
    let restarts;
    if (readers.length) {
        const meterProvider = new MeterProvider({ resource, readers });
        const meter = meterProvider.getMeter('hangar-proxy');
        const duration = meter.createHistogram('mcp.server.operation.duration', { unit: 's', description: 'How long the proxy took to answer an MCP request' });
        const denials = meter.createCounter('hangar.proxy.denials', { description: 'Requests the proxy refused (authorization, rate limit)' });
        restarts = meter.createCounter('hangar.proxy.upstream.restarts', { description: 'Times the MCP server came back after being lost' });
        meter.createObservableUpDownCounter('hangar.proxy.sessions.active', { description: 'Client sessions open' }).addCallback((result) => result.observe(options.sessions()));
        // The request count is kept here and observed at export: a call then costs one map look-up
        // instead of a second recording (each hashes its attributes), and reuses its series'
        // attributes object.
        const series = new Map();
        meter
            .createObservableCounter('hangar.proxy.requests', { description: 'MCP requests answered by the proxy' })
            .addCallback((result) => series.forEach(({ attributes, count }) => result.observe(count, attributes)));
        record = (call, response, seconds) => {
            const { method } = call.request;
            const status = response ? statusOf(response).status : 'error';
            const tool = method === 'tools/call' ? String(call.request.params?.name ?? '') : undefined;
            const errorType = response?.error ? String(response.error.code) : undefined;
            const key = `${method}\n${status}\n${errorType ?? ''}\n${tool ?? ''}`;
            let entry = series.get(key);
            if (!entry) {
                const full = series.size >= MAX_SERIES;
                entry = full ? series.get(OVERFLOW) : undefined;
                if (!entry) {
                    const attributes = full ? { 'otel.metric.overflow': true } : { 'mcp.method.name': method, status };
                    if (!full && tool !== undefined)
                        attributes['gen_ai.tool.name'] = tool;
                    if (!full && errorType !== undefined)
                        attributes['error.type'] = errorType;
                    entry = { attributes, count: 0 };
                    series.set(full ? OVERFLOW : key, entry);
                }
            }
            entry.count++;
            duration.record(seconds, entry.attributes);
            if (status === 'denied' || status === 'rate_limited')
                denials.add(1, { reason: status === 'denied' ? 'authorization' : 'rate_limit', 'mcp.method.name': method });
        };
        closers.push(() => meterProvider.shutdown());
    }
    const request = async (call, next) => {
        const started = performance.now();
        const { method } = call.request;
        const params = call.request.params ?? {};
        let span;
        let pending;
        if (spans) {
            const meta = params._meta;
            const carrier = typeof meta?.traceparent === 'string' ? meta : call.exchange.request.headers.traceparent ? call.exchange.request.headers : undefined;
            const describe = () => {
                const { target, attributes } = targetAttributes(method, params);
                attributes['mcp.method.name'] = method;
                attributes['mcp.session.id'] = call.session.id;
                attributes['jsonrpc.request.id'] = String(call.request.id);
                const version = protocolVersionOf(call);
                if (version)
                    attributes['mcp.protocol.version'] = version;
                return { name: target ? `${method} ${target}` : method, attributes };
            };
            span = spans.start(SpanKind.SERVER, describe, carrier && clientSpanOf(carrier));
            pending = calls.get(call.exchange);
            if (!pending)
                calls.set(call.exchange, (pending = new Map()));
            pending.set(call.request.id, span);
        }
        let response;
        try {
            response = await next(call);
            return response;
        }
        finally {
            record?.(call, response, (performance.now() - started) / 1000);
            if (span)
                pending.delete(call.request.id);
            if (span?.sampled) {
                if (response) {
                    const { status, httpStatus } = statusOf(response);
                    span.attributes['http.response.status_code'] = httpStatus;
                    if (options.authorizes)
                        span.attributes['hangar.authz.decision'] = status === 'denied' ? 'deny' : 'allow';
                    if (response.error) {
                        span.attributes['rpc.jsonrpc.error_code'] = response.error.code;
                        span.attributes['error.type'] = String(response.error.code);
                        span.fail(response.error.message);
                    }
                }
                else {
                    span.fail('the proxy failed');
                }
                span.end();
            }
        }
    };
    const upstream = async (call, next) => {
        if (!spans)
            return next(call);
        const pending = calls.get(call.exchange);
        // A request the proxy sends on a call's behalf (authorization's tools/list) has an id of its
        // own: it hangs under the exchange's call when there is one only.
        const parent = pending?.get(call.request.id) ?? (pending?.size === 1 ? pending.values().next().value : undefined);
        const describe = () => ({ name: `upstream ${call.request.method}`, attributes: { 'mcp.method.name': call.request.method } });
        const span = parent ? parent.child(SpanKind.CLIENT, describe) : spans.start(SpanKind.CLIENT, describe);
        upstreams.set(call.signal, span);
        const meta = call.request.params?._meta;
        if (typeof meta?.traceparent === 'string') {
            // The server's own spans then hang under the proxy's.
            call = { ...call, request: { ...call.request, params: { ...call.request.params, _meta: { ...meta, ...span.headers } } } };
        }
        try {
            const response = await next(call);
            if (response.error)
                span.fail(response.error.message);
            return response;
        }
        finally {
            upstreams.delete(call.signal);
            span.end();
        }
    };
    let lost = false;
    return {
        request,
        upstream,
        routes,
        backendState(state) {
            if (state === 'disconnected')
                lost = true;
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
//# sourceMappingURL=proxyTelemetry.js.map