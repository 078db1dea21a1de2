const DEFAULT_CODES = {
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
export class HangarError extends Error {
    name = 'HangarError';
    status;
    code;
    retryAfter;
    constructor(status, message, code, options) {
        super(message, options?.cause === undefined ? undefined : { cause: options.cause });
        this.status = status;
        this.code = code ?? DEFAULT_CODES[status];
        if (options?.retryAfter !== undefined)
            this.retryAfter = options.retryAfter;
    }
    get data() {
        return this.retryAfter === undefined
            ? { status: this.status, code: this.code }
            : { status: this.status, code: this.code, retryAfter: this.retryAfter };
    }
    static badRequest(message, code) {
        return new HangarError(400, message, code);
    }
    static notFound(message, code) {
        return new HangarError(404, message, code);
    }
    static conflict(message, code) {
        return new HangarError(409, message, code);
    }
    static cancelled(what) {
        return new HangarError(499, `${what} was cancelled`, 'cancelled');
    }
    static notImplemented(method) {
        return new HangarError(501, `${method} is not implemented yet`, 'not_implemented');
    }
    /** True for `data` received over the wire that carries a status and code. */
    static isErrorData(value) {
        return (typeof value === 'object' &&
            value !== null &&
            typeof value.status === 'number' &&
            typeof value.code === 'string');
    }
}
//# sourceMappingURL=errors.js.map