import { refuse } from '../chain.js';
import { errorResponse } from '../jsonrpc.js';
import { hintAttributes } from '../security/cedarEntities.js';
import { authorizationOf, RESPONSE_CHECK } from '../security/methodActions.js';
/** ToolHive's JSON-RPC code for a denied request. */
export const DENIED_CODE = 403;
/** A tool call naming a tool not seen in a list fetches the list again, at most this often. */
const ANNOTATIONS_REFRESH_MS = 5_000;
const MAX_LIST_PAGES = 20;
export function authorizationMiddleware(authorizer, log) {
    const annotations = new ToolAnnotations();
    const known = (tool) => annotations.known(tool);
    /** The denial of `check`, or undefined when it is permitted. */
    const decide = (exchange, id, what, check) => {
        const decision = authorizer.check(exchange.identity, check);
        if (decision.allowed)
            return undefined;
        log.info(`denied ${check.action} ${what} to ${exchange.identity?.subject ?? 'an anonymous caller'}: ${decision.reason}`);
        return refuse(errorResponse(id, DENIED_CODE, 'Unauthorized'), { status: 403 });
    };
    const filter = (exchange, response, { key, item }) => {
        const items = response.result?.[key];
        if (!Array.isArray(items))
            return response;
        const allowed = items.filter((value) => {
            if (typeof value !== 'object' || value === null)
                return false;
            const check = item(value);
            return check !== undefined && authorizer.check(exchange.identity, check).allowed;
        });
        // The rest of the result (cursor…) as it was.
        return { ...response, result: { ...response.result, [key]: allowed } };
    };
    const mcp = async (call, next) => {
        const { request, exchange } = call;
        const params = request.params ?? {};
        if (request.method === 'tools/call')
            await annotations.fetchUnknown(String(params.name ?? ''), call, next);
        const authorization = authorizationOf(request.method, params, known);
        if (authorization.kind === 'filter') {
            const response = await next(call);
            if (request.method === 'tools/list')
                annotations.learn(response);
            return filter(exchange, response, authorization);
        }
        return decide(exchange, request.id, `${request.method} ${authorization.id}`, authorization) ?? next(call);
    };
    const notice = async (notice, next) => {
        const { message, exchange } = notice;
        let check;
        if ('method' in message) {
            const authorization = authorizationOf(message.method, message.params ?? {}, known);
            // A list sent as a notification has no answer to filter.
            if (authorization.kind === 'filter')
                return next(notice);
            check = authorization;
        }
        else {
            check = RESPONSE_CHECK;
        }
        return decide(exchange, null, 'method' in message ? `${message.method} ${check.id}` : 'a response', check) ?? next(notice);
    };
    return { mcp, notice };
}
/** The server's tool annotations, by the tool names clients see. */
class ToolAnnotations {
    hints = new Map();
    fetchedAt = 0;
    fetching;
    sequence = 0;
    learn(response) {
        const tools = response.result?.tools;
        if (!Array.isArray(tools))
            return;
        for (const tool of tools) {
            if (typeof tool.name === 'string')
                this.hints.set(tool.name, hintAttributes(tool.annotations));
        }
    }
    known(name) {
        return this.hints.get(name) ?? {};
    }
    /** Fetches the server's list when `name` is a tool not seen yet (at most every few seconds). */
    async fetchUnknown(name, call, next) {
        if (!this.hints.has(name) && Date.now() - this.fetchedAt > ANNOTATIONS_REFRESH_MS) {
            this.fetching ??= this.fetch(call, next).finally(() => (this.fetching = undefined));
            await this.fetching;
        }
    }
    /** Every page of the server's `tools/list`, asked in the caller's session (never acknowledged to the caller). */
    async fetch(call, next) {
        this.fetchedAt = Date.now();
        let cursor;
        for (let page = 0; page < MAX_LIST_PAGES; page++) {
            const request = { jsonrpc: '2.0', id: `hangar-authz-${++this.sequence}`, method: 'tools/list', ...(cursor ? { params: { cursor } } : {}) };
            const response = await next({ ...call, request, accepted: undefined });
            this.learn(response);
            cursor = response.result?.nextCursor;
            if (typeof cursor !== 'string' || !cursor)
                return;
        }
    }
}
//# sourceMappingURL=authorization.js.map