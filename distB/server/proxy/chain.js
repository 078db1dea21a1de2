export function composeHttp(middlewares, terminal) {
    return middlewares.reduceRight((next, middleware) => (exchange) => middleware(exchange, next), terminal);
}
export function composeMcp(middlewares, terminal) {
    return middlewares.reduceRight((next, middleware) => (call) => middleware(call, next), terminal);
}
/** The end of the MCP chain: the session's backend answers. */
export const forwardToBackend = (call) => {
    call.accepted?.();
    return call.session.backend.request(call.request, call.signal);
};
export function composeNotices(middlewares, terminal) {
    return middlewares.reduceRight((next, middleware) => (notice) => middleware(notice, next), terminal);
}
/**
 * The end of the notice chain: the message goes to the server. Awaited, so that the server
 * has it (`notifications/initialized` above all) before the client learns it may go on.
 */
export const forwardNotice = async (notice) => {
    await (notice.session.relay ? notice.session.relay(notice.message) : notice.session.backend.send(notice.message));
    return undefined;
};
const refusals = new WeakMap();
/** Marks `response` as a refusal sent with an HTTP error status (403, 429…) rather than 200. */
export function refuse(response, refusal) {
    refusals.set(response, refusal);
    return response;
}
export function refusalOf(response) {
    return refusals.get(response);
}
//# sourceMappingURL=chain.js.map