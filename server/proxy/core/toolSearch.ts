/**
 * The two tools of a search-mode aggregate (backends/aggregate/search.ts) and the shape of
 * `find_tool`'s answer: the ground both the aggregate and the authorization stand on, since the
 * authorization sees through them (chain/authorization/).
 */

export const FIND_TOOL = 'find_tool';
export const CALL_TOOL = 'call_tool';

export interface SearchableTool {
	readonly name: string;
	readonly title?: string;
	readonly description?: string;
	readonly inputSchema?: { properties?: Record<string, { description?: string }> };
	readonly annotations?: unknown;
}

/** A tool as `find_tool` shows it: what the model needs to call it, and the member serving it. */
export interface FoundTool extends Pick<SearchableTool, 'name' | 'title' | 'description' | 'inputSchema' | 'annotations'> {
	readonly member?: string;
}

/** The result of `find_tool` listing `found` (the authorization rebuilds it with what the caller may call). */
export function foundResult(found: readonly FoundTool[]): Record<string, unknown> {
	return { content: [{ type: 'text', text: JSON.stringify(found) }], structuredContent: { tools: found } };
}

/** The tools a `find_tool` result lists. */
export function foundTools(result: Record<string, unknown> | undefined): FoundTool[] | undefined {
	const tools = (result?.structuredContent as { tools?: unknown } | undefined)?.tools;
	return Array.isArray(tools) ? tools : undefined;
}
