/**
 * The physical limit for the daemon: a vscode-jsonrpc server over stdio that answers
 * `initialize` and echoes, with nothing else loaded.
 */
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
const connection = createMessageConnection(new StreamMessageReader(process.stdin), new StreamMessageWriter(process.stdout));
connection.onRequest('initialize', () => ({ serverInfo: { name: 'bare', version: '0.0.0' }, capabilities: {} }));
connection.onRequest('echo', (params) => params);
connection.onNotification('exit', () => process.exit(0));
connection.onClose(() => process.exit(0));
connection.listen();
//# sourceMappingURL=bare-jsonrpc.js.map