/**
 * Authorization: each tool call, prompt read and resource read is decided by the workload's
 * Cedar policies before it reaches the server, and `tools/list`, `prompts/list` and
 * `resources/list` show only what the caller may use. A denial is answered with HTTP 403 and
 * a JSON-RPC error (code 403, "Unauthorized").
 *
 * Session plumbing (`initialize`, `ping`, `logging/setLevel`, `completion/complete`) and
 * `resources/templates/list` pass; any other method is denied, so a method this proxy does not
 * know cannot slip past the policies.
 *
 * Tool annotations (`readOnlyHint`…) are resource attributes: they come from the server's
 * `tools/list`, remembered from every list that passes and fetched when a call names a tool
 * not seen yet.
 */
import type { Logger } from '../../log.js';
import { refuse, type McpCall, type McpHandler, type McpMiddleware } from '../chain.js';
import { errorResponse, type JsonRpcResponse } from '../jsonrpc.js';
import type { CedarAuthorizer, Decision } from '../security/cedarAuthorizer.js';
import { argumentAttributes, hintAttributes, type Attributes } from '../security/cedarEntities.js';

/** ToolHive's JSON-RPC code for a denied request. */
export const DENIED_CODE = 403;
const PASSING = new Set(['initialize', 'ping', 'logging/setLevel', 'completion/complete', 'resources/templates/list']);
const RESOURCE_METHODS = new Set(['resources/read', 'resources/subscribe', 'resources/unsubscribe']);
/** A tool call naming a tool not seen in a list fetches the list again, at most this often. */
const ANNOTATIONS_REFRESH_MS = 5_000;
const MAX_LIST_PAGES = 20;

export function authorizationMiddleware(authorizer: CedarAuthorizer, log: Logger): McpMiddleware {
	const annotations = new ToolAnnotations();

	const denied = (call: McpCall, what: string, decision: Decision): JsonRpcResponse => {
		log.info(`denied ${what} to ${call.exchange.identity?.subject ?? 'an anonymous caller'}: ${decision.reason}`);
		return refuse(errorResponse(call.request.id, DENIED_CODE, 'Unauthorized'), { status: 403 });
	};

	return async (call, next) => {
		const { request } = call;
		const { method } = request;
		const identity = call.exchange.identity;
		const params = request.params ?? {};

		if (method === 'tools/call') {
			const name = String(params.name ?? '');
			const args = argumentAttributes(params.arguments);
			const hints = await annotations.of(name, call, next);
			const decision = authorizer.authorize(identity, 'call_tool', 'Tool', name, toolAttributes(name, hints, args), args);
			return decision.allowed ? next(call) : denied(call, `tool ${name}`, decision);
		}
		if (method === 'prompts/get') {
			const name = String(params.name ?? '');
			const args = argumentAttributes(params.arguments);
			const decision = authorizer.authorize(identity, 'get_prompt', 'Prompt', name, promptAttributes(name, args), args);
			return decision.allowed ? next(call) : denied(call, `prompt ${name}`, decision);
		}
		if (RESOURCE_METHODS.has(method)) {
			const uri = String(params.uri ?? '');
			const decision = authorizer.authorize(identity, 'read_resource', 'Resource', uri, resourceAttributes(uri));
			return decision.allowed ? next(call) : denied(call, `resource ${uri}`, decision);
		}
		if (method === 'tools/list') {
			const response = await next(call);
			annotations.learn(response);
			return filterList(response, 'tools', (tool) => {
				const name = String(tool.name);
				return authorizer.authorize(identity, 'call_tool', 'Tool', name, toolAttributes(name, hintAttributes(tool.annotations))).allowed;
			});
		}
		if (method === 'prompts/list') {
			return filterList(await next(call), 'prompts', (prompt) => {
				const name = String(prompt.name);
				return authorizer.authorize(identity, 'get_prompt', 'Prompt', name, promptAttributes(name)).allowed;
			});
		}
		if (method === 'resources/list') {
			return filterList(await next(call), 'resources', (resource) => {
				const uri = String(resource.uri);
				return authorizer.authorize(identity, 'read_resource', 'Resource', uri, resourceAttributes(uri)).allowed;
			});
		}
		if (PASSING.has(method)) return next(call);
		return denied(call, `method ${method}`, { allowed: false, reason: 'the method is not covered by authorization' });
	};
}

// A resource's attributes are built the same way for a call and for the list that shows it, so
// that a list never shows what a call would deny, nor hides what it would permit.
const toolAttributes = (name: string, hints: Attributes, args?: Attributes): Attributes => ({ name, operation: 'call', feature: 'tool', ...hints, ...args });
const promptAttributes = (name: string, args?: Attributes): Attributes => ({ name, operation: 'get', feature: 'prompt', ...args });
const resourceAttributes = (uri: string): Attributes => ({ name: uri, uri, operation: 'read', feature: 'resource' });

/** The list in `result[key]` with only the items `allowed` keeps; the rest of the result (cursor…) as it was. */
function filterList(response: JsonRpcResponse, key: string, allowed: (item: Record<string, unknown>) => boolean): JsonRpcResponse {
	const items = response.result?.[key];
	if (!Array.isArray(items)) return response;
	return { ...response, result: { ...response.result, [key]: items.filter((item) => typeof item === 'object' && item !== null && allowed(item)) } };
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

	async of(name: string, call: McpCall, next: McpHandler): Promise<Attributes> {
		if (!this.hints.has(name) && Date.now() - this.fetchedAt > ANNOTATIONS_REFRESH_MS) {
			this.fetching ??= this.fetch(call, next).finally(() => (this.fetching = undefined));
			await this.fetching;
		}
		return this.hints.get(name) ?? {};
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
