/**
 * Headers the HTTP backends add to an upstream request of the call whose signal it carries: its
 * trace context (`traceparent`, `tracestate`) when telemetry is on, which sets `headers`;
 * nothing otherwise, at the cost of one check.
 */
export const outboundContext: { headers?: (signal: AbortSignal) => Readonly<Record<string, string>> | undefined } = {};
