/**
 * The request timeout: a call the server has not answered in time is cancelled towards the
 * server (`notifications/cancelled`) and answered with a timeout error. Keep-alive comments
 * hold the client's connection open meanwhile (see sse.ts).
 */
import type { McpMiddleware } from '../chain.js';
import { ErrorCode, errorResponse, type JsonRpcResponse } from '../jsonrpc.js';

export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

export function timeoutMiddleware(timeoutMs: number): McpMiddleware {
	return (call, next) => {
		const controller = new AbortController();
		const forward = () => controller.abort(call.signal.reason);
		if (call.signal.aborted) controller.abort(call.signal.reason);
		else call.signal.addEventListener('abort', forward, { once: true });
		let timer: NodeJS.Timeout | undefined;
		const expired = new Promise<JsonRpcResponse>((resolve) => {
			timer = setTimeout(() => {
				controller.abort('request timed out');
				resolve(errorResponse(call.request.id, ErrorCode.RequestTimeout, `Request timed out: the MCP server did not answer within ${timeoutMs / 1000} s`));
			}, timeoutMs);
		});
		return Promise.race([next({ ...call, signal: controller.signal }), expired]).finally(() => {
			clearTimeout(timer);
			call.signal.removeEventListener('abort', forward);
		});
	};
}
