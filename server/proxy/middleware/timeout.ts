/**
 * The request timeout, as MCP means it: a call fails when the server has been silent on it for
 * the idle timeout. Progress notifications reset it, up to an overall maximum; a request of the
 * server to the client (sampling, elicitation, roots) pauses it until the client answers. A
 * call that times out is cancelled towards the server (`notifications/cancelled`) and answered
 * with a timeout error. Keep-alive comments hold the client's connection open meanwhile (see
 * sse.ts).
 */
import type { McpMiddleware } from '../chain.js';
import { linkedController } from '../abort.js';
import { ErrorCode, errorResponse, type JsonRpcResponse } from '../jsonrpc.js';

export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
export const DEFAULT_REQUEST_TIMEOUT_MAX_MS = 60 * 60_000;
/** A handshake may start a server process (see the stdio bridge): it gets at least this long. */
const INITIALIZE_TIMEOUT_MS = 60_000;

export interface RequestTimeouts {
	/** Silence on a call after which it fails. */
	readonly idleMs: number;
	/** The longest a call may take, progress or not. */
	readonly totalMs: number;
}

export function timeoutMiddleware(timeouts: RequestTimeouts): McpMiddleware {
	return (call, next) => {
		// A 2026-07-28 `subscriptions/listen` is a stream of notifications that lasts as long as the
		// client wants; a `tasks/result` waits, by design, as long as its task runs.
		if (call.request.method === 'subscriptions/listen' || call.request.method === 'tasks/result') return next(call);
		const handshake = call.request.method === 'initialize';
		const idleMs = handshake ? Math.max(timeouts.idleMs, INITIALIZE_TIMEOUT_MS) : timeouts.idleMs;
		const totalMs = handshake ? Math.max(timeouts.totalMs, INITIALIZE_TIMEOUT_MS) : timeouts.totalMs;
		// A backend that can cancel one call needs no signal of its own per call (they are costly).
		const backend = call.session.backend;
		const linked = backend.cancel ? undefined : linkedController(call.signal);
		const deadline = performance.now() + totalMs;
		return new Promise<JsonRpcResponse>((resolve, reject) => {
			let timer: NodeJS.Timeout | undefined;
			let unwatch: (() => void) | undefined;
			let settled = false;
			const settle = () => {
				settled = true;
				clearTimeout(timer);
				unwatch?.();
				linked?.unlink();
			};
			const expire = (overall: boolean) => {
				if (settled) return;
				settle();
				if (linked) linked.controller.abort('request timed out');
				else backend.cancel!(call.request.id, 'request timed out');
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
				if (activity === 'asked') waitingForClient++;
				else if (activity === 'answered') waitingForClient = Math.max(0, waitingForClient - 1);
				arm();
			});
			next(linked ? { ...call, signal: linked.controller.signal } : call).then(
				(response) => {
					if (settled) return;
					settle();
					resolve(response);
				},
				(error: unknown) => {
					if (settled) return;
					settle();
					reject(error);
				},
			);
		});
	};
}
