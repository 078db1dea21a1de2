/**
 * Binds service functions to rows of the operation table and calls them with validated
 * params. Every door goes through `Dispatcher.call`, so validation, "not implemented" and
 * error hiding behave the same over RPC, REST and the CLI.
 */
import { randomUUID } from 'node:crypto';
import { HangarError } from '../protocol/errors.js';
export function implement(operation, handler) {
    return { operation, handler: handler };
}
/** A 400 whose message names the first offending field. */
export function invalidParams(error) {
    const [first, ...rest] = error.issues;
    const field = first?.path.length ? first.path.join('.') : 'body';
    const more = rest.length ? ` (and ${rest.length} more problem${rest.length > 1 ? 's' : ''})` : '';
    const message = first?.message ?? 'invalid value';
    // A message that already says `invalid <field>: …` is not prefixed a second time.
    const last = first?.path.at(-1);
    const named = last !== undefined && message.toLowerCase().startsWith(`invalid ${String(last).toLowerCase()}`);
    return new HangarError(400, `${named ? '' : `invalid ${field}: `}${message}${more}`, 'invalid_params');
}
/**
 * Where `value` has a key named `__proto__`, as a field path. Schemas drop such a key without a
 * word (assigning it to a plain object sets the prototype), so a user's entry would vanish:
 * it is refused instead, whichever door the params came through.
 */
function prototypeKeyIn(value) {
    if (typeof value !== 'object' || value === null)
        return undefined;
    for (const key of Object.keys(value)) {
        if (key === '__proto__')
            return key;
        const inner = prototypeKeyIn(value[key]);
        if (inner)
            return `${key}.${inner}`;
    }
    return undefined;
}
export class Dispatcher {
    log;
    handlers = new Map();
    rows = new Map();
    /** Settled before the first call runs, so that none escapes it. */
    interceptor = Promise.resolve(undefined);
    constructor(operations, implementations, log) {
        this.log = log;
        for (const row of operations)
            this.rows.set(row.method, row);
        for (const { operation, handler } of implementations) {
            if (!this.rows.has(operation.method))
                throw new Error(`${operation.method} is not in the operation table`);
            this.handlers.set(operation.method, handler);
        }
    }
    get operations() {
        return this.rows.values();
    }
    /** Puts `interceptor` (once it resolves) around every call. */
    intercept(interceptor) {
        this.interceptor = interceptor;
    }
    /** Validates `params` against the row and runs its service; throws only `HangarError`. */
    async call(method, params, context) {
        const interceptor = await this.interceptor;
        return interceptor ? interceptor.around(method, () => this.run(method, params, context)) : this.run(method, params, context);
    }
    /** Before the process exits: what the interceptor holds is sent. */
    async close() {
        await (await this.interceptor)?.close();
    }
    async run(method, params, context) {
        const row = this.rows.get(method);
        if (!row)
            throw new HangarError(404, `unknown method ${method}`, 'unknown_method');
        const polluted = prototypeKeyIn(params);
        if (polluted)
            throw new HangarError(400, `invalid ${polluted}: the name "__proto__" is not allowed`, 'invalid_params');
        const parsed = row.params.safeParse(params ?? {});
        if (!parsed.success)
            throw invalidParams(parsed.error);
        const handler = this.handlers.get(method);
        if (!handler)
            throw HangarError.notImplemented(method);
        try {
            return await handler(parsed.data, context);
        }
        catch (error) {
            throw this.hide(method, error, context);
        }
    }
    /** Keeps expected errors; turns anything else into a 500 whose detail goes to the log only. */
    hide(method, error, context) {
        if (error instanceof HangarError)
            return error;
        if (context.signal.aborted)
            return HangarError.cancelled(method);
        const requestId = randomUUID();
        this.log.error(`${method} failed (request ${requestId}): ${error?.stack ?? String(error)}`);
        return new HangarError(500, `internal error (request id ${requestId})`, 'internal_error');
    }
}
//# sourceMappingURL=dispatch.js.map