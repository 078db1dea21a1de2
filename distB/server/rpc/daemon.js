import { createMessageConnection, ErrorCodes, ResponseError, StreamMessageWriter, } from 'vscode-jsonrpc/node';
import { contextFor } from '../context.js';
import { VERSION } from '../version.js';
import { FramedMessageReader } from './framing.js';
/** LSP error codes (`LSPErrorCodes` of vscode-languageserver-protocol, whose runtime we do not load). */
const SERVER_NOT_INITIALIZED = -32002;
const REQUEST_FAILED = -32803;
const REQUEST_CANCELLED = -32800;
const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
const PARENT_CHECK_MS = 3_000;
export function startDaemon(environment, manifest, loadDispatcher, options) {
    const methods = new Set(manifest.methods);
    let dispatcher;
    const services = () => (dispatcher ??= loadDispatcher());
    const writer = new StreamMessageWriter(options.output);
    const reader = new FramedMessageReader(options.input, {
        maxMessageBytes: MAX_MESSAGE_BYTES,
        reject: (response) => void writer.write(response),
        onDeliveryError: (error) => environment.log.warn(`message dropped: ${error?.message ?? error}`),
    });
    const connection = createMessageConnection(reader, writer, {
        error: (message) => environment.log.error(message),
        warn: (message) => environment.log.warn(message),
        info: (message) => environment.log.debug(message),
        log: (message) => environment.log.debug(message),
    });
    let state = 'created';
    let exited = false;
    const exit = (code) => {
        if (exited)
            return;
        exited = true;
        connection.dispose();
        options.onExit(code);
    };
    connection.onRequest('initialize', (params) => {
        state = 'initialized';
        if (typeof params?.processId === 'number')
            watchParent(params.processId, () => exit(1));
        setImmediate(services); // after the answer is written
        return {
            serverInfo: { name: 'hangar', version: VERSION },
            capabilities: { methods: [...manifest.methods], notifications: [...manifest.notifications] },
        };
    });
    connection.onNotification('initialized', () => undefined);
    // The progress we report is cancellable: cancelling it cancels the request it belongs to.
    const byProgressToken = new Map();
    connection.onNotification('window/workDoneProgress/cancel', (params) => {
        const token = params?.token;
        if (typeof token === 'string' || typeof token === 'number')
            byProgressToken.get(token)?.abort();
    });
    connection.onRequest('shutdown', () => {
        state = 'shutdown';
        return null;
    });
    connection.onNotification('exit', () => exit(state === 'shutdown' ? 0 : 1));
    connection.onRequest(async (method, params, token) => {
        if (!methods.has(method)) {
            throw new ResponseError(ErrorCodes.MethodNotFound, `unknown method ${method}`);
        }
        if (state === 'created')
            throw new ResponseError(SERVER_NOT_INITIALIZED, 'server not initialized; send initialize first');
        if (state === 'shutdown')
            throw new ResponseError(ErrorCodes.InvalidRequest, 'server is shutting down');
        const controller = new AbortController();
        const subscription = token.onCancellationRequested(() => controller.abort());
        const progressToken = params?.workDoneToken;
        const cancellable = typeof progressToken === 'string' || typeof progressToken === 'number';
        if (cancellable)
            byProgressToken.set(progressToken, controller);
        try {
            const progress = progressFor(connection, params);
            return await (await services()).call(method, params, contextFor(controller.signal, progress));
        }
        catch (error) {
            throw toResponseError(error);
        }
        finally {
            subscription.dispose();
            if (cancellable && byProgressToken.get(progressToken) === controller)
                byProgressToken.delete(progressToken);
        }
    });
    const unsubscribe = environment.notifier.subscribe((method, params) => {
        if (state === 'initialized')
            void connection.sendNotification(method, params);
    });
    connection.onClose(() => {
        unsubscribe();
        exit(state === 'shutdown' ? 0 : 1);
    });
    connection.listen();
    return connection;
}
function toResponseError(error) {
    const code = error.status === 400
        ? ErrorCodes.InvalidParams
        : error.status === 499
            ? REQUEST_CANCELLED
            : REQUEST_FAILED;
    return new ResponseError(code, error.message, error.data);
}
/** `$/progress` reports for a request whose params carry a `workDoneToken`. */
function progressFor(connection, params) {
    const token = params?.workDoneToken;
    if (typeof token !== 'string' && typeof token !== 'number')
        return undefined;
    const send = (value) => void connection.sendNotification('$/progress', { token, value });
    return {
        begin: (title, message, percentage) => send({ kind: 'begin', title, cancellable: true, message, percentage }),
        report: (message, percentage) => send({ kind: 'report', message, percentage }),
        end: (message) => send({ kind: 'end', message }),
    };
}
/** LSP: a server exits when the process that started it is gone. */
function watchParent(pid, onGone) {
    const timer = setInterval(() => {
        try {
            process.kill(pid, 0);
        }
        catch (error) {
            if (error.code === 'ESRCH') {
                clearInterval(timer);
                onGone();
            }
        }
    }, PARENT_CHECK_MS);
    timer.unref();
}
//# sourceMappingURL=daemon.js.map