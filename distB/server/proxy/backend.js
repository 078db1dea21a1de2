/**
 * What the proxy's client-facing side (Streamable HTTP, legacy SSE) needs from the server
 * side, whatever the server is: a container's stdio, an HTTP server in a container, or a
 * remote URL. Each client session opens its own backend session.
 */
import { isSignInState } from '../runspec/store.js';
export { isSignInState };
const denials = new WeakMap();
/** Marks `response` as the server's 401 or 403; the proxy passes it on as such (see middleware/upstreamAuth.ts). */
export function deniedUpstream(response, denial) {
    denials.set(response, denial);
    return response;
}
export function upstreamDenialOf(response) {
    return denials.get(response);
}
//# sourceMappingURL=backend.js.map