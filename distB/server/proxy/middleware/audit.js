import { refusalOf } from '../chain.js';
import { auditEvent, capture, eventTypeOf, outcomeOf, targetOf } from '../security/auditEvent.js';
import { DEFAULT_MAX_DATA_SIZE } from '../security/auditLog.js';
export class Auditor {
    log;
    config;
    component;
    ssePaths;
    /** Exchanges whose calls the MCP side logged. */
    audited = new WeakSet();
    /** Client name and version of each session, from its `initialize`. */
    clients = new WeakMap();
    maxDataSize;
    constructor(log, config, component, 
    /** Paths of the legacy SSE transport, to tell transports apart. */
    ssePaths) {
        this.log = log;
        this.config = config;
        this.component = component;
        this.ssePaths = ssePaths;
        this.maxDataSize = config.maxDataSize ?? DEFAULT_MAX_DATA_SIZE;
    }
    http = async (exchange, next) => {
        const started = performance.now();
        let failed = false;
        try {
            await next(exchange);
        }
        catch (error) {
            failed = true;
            throw error;
        }
        finally {
            if (!this.audited.has(exchange))
                this.httpEvent(exchange, performance.now() - started, failed);
        }
    };
    mcp = async (call, next) => {
        this.audited.add(call.exchange);
        const { method, params } = call.request;
        if (method === 'initialize')
            this.clients.set(call.session, clientInfoOf(params));
        const type = eventTypeOf(method);
        if (!this.log.wants(type))
            return next(call);
        const started = performance.now();
        let response;
        try {
            response = await next(call);
        }
        catch (error) {
            this.mcpEvent(call, type, undefined, performance.now() - started);
            throw error;
        }
        this.mcpEvent(call, type, response, performance.now() - started);
        return response;
    };
    /** Notifications and responses: one event each, `mcp_notification` (or the method's own type) or `mcp_response`. */
    notice = async (notice, next) => {
        this.audited.add(notice.exchange);
        const { message, exchange, session } = notice;
        const method = 'method' in message ? message.method : undefined;
        const type = method ? eventTypeOf(method) : 'mcp_response';
        if (!this.log.wants(type))
            return next(notice);
        const started = performance.now();
        let refused;
        let failed = false;
        try {
            refused = await next(notice);
        }
        catch (error) {
            failed = true;
            throw error;
        }
        finally {
            const data = {};
            if (this.config.includeRequestData)
                this.put(data, 'request', method ? ('params' in message ? message.params ?? {} : {}) : message.result ?? message.error ?? {});
            this.sessionEvent(exchange, session, {
                type,
                target: method ? targetOf(method, 'params' in message ? message.params : undefined, exchange.path) : { type: 'server', endpoint: exchange.path },
                outcome: failed ? 'error' : refused ? outcomeOf(refusalOf(refused)?.status ?? 400) : 'success',
                durationMs: performance.now() - started,
                data: Object.keys(data).length ? data : undefined,
            });
        }
        return refused;
    };
    transportOf(exchange) {
        return this.ssePaths.has(exchange.path) ? 'sse' : 'streamable-http';
    }
    mcpEvent(call, type, response, durationMs) {
        const { request, exchange, session } = call;
        let outcome = response ? outcomeOf(refusalOf(response)?.status ?? 200) : 'error';
        if (outcome === 'success' && response?.error && this.config.detectApplicationErrors !== false)
            outcome = 'application_error';
        const data = {};
        const extra = {};
        if (this.config.includeRequestData)
            this.put(data, 'request', request.params ?? {});
        if (this.config.includeResponseData && response)
            extra.response_size_bytes = this.put(data, 'response', response.error ?? response.result ?? {});
        this.sessionEvent(exchange, session, {
            type,
            target: targetOf(request.method, request.params, exchange.path),
            outcome,
            durationMs,
            extra,
            data: Object.keys(data).length ? data : undefined,
        });
    }
    /** Writes an event of a message in a client session: who, which session and transport come from the exchange. */
    sessionEvent(exchange, session, fields) {
        this.log.write(auditEvent({
            ...fields,
            component: this.component,
            request: exchange.request,
            identity: exchange.identity,
            // A session another replica opened brings its handshake along.
            client: this.clients.get(session) ?? (session.handshake ? clientInfoOf(session.handshake) : undefined),
            sessionId: session.id,
            transport: this.transportOf(exchange),
        }));
    }
    httpEvent(exchange, durationMs, failed) {
        const { request, response } = exchange;
        const status = failed ? 500 : response.statusCode;
        const first = exchange.messages?.[0];
        const mcpMethod = first && 'method' in first ? first.method : undefined;
        // A GET that an MCP endpoint answers 200 has opened an event stream.
        const stream = request.method === 'GET' && status === 200;
        const type = mcpMethod ? eventTypeOf(mcpMethod) : stream ? 'sse_connection' : 'http_request';
        if (!this.log.wants(type))
            return;
        this.log.write(auditEvent({
            type,
            component: this.component,
            request,
            identity: exchange.identity,
            client: undefined,
            sessionId: headerOf(request.headers['mcp-session-id']) ?? exchange.url.searchParams.get('session_id') ?? undefined,
            transport: this.transportOf(exchange),
            target: mcpMethod ? targetOf(mcpMethod, first && 'params' in first ? first.params : undefined, exchange.path) : { type: 'server', endpoint: exchange.path },
            outcome: outcomeOf(status),
            durationMs,
            extra: { http_method: request.method, http_status: status },
        }));
    }
    /** Puts `value` in `data[key]`, cut to the size limit; returns its full size in bytes. */
    put(data, key, value) {
        const captured = capture(value, this.maxDataSize);
        data[key] = captured.value;
        if (captured.truncated)
            data[`${key}_truncated`] = true;
        return captured.bytes;
    }
}
function headerOf(value) {
    return typeof value === 'string' && value ? value : undefined;
}
function clientInfoOf(params) {
    const info = params?.clientInfo;
    return {
        name: typeof info?.name === 'string' ? info.name : undefined,
        version: typeof info?.version === 'string' ? info.version : undefined,
    };
}
//# sourceMappingURL=audit.js.map