import { ErrorCode, errorResponse } from '../jsonrpc.js';
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
export const DEFAULT_REQUEST_TIMEOUT_MAX_MS = 60 * 60_000;
/** A handshake may start a server process (see the stdio bridge): it gets at least this long. */
const INITIALIZE_TIMEOUT_MS = 60_000;
/**
 * Controllers that abort with `signal`, through one listener per signal rather than one per
 * call: a session's calls all hang on its signal, and EventTarget listeners are costly on the
 * hot path.
 */
const children = new WeakMap();
function childOf(signal) {
    const controller = new AbortController();
    if (signal.aborted) {
        controller.abort(signal.reason);
        return controller;
    }
    let linked = children.get(signal);
    if (!linked) {
        const set = new Set();
        signal.addEventListener('abort', () => {
            for (const child of set)
                child.abort(signal.reason);
        }, { once: true });
        children.set(signal, set);
        linked = set;
    }
    linked.add(controller);
    return controller;
}
function release(signal, controller) {
    children.get(signal)?.delete(controller);
}
export function timeoutMiddleware(timeouts) {
    return (call, next) => {
        // A 2026-07-28 `subscriptions/listen` is a stream of notifications that lasts as long as the
        // client wants; a `tasks/result` waits, by design, as long as its task runs.
        if (call.request.method === 'subscriptions/listen' || call.request.method === 'tasks/result')
            return next(call);
        const handshake = call.request.method === 'initialize';
        const idleMs = handshake ? Math.max(timeouts.idleMs, INITIALIZE_TIMEOUT_MS) : timeouts.idleMs;
        const totalMs = handshake ? Math.max(timeouts.totalMs, INITIALIZE_TIMEOUT_MS) : timeouts.totalMs;
        const controller = childOf(call.signal);
        const deadline = performance.now() + totalMs;
        return new Promise((resolve, reject) => {
            let timer;
            let unwatch;
            let settled = false;
            const settle = () => {
                settled = true;
                clearTimeout(timer);
                unwatch?.();
                release(call.signal, controller);
            };
            const expire = (overall) => {
                if (settled)
                    return;
                settle();
                controller.abort('request timed out');
                const message = overall
                    ? `Request timed out: the MCP server did not answer within the maximum of ${totalMs / 1000} s`
                    : `Request timed out: the MCP server did not answer within ${idleMs / 1000} s`;
                resolve(errorResponse(call.request.id, ErrorCode.RequestTimeout, message));
            };
            let waitingForClient = 0;
            const arm = () => {
                clearTimeout(timer);
                const left = deadline - performance.now();
                // While the client is answering the server, only the overall maximum runs.
                timer = waitingForClient === 0 && left > idleMs ? setTimeout(expire, idleMs, false) : setTimeout(expire, Math.max(0, left), true);
            };
            arm();
            unwatch = call.session.watch?.(call.request.id, (activity) => {
                if (activity === 'asked')
                    waitingForClient++;
                else if (activity === 'answered')
                    waitingForClient = Math.max(0, waitingForClient - 1);
                arm();
            });
            next({ ...call, signal: controller.signal }).then((response) => {
                if (settled)
                    return;
                settle();
                resolve(response);
            }, (error) => {
                if (settled)
                    return;
                settle();
                reject(error);
            });
        });
    };
}
//# sourceMappingURL=timeout.js.map