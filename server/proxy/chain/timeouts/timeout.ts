/**
 * The request timeout, as MCP means it: a call fails when the server has been silent on it for
 * the idle timeout. Progress notifications reset it, up to an overall maximum; a request of the
 * server to the client (sampling, elicitation, roots) pauses it until the client answers. A
 * call that times out is cancelled towards the server (`notifications/cancelled`) and answered
 * with a timeout error. Keep-alive comments hold the client's connection open meanwhile (see
 * sessions/streams.ts).
 */
import { callWith, type CallActivity, type CallWatcher, type McpCall, type McpMiddleware } from '../chain.js';
import { linkedController } from '../../core/abort.js';
import { Deadlines, type Deadline } from '../../core/deadlines.js';
import { ErrorCode, errorResponse, type JsonRpcResponse } from '../../core/jsonrpc.js';

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
	const idle = new Deadlines<TimedCall>(timeouts.idleMs, (timed) => timed.timeOut(false));
	return (call, next) => {
		// A 2026-07-28 `subscriptions/listen` is a stream of notifications that lasts as long as the
		// client wants; a `tasks/result` waits, by design, as long as its task runs.
		if (call.request.method === 'subscriptions/listen' || call.request.method === 'tasks/result') return next(call);
		// A backend that can cancel one call answers it at once when it does (see core/backend.ts): the
		// call's own promise is all it takes. Else the timeout answers by itself, and gives the call
		// a signal of its own to stop it with.
		if (call.session.backend.cancel) {
			const timed = new TimedCall(call, timeouts, idle);
			return next(call).then(
				(response) => timed.answered(response),
				(error: unknown) => timed.failed(error),
			);
		}
		return new Promise<JsonRpcResponse>((resolve, reject) => {
			const timed = new TimedCall(call, timeouts, idle, resolve);
			next(callWith(call, { signal: timed.linked!.controller.signal }))
				.then(
					(response) => timed.answered(response),
					(error: unknown) => timed.failed(error),
				)
				.then(resolve, reject);
		});
	};
}

/**
 * One call under the timeout: an object with methods rather than closures, as one is made for
 * every call. The usual idle timeout runs in the middleware's shared `Deadlines`; a handshake's
 * longer one, and the overall maximum, on a timer of their own.
 */
class TimedCall implements CallWatcher {
	private readonly idleMs: number;
	private readonly totalMs: number;
	private readonly deadline: number;
	/** The call's own signal, for a backend that cannot cancel one call. */
	readonly linked: ReturnType<typeof linkedController> | undefined;
	private timer: NodeJS.Timeout | undefined;
	private idleDeadline: Deadline<TimedCall> | undefined;
	private waitingForClient = 0;
	private done = false;
	/** The answer of a call that timed out. */
	private expired: JsonRpcResponse | undefined;

	constructor(
		private readonly call: McpCall,
		timeouts: RequestTimeouts,
		private readonly idle: Deadlines<TimedCall>,
		/** Answers the client at once when the call times out; without it, the backend's cancellation does. */
		private readonly answerNow?: (response: JsonRpcResponse) => void,
	) {
		const handshake = call.request.method === 'initialize';
		this.idleMs = handshake ? Math.max(timeouts.idleMs, INITIALIZE_TIMEOUT_MS) : timeouts.idleMs;
		this.totalMs = handshake ? Math.max(timeouts.totalMs, INITIALIZE_TIMEOUT_MS) : timeouts.totalMs;
		const now = performance.now();
		this.deadline = now + this.totalMs;
		this.linked = answerNow ? linkedController(call.signal) : undefined;
		this.arm(now);
		call.session.watch?.(call.request.id, this);
	}

	activity(kind: CallActivity): void {
		if (kind === 'asked') this.waitingForClient++;
		else if (kind === 'answered') this.waitingForClient = Math.max(0, this.waitingForClient - 1);
		this.arm();
	}

	/** What the client gets for the backend's answer: that answer, or the timeout's if it came first. */
	answered(response: JsonRpcResponse): JsonRpcResponse {
		this.end();
		return this.expired ?? response;
	}

	/** As `answered`, for a backend that failed: the timeout's answer, or the failure. */
	failed(error: unknown): JsonRpcResponse {
		this.end();
		if (this.expired) return this.expired;
		throw error;
	}

	private arm(now = performance.now()): void {
		this.disarm();
		const left = this.deadline - now;
		// While the client is answering the server, only the overall maximum runs.
		if (this.waitingForClient > 0 || left <= this.idleMs) this.timer = setTimeout(TimedCall.expire, Math.max(0, left), this, true);
		else if (this.idleMs === this.idle.delayMs) this.idleDeadline = this.idle.add(this, now);
		else this.timer = setTimeout(TimedCall.expire, this.idleMs, this, false);
	}

	private disarm(): void {
		clearTimeout(this.timer);
		this.timer = undefined;
		this.idle.delete(this.idleDeadline);
		this.idleDeadline = undefined;
	}

	private end(): void {
		if (this.done) return;
		this.done = true;
		this.disarm();
		this.call.session.unwatch?.(this.call.request.id);
		this.linked?.unlink();
	}

	private static expire(this: void, timed: TimedCall, overall: boolean): void {
		timed.timeOut(overall);
	}

	/** The server was silent too long on the call (or it ran past the overall maximum): cancel it, answer the client. */
	timeOut(overall: boolean): void {
		if (this.done) return;
		const { request, session } = this.call;
		const message = overall
			? `Request timed out: the MCP server did not answer within the maximum of ${this.totalMs / 1000} s`
			: `Request timed out: the MCP server did not answer within ${this.idleMs / 1000} s`;
		this.expired = errorResponse(request.id, ErrorCode.RequestTimeout, message);
		this.end();
		if (this.linked) {
			this.linked.controller.abort('request timed out');
			this.answerNow!(this.expired);
		} else {
			session.backend.cancel!(request.id, 'request timed out');
		}
	}
}
