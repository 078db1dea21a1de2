/**
 * `mode: search`: the client sees `find_tool` (a ranked search over the visible tools' names,
 * descriptions and parameters, by MiniSearch) and `call_tool` (calls a found tool by its name).
 */
import MiniSearch from 'minisearch';
import { CALL_TOOL, FIND_TOOL, type SearchableTool } from '../../core/toolSearch.js';

export { CALL_TOOL, FIND_TOOL, foundResult, type SearchableTool } from '../../core/toolSearch.js';

const DEFAULT_LIMIT = 5;
const MAX_LIMIT = 50;

/** The two tools a search-mode aggregate lists. */
export const SEARCH_TOOLS = [
	{
		name: FIND_TOOL,
		description: 'Finds the tools that can do a task, best first: describe the task in a few words. Call one with call_tool.',
		inputSchema: {
			type: 'object',
			properties: {
				query: { type: 'string', description: 'What you want to do, in a few words' },
				limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, description: `How many tools to return (default ${DEFAULT_LIMIT})` },
			},
			required: ['query'],
		},
	},
	{
		name: CALL_TOOL,
		description: 'Calls a tool found with find_tool, by its name, with its arguments.',
		inputSchema: {
			type: 'object',
			properties: {
				name: { type: 'string', description: 'The tool name find_tool returned' },
				arguments: { type: 'object', description: "The tool's arguments, as its input schema describes them" },
			},
			required: ['name'],
		},
	},
];

/** Words of a camelCase or snake_case name, so `get_issue` and `getIssue` are found by "issue". */
const wordsOf = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_\-.]+/g, ' ');

/** An index over `tools`; built once per list of tools. */
export class ToolIndex<T extends SearchableTool> {
	private readonly search: MiniSearch<{ id: number; name: string; description: string; parameters: string }>;

	constructor(private readonly tools: readonly T[]) {
		this.search = new MiniSearch({
			fields: ['name', 'description', 'parameters'],
			searchOptions: { boost: { name: 3, description: 1.5, parameters: 0.5 }, fuzzy: 0.2, prefix: true, combineWith: 'OR' },
		});
		this.search.addAll(
			tools.map((tool, id) => ({
				id,
				name: wordsOf(tool.name),
				description: tool.description ?? '',
				parameters: Object.entries(tool.inputSchema?.properties ?? {})
					.map(([parameter, schema]) => `${wordsOf(parameter)} ${schema?.description ?? ''}`)
					.join(' '),
			})),
		);
	}

	find(query: string, limit = DEFAULT_LIMIT): T[] {
		const count = Math.min(Math.max(1, Math.floor(limit)), MAX_LIMIT);
		return this.search
			.search(query)
			.slice(0, count)
			.map((hit) => this.tools[hit.id as number]!);
	}
}
