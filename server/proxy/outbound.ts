/**
 * Headers the HTTP backends add to an upstream request for the call in progress: its trace
 * context (`traceparent`, `tracestate`) when telemetry is on, which sets `headers`; nothing
 * otherwise, at the cost of one check.
 */
export const outboundContext: { headers?: () => Readonly<Record<string, string>> | undefined } = {};
