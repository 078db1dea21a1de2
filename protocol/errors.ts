/**
 * The one error type of the contract.
 *
 * Services throw `HangarError`; the REST adapter writes its `status` with `{code, message}`,
 * the daemon sends a JSON-RPC error whose `data` is `{status, code}`, and the typed client
 * turns that error back into a `HangarError`.
 */
import type { ErrorStatus } from './operation.js';

/** Stable slugs for error causes; clients switch on these, never on messages. */
export type ErrorCode =
	| 'bad_request'
	| 'unauthorized'
	| 'forbidden'
	| 'not_found'
	| 'method_not_allowed'
	| 'conflict'
	| 'payload_too_large'
	| 'unsupported_media_type'
	| 'unprocessable'
	| 'rate_limited'
	| 'internal_error'
	| 'not_implemented'
	| 'bad_gateway'
	| 'unavailable'
	| 'timeout'
	| 'cancelled'
	| (string & {});

const DEFAULT_CODES: Record<ErrorStatus, ErrorCode> = {
	400: 'bad_request',
	401: 'unauthorized',
	403: 'forbidden',
	404: 'not_found',
	405: 'method_not_allowed',
	409: 'conflict',
	413: 'payload_too_large',
	415: 'unsupported_media_type',
	422: 'unprocessable',
	429: 'rate_limited',
	499: 'cancelled',
	500: 'internal_error',
	501: 'not_implemented',
	502: 'bad_gateway',
	503: 'unavailable',
	504: 'timeout',
};

export interface ErrorData {
	readonly status: ErrorStatus;
	readonly code: ErrorCode;
	/** Seconds to wait before retrying, for 429 and 503. */
	readonly retryAfter?: number;
}

export class HangarError extends Error {
	override readonly name = 'HangarError';
	readonly status: ErrorStatus;
	readonly code: ErrorCode;
	readonly retryAfter?: number;

	constructor(status: ErrorStatus, message: string, code?: ErrorCode, options?: { cause?: unknown; retryAfter?: number }) {
		super(message, options?.cause === undefined ? undefined : { cause: options.cause });
		this.status = status;
		this.code = code ?? DEFAULT_CODES[status];
		if (options?.retryAfter !== undefined) this.retryAfter = options.retryAfter;
	}

	get data(): ErrorData {
		return this.retryAfter === undefined
			? { status: this.status, code: this.code }
			: { status: this.status, code: this.code, retryAfter: this.retryAfter };
	}

	static badRequest(message: string, code?: ErrorCode): HangarError {
		return new HangarError(400, message, code);
	}

	static notFound(message: string, code?: ErrorCode): HangarError {
		return new HangarError(404, message, code);
	}

	static conflict(message: string, code?: ErrorCode): HangarError {
		return new HangarError(409, message, code);
	}

	static cancelled(what: string): HangarError {
		return new HangarError(499, `${what} was cancelled`, 'cancelled');
	}

	static notImplemented(method: string): HangarError {
		return new HangarError(501, `${method} is not implemented yet`, 'not_implemented');
	}

	/** True for `data` received over the wire that carries a status and code. */
	static isErrorData(value: unknown): value is ErrorData {
		return (
			typeof value === 'object' &&
			value !== null &&
			typeof (value as ErrorData).status === 'number' &&
			typeof (value as ErrorData).code === 'string'
		);
	}
}
