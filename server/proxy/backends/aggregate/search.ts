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

/** Words that say nothing about a task; as prefixes ("a", "in") they would match half the index. */
const STOP_WORDS = new Set(
	'a an the and or of to in on at by for from with into onto as is are be been was were am i my we our us you your it its this that these those there here what which whom how do does did can could should would will want need please some any all every each just only new'.split(' '),
);

/**
 * General synonyms of software tasks (a query's word also searches for these): the words a
 * user says for what tools name otherwise. Only words with one meaning across tools belong here.
 */
const SYNONYMS: Record<string, readonly string[]> = {
	ticket: ['issue'],
	bug: ['issue'],
	pr: ['pull', 'request'],
	mr: ['merge', 'request'],
	folder: ['directory'],
	dir: ['directory'],
	repo: ['repository'],
	make: ['create'],
	add: ['create'],
	remove: ['delete'],
	forget: ['delete'],
	erase: ['delete'],
	show: ['get', 'list'],
	view: ['get', 'read'],
	see: ['get', 'list'],
	fetch: ['get'],
	find: ['search'],
	save: ['write'],
	store: ['save', 'write'],
	remember: ['memory', 'store'],
	dump: ['export', 'read'],
	rename: ['move'],
	download: ['clone', 'get'],
	history: ['log'],
	comment: ['note'],
	big: ['size'],
	me: ['user'],
	who: ['whoami', 'user'],
	open: ['create'],
};

/** A word reduced to a common stem, so "commits", "committed" and "commit" meet. */
function stem(word: string): string {
	if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
	if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
	if (word.length > 4 && word.endsWith('ed')) return word.slice(0, -2);
	if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
	return word;
}

/** An indexed word: lower case, stemmed, stop words dropped. */
function indexTerm(term: string): string | null {
	const word = term.toLowerCase();
	return STOP_WORDS.has(word) ? null : stem(word);
}

/** A query word, with its synonyms. */
function queryTerms(term: string): string[] | null {
	const word = term.toLowerCase();
	if (STOP_WORDS.has(word)) return null;
	return [...new Set([word, ...(SYNONYMS[word] ?? [])].map(stem))];
}

/** The first sentence of a description: what the tool does, before how to use it. */
const summaryOf = (description: string) => /^[\s\S]*?(?:[.!?](?=\s)|\n\n|$)/.exec(description.trim())![0];

/** An index over `tools`; built once per list of tools. */
export class ToolIndex<T extends SearchableTool> {
	private readonly search: MiniSearch<{ id: number; name: string; summary: string; description: string; parameters: string }>;

	constructor(private readonly tools: readonly T[]) {
		this.search = new MiniSearch({
			fields: ['name', 'summary', 'description', 'parameters'],
			tokenize: (text) => wordsOf(text).split(/[\s\p{P}\p{S}]+/u).filter(Boolean),
			processTerm: indexTerm,
			searchOptions: {
				boost: { name: 3, summary: 2, description: 1, parameters: 0.2 },
				processTerm: queryTerms,
				// Prefix and typo matches only for words long enough not to match everything.
				prefix: (term) => term.length >= 4,
				fuzzy: (term) => (term.length >= 6 ? 0.2 : false),
				combineWith: 'OR',
			},
		});
		this.search.addAll(
			tools.map((tool, id) => ({
				id,
				name: tool.name,
				summary: summaryOf(tool.description ?? ''),
				description: tool.description ?? '',
				parameters: Object.entries(tool.inputSchema?.properties ?? {})
					.map(([parameter, schema]) => `${parameter} ${schema?.description ?? ''}`)
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
