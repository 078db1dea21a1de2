/** Interval of keep-alive comments (`HANGAR_PROXY_KEEPALIVE_MS` overrides it). */
export const KEEP_ALIVE_MS = Number(process.env.HANGAR_PROXY_KEEPALIVE_MS) || 15_000;
const SSE_HEADERS = {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    // Reverse proxies in front of this one must not buffer events.
    'X-Accel-Buffering': 'no',
};
export function eventOf(message) {
    return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}
/** A long-lived event stream with keep-alive comments. */
export class EventStream {
    response;
    format;
    timer;
    constructor(response, headers = {}, format = eventOf) {
        this.response = response;
        this.format = format;
        response.writeHead(200, { ...SSE_HEADERS, ...headers });
        response.flushHeaders();
        this.timer = setInterval(() => response.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
        this.timer.unref();
        response.once('close', () => clearInterval(this.timer));
    }
    get open() {
        return !this.response.writableEnded && !this.response.destroyed;
    }
    /** Writes a raw event (`event:` and `data:` lines, blank-line terminated). */
    write(event) {
        if (this.open)
            this.response.write(event);
    }
    send(message) {
        this.write(this.format(message));
    }
    end() {
        clearInterval(this.timer);
        if (this.open)
            this.response.end();
    }
}
/** The reply to one POSTed request: JSON if possible, else an event stream. */
export class ReplyStream {
    response;
    headers;
    format;
    stream;
    timer;
    constructor(response, headers, format = eventOf, 
    /** A long call switches to SSE so keep-alive comments hold the connection open; false keeps the reply JSON unless a message comes first. */
    keepAlive = true) {
        this.response = response;
        this.headers = headers;
        this.format = format;
        this.timer = setTimeout(() => keepAlive && this.open && this.events(), KEEP_ALIVE_MS);
        this.timer.unref();
    }
    events() {
        return (this.stream ??= new EventStream(this.response, this.headers, this.format));
    }
    /** The client is still connected to read what comes. */
    get open() {
        return !this.response.destroyed && !this.response.writableEnded;
    }
    /** The reply sent an event, so the client can resume it from that event's id. */
    sentEvents = false;
    /** A message that must reach the client before the response. */
    send(message) {
        this.sentEvents = true;
        this.events().send(message);
    }
    /** Sends the response: as JSON with `status` (and extra headers) unless an event stream has begun. */
    finish(message, status = 200, headers) {
        clearTimeout(this.timer);
        if (!this.open)
            return;
        if (this.stream) {
            this.stream.send(message);
            this.stream.end();
        }
        else if (!this.response.destroyed) {
            const body = JSON.stringify(message);
            this.response.writeHead(status, { ...this.headers, ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
            this.response.end(body);
        }
    }
    cancel() {
        clearTimeout(this.timer);
        this.stream?.end();
    }
}
//# sourceMappingURL=sse.js.map