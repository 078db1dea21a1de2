/**
 * Whether a remote MCP server can be reached before its workload is reported `running`: its
 * name resolves (to an allowed address), a connection opens, and HTTP answers. Any HTTP status
 * counts as up: the server may well want a session, a token or another method.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { metadataGuardedLookup } from '../net/addresses.js';
const PROBE_TIMEOUT_MS = 10_000;
/** Why `url` cannot be reached, or undefined when it answers. */
export function unreachableReason(url, signal) {
    const target = new URL(url);
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve) => {
        const outgoing = request(target, { method: 'GET', headers: { accept: 'application/json, text/event-stream' }, lookup: metadataGuardedLookup, timeout: PROBE_TIMEOUT_MS, signal }, (response) => {
            response.destroy();
            resolve(undefined);
        });
        outgoing.on('timeout', () => outgoing.destroy(Object.assign(new Error(`no answer within ${PROBE_TIMEOUT_MS / 1000} s`), { code: 'ETIMEDOUT' })));
        outgoing.on('error', (error) => resolve(`cannot reach ${target.host}: ${describeFailure(target.hostname, error)}`));
        outgoing.end();
    });
}
function describeFailure(host, error) {
    switch (error.code) {
        case 'ENOTFOUND':
        case 'EAI_AGAIN':
            return `the name ${host} does not resolve (${error.code}); check the URL`;
        case 'ECONNREFUSED':
            return 'the connection was refused (is the server up?)';
        case 'EFORBIDDEN':
            return error.message;
        case 'ABORT_ERR':
            return 'cancelled';
        default:
            return error.message;
    }
}
//# sourceMappingURL=reachability.js.map