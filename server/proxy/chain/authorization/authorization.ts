/**
 * Authorization: every client message is decided by the workload's Cedar policies before it
 * reaches the server, by the action its method maps to (methodActions.ts, the table
 * in docs/security.md); `tools/list`, `prompts/list`, `resources/list`,
 * `resources/templates/list` and `tasks/list` show only what the caller may use. A denied
 * request is answered with HTTP 403 and a JSON-RPC error (code 403, "Unauthorized"); a denied
 * notification or response gets the same error without an id, and never reaches the server.
 *
 * A search-mode aggregate (backends/aggregate/search.ts) lists only `find_tool` and `call_tool`,
 * which are no resources of their own: `call_tool` is decided as the direct call of the tool it
 * names, and `find_tool`'s answer keeps only the tools the caller may call.
 *
 * Tool annotations (`readOnlyHint`…) are resource attributes: they come from the server's
 * `tools/list`, remembered from every list that passes and fetched when a call names a tool
 * not seen yet; an aggregate's own call for a script or composite tool names them itself
 * (`McpCall.tool`: code mode lists only `run_code`), and the aggregate asks `McpCall.mayCall`
 * which tools to show the script.
 */
import type { Logger } from '../../../log.js';
import { callWith, type HttpExchange, type McpCall, type McpHandler, type McpMiddleware, type NoticeMiddleware } from '../chain.js';
import { errorResponse, type JsonRpcResponse, type RequestId } from '../../core/jsonrpc.js';
import type { CedarAuthorizer } from './cedarAuthorizer.js';
import { CALL_TOOL, FIND_TOOL, foundResult, foundTools } from '../../core/toolSearch.js';
import { argumentAttributes, hintAttributes, type Attributes } from './cedarEntities.js';
import { authorizationOf, RESPONSE_CHECK, toolCheck, type Check, type Filter } from './methodActions.js';
import { tag } from '../../core/tags.js';

/** ToolHive's JSON-RPC code for a denied request. */
export const DENIED_CODE = 403;
/** A tool call naming a tool not seen in a list fetches the list again, at most this often. */
const ANNOTATIONS_REFRESH_MS = 5_000;
const MAX_LIST_PAGES = 20;

export interface Authorization {
	readonly mcp: McpMiddleware;
	readonly notice: NoticeMiddleware;
}

export interface AuthorizationOptions {
	/** The workload is an aggregate in `mode: search`: its `find_tool` and `call_tool` are seen through. */
	readonly search?: boolean;
}

export function authorizationMiddleware(authorizer: CedarAuthorizer, log: Logger, options: AuthorizationOptions = {}): Authorization {
	const annotations = new ToolAnnotations();
	const known = (tool: string) => annotations.known(tool);

	/** The denial of `check`, or undefined when it is permitted. */
	const decide = (exchange: HttpExchange, id: RequestId | null, what: string, check: Check): JsonRpcResponse | undefined => {
		const decision = authorizer.check(exchange.identity, check);
		if (decision.allowed) return undefined;
		log.info(`denied ${check.action} ${what} to ${exchange.identity?.subject ?? 'an anonymous caller'}: ${decision.reason}`);
		return tag(errorResponse(id, DENIED_CODE, 'Unauthorized'), { refusal: { status: 403 } });
	};

	const filter = (exchange: HttpExchange, response: JsonRpcResponse, { key, item }: Filter): JsonRpcResponse => {
		const items = response.result?.[key];
		if (!Array.isArray(items)) return response;
		const allowed = items.filter((value) => {
			if (typeof value !== 'object' || value === null) return false;
			const check = item(value as Record<string, unknown>);
			return check !== undefined && authorizer.check(exchange.identity, check).allowed;
		});
		// The rest of the result (cursor…) as it was.
		return { ...response, result: { ...response.result, [key]: allowed } };
	};

	/** `find_tool`'s answer with only the tools the caller may call. */
	const filterFound = (exchange: HttpExchange, response: JsonRpcResponse): JsonRpcResponse => {
		const found = foundTools(response.result);
		if (!found) return response;
		annotations.learn({ ...response, result: { tools: found } });
		const allowed = found.filter((tool) => authorizer.check(exchange.identity, toolCheck(tool.name, known(tool.name))).allowed);
		return { ...response, result: { ...response.result, ...foundResult(allowed) } };
	};

	const mcp: McpMiddleware = async (call, next) => {
		const { request, exchange } = call;
		const params = request.params ?? {};
		// A backend that calls back (an aggregate's scripts) shows only the tools its caller may call.
		if (call.session.backend.reenters && !call.mayCall) call = callWith(call, { mayCall: (name, hints) => authorizer.check(exchange.identity, toolCheck(name, hintAttributes(hints))).allowed });
		if (options.search && request.method === 'tools/call' && params.name === FIND_TOOL) return filterFound(exchange, await next(call));
		if (options.search && request.method === 'tools/call' && params.name === CALL_TOOL) {
			const inner = (params.arguments ?? {}) as Record<string, unknown>;
			const name = String(inner.name ?? '');
			return decide(exchange, request.id, `tools/call ${name} (through ${CALL_TOOL})`, toolCheck(name, known(name), argumentAttributes(inner.arguments))) ?? next(call);
		}
		// A backend's own call (CallOrigin) names the tool's annotations as its list has them; a client's call, as a list the client could see had them.
		const { tool } = call;
		if (request.method === 'tools/call' && !tool) await annotations.fetchUnknown(String(params.name ?? ''), call, next);
		const authorization = authorizationOf(request.method, params, tool ? () => hintAttributes(tool.annotations) : known);
		if (authorization.kind === 'filter') {
			const response = await next(call);
			if (request.method === 'tools/list') annotations.learn(response);
			return filter(exchange, response, authorization);
		}
		return decide(exchange, request.id, `${request.method} ${authorization.id}`, authorization) ?? next(call);
	};

	const notice: NoticeMiddleware = async (notice, next) => {
		const { message, exchange } = notice;
		let check: Check;
		if ('method' in message) {
			const authorization = authorizationOf(message.method, message.params ?? {}, known);
			// A list sent as a notification has no answer to filter.
			if (authorization.kind === 'filter') return next(notice);
			check = authorization;
		} else {
			check = RESPONSE_CHECK;
		}
		return decide(exchange, null, 'method' in message ? `${message.method} ${check.id}` : 'a response', check) ?? next(notice);
	};

	return { mcp, notice };
}

/** The server's tool annotations, by the tool names clients see. */
class ToolAnnotations {
	private readonly hints = new Map<string, Attributes>();
	private fetchedAt = 0;
	private fetching: Promise<void> | undefined;
	private sequence = 0;

	learn(response: JsonRpcResponse): void {
		const tools = response.result?.tools;
		if (!Array.isArray(tools)) return;
		for (const tool of tools as Array<{ name?: unknown; annotations?: unknown }>) {
			if (typeof tool.name === 'string') this.hints.set(tool.name, hintAttributes(tool.annotations));
		}
	}

	known(name: string): Attributes {
		return this.hints.get(name) ?? {};
	}

	/** Fetches the server's list when `name` is a tool not seen yet (at most every few seconds). */
	async fetchUnknown(name: string, call: McpCall, next: McpHandler): Promise<void> {
		if (!this.hints.has(name) && Date.now() - this.fetchedAt > ANNOTATIONS_REFRESH_MS) {
			this.fetching ??= this.fetch(call, next).finally(() => (this.fetching = undefined));
			await this.fetching;
		}
	}

	/** Every page of the server's `tools/list`, asked in the caller's session (never acknowledged to the caller). */
	private async fetch(call: McpCall, next: McpHandler): Promise<void> {
		this.fetchedAt = Date.now();
		let cursor: unknown;
		for (let page = 0; page < MAX_LIST_PAGES; page++) {
			const request = { jsonrpc: '2.0' as const, id: `hangar-authz-${++this.sequence}`, method: 'tools/list', ...(cursor ? { params: { cursor } } : {}) };
			const response = await next({ ...call, request, accepted: undefined });
			this.learn(response);
			cursor = response.result?.nextCursor;
			if (typeof cursor !== 'string' || !cursor) return;
		}
	}
}
