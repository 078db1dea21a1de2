/**
 * A client of `hangar daemon` typed from the operation table: `request(InstallSkill, …)`
 * takes that row's params and resolves to its result. Errors come back as `HangarError`
 * with the status and code the service chose. Used by the VS Code extension and the tests.
 */
import { CancellationTokenSource } from 'vscode-jsonrpc';
import { HangarError } from './errors.js';
export class HangarClient {
    connection;
    constructor(connection) {
        this.connection = connection;
    }
    /** LSP handshake: `initialize` then `initialized`. */
    async initialize(clientName) {
        const result = await this.connection.sendRequest('initialize', {
            processId: process.pid,
            clientInfo: { name: clientName },
            capabilities: {},
        });
        await this.connection.sendNotification('initialized', {});
        return result;
    }
    async request(operation, params, options = {}) {
        const source = new CancellationTokenSource();
        const onAbort = () => source.cancel();
        options.signal?.addEventListener('abort', onAbort, { once: true });
        const sent = options.workDoneToken === undefined ? params : { ...params, workDoneToken: options.workDoneToken };
        try {
            return await this.connection.sendRequest(operation.method, sent, source.token);
        }
        catch (error) {
            throw asHangarError(error);
        }
        finally {
            options.signal?.removeEventListener('abort', onAbort);
            source.dispose();
        }
    }
    onNotification(definition, handler) {
        return this.connection.onNotification(definition.method, handler);
    }
    /** LSP shutdown: `shutdown` then `exit`. */
    async shutdown() {
        await this.connection.sendRequest('shutdown');
        await this.connection.sendNotification('exit');
        this.connection.dispose();
    }
}
function asHangarError(error) {
    const data = error?.data;
    if (HangarError.isErrorData(data)) {
        return new HangarError(data.status, error.message, data.code, { cause: error, retryAfter: data.retryAfter });
    }
    return error;
}
//# sourceMappingURL=client.js.map