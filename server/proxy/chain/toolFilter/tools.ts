/**
 * Tool filter and override: `tools/list` shows only the allowed tools, under their new names
 * and descriptions; `tools/call` refuses hidden tools and calls renamed ones by their real
 * name. The filter names tools as clients see them, after renaming. A backend that calls back
 * (an aggregate's scripts) is handed the same view of its tools (`McpCall.showTool`).
 */
import type { ToolOverride } from '../../../../protocol/runConfig.js';
import { callWith, type McpMiddleware } from '../chain.js';
import type { ShownTool } from '../../core/backend.js';
import { ErrorCode, errorResponse } from '../../core/jsonrpc.js';

export function toolsMiddleware(filter: readonly string[] | undefined, overrides: Readonly<Record<string, ToolOverride>> | undefined): McpMiddleware | undefined {
	const renames = new Map<string, ToolOverride>(Object.entries(overrides ?? {}));
	if (!filter?.length && renames.size === 0) return undefined;
	const allowed = filter?.length ? new Set(filter) : undefined;
	/** Shown name → real name, for renamed tools. */
	const realNames = new Map<string, string>();
	for (const [real, override] of renames) if (override.name) realNames.set(override.name, real);

	/** `tool` as clients are shown it, or undefined when it is hidden. */
	const show = <T extends ShownTool>(tool: T): T | undefined => {
		const override = renames.get(tool.name);
		const name = override?.name || tool.name;
		if (allowed && !allowed.has(name)) return undefined;
		return override ? { ...tool, name, ...(override.description ? { description: override.description } : {}) } : tool;
	};

	return async (call, next) => {
		const { request } = call;
		// A backend that calls back (an aggregate's scripts) shows its caller its tools as this list would.
		if (call.session.backend.reenters && !call.showTool) call = callWith(call, { showTool: show });
		if (request.method === 'tools/list') {
			const response = await next(call);
			const tools = response.result?.tools;
			if (!Array.isArray(tools)) return response;
			const shown = (tools as ShownTool[]).flatMap((tool) => show(tool) ?? []);
			return { ...response, result: { ...response.result, tools: shown } };
		}
		if (request.method === 'tools/call' && typeof request.params?.name === 'string') {
			const name = request.params.name;
			const real = realNames.get(name) ?? name;
			const renamedAway = real === name && Boolean(renames.get(name)?.name && renames.get(name)!.name !== name);
			if (renamedAway || (allowed && !allowed.has(name))) {
				return errorResponse(request.id, ErrorCode.InvalidParams, `Tool ${name} not found`);
			}
			if (real !== name) return next(callWith(call, { request: { ...request, params: { ...request.params, name: real } } }));
		}
		return next(call);
	};
}
