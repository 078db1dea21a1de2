/**
 * `mode: search`: the client sees `find_tool` (a ranked search over the visible tools) and
 * `call_tool` (calls a found tool by its name). The ranking is BM25 (MiniSearch) over every
 * text a tool has — its name's words, title, description, parameters, and what its server
 * says of itself (instructions, title, description) — with English stemming (the `stemmer`
 * package) and a thesaurus of the words users say for what tools name otherwise; the tools of a
 * member whose product the request names, and those whose annotations match what it asks (to
 * read, to destroy), weigh more. Tuned on the dev requests of test/fixtures/search-eval/ only;
 * docs/benchmarks.md has its figures on the held-out ones.
 */
import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import { CALL_TOOL, FIND_TOOL, type SearchableTool } from '../../core/toolSearch.js';

export { CALL_TOOL, FIND_TOOL, foundResult, type SearchableTool } from '../../core/toolSearch.js';

export const DEFAULT_LIMIT = 5;
export const MAX_LIMIT = 50;

/** The two tools a search-mode aggregate lists. */
export const SEARCH_TOOLS = [
	{
		name: FIND_TOOL,
		description:
			'Finds the tools that can do a task, best first: describe the task in a few words. Each hit gives the tool\'s name, its server, what it does and its input schema; call it with call_tool.',
		inputSchema: {
			type: 'object',
			properties: {
				query: { type: 'string', description: 'What you want to do, in a few words' },
				limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, description: `How many tools to return (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT})` },
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

/** What a member server says of itself: its name, title, description and instructions. */
export interface MemberContext {
	readonly title?: string;
	readonly description?: string;
	readonly instructions?: string;
}

/** What the index reads of one entry: the tool, the member serving it, and what that member says of itself. */
export interface IndexedTool {
	readonly tool: SearchableTool;
	readonly member?: string;
	readonly context?: MemberContext;
}

/** Words of a camelCase or snake_case name, so `get_issue` and `getIssue` are found by "issue". */
const wordsOf = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_\-.]+/g, ' ');

const tokenize = (text: string) => wordsOf(text).split(/[\s\p{P}\p{S}]+/u).filter(Boolean);

/** Words that say nothing about a task; as prefixes ("a", "in") they would match half the index. */
const STOP_WORDS = new Set(
	'a an the and or of to in on at by for from with into onto as is are be been was were am i my me we our us you your it its this that these those there here what which whom how do does did can could should would will want need please some any all every each just only new'.split(' '),
);

/**
 * Software-task words users say for what tools name otherwise (a query's word also searches
 * for these). Only words with one meaning across tools belong here.
 */
const SYNONYMS: Record<string, readonly string[]> = {
	// Work items and code review
	ticket: ['issue'],
	bug: ['issue'],
	pr: ['pull', 'request'],
	mr: ['merge', 'request'],
	repo: ['repository'],
	fork: ['copy'],
	blame: ['commit', 'history'],
	todo: ['task'],
	chore: ['task'],
	errand: ['task'],
	done: ['complete'],
	finish: ['complete'],
	tick: ['complete'],
	close: ['complete'],
	assign: ['owner', 'assignee'],
	// Files and folders
	folder: ['directory'],
	dir: ['directory'],
	doc: ['document'],
	docs: ['documentation'],
	// Verbs users say for what tools name otherwise
	make: ['create'],
	add: ['create'],
	put: ['create', 'write'],
	insert: ['create', 'add'],
	remove: ['delete'],
	erase: ['delete'],
	drop: ['delete'],
	forget: ['delete'],
	kill: ['terminate', 'stop', 'delete'],
	change: ['update', 'edit'],
	modify: ['update', 'edit'],
	edit: ['update'],
	rename: ['move', 'update'],
	replace: ['edit'],
	bump: ['update'],
	postpone: ['reschedule', 'update'],
	move: ['update'],
	show: ['get', 'list'],
	view: ['get', 'read'],
	see: ['get', 'list'],
	display: ['show', 'get'],
	fetch: ['get'],
	grab: ['get'],
	pull: ['get'],
	read: ['get'],
	check: ['get', 'status'],
	find: ['search'],
	look: ['search', 'get'],
	lookup: ['search', 'get'],
	save: ['write'],
	store: ['save', 'write'],
	download: ['get'],
	upload: ['put'],
	ship: ['deploy'],
	release: ['deploy'],
	publish: ['deploy'],
	undo: ['rollback', 'revert'],
	revert: ['rollback'],
	restart: ['rollout', 'reboot'],
	run: ['execute'],
	execute: ['run'],
	// What was said and remembered
	remember: ['memory', 'store', 'observation', 'entity'],
	memorize: ['memory', 'store', 'observation', 'entity'],
	recall: ['memory', 'search'],
	fact: ['observation'],
	history: ['log'],
	comment: ['note'],
	note: ['comment'],
	who: ['user'],
	person: ['user', 'entity'],
	people: ['user'],
	profile: ['user'],
	// Messages and meetings
	text: ['message', 'sms'],
	sms: ['message'],
	dm: ['message'],
	ping: ['message'],
	tell: ['message', 'send'],
	post: ['send', 'message'],
	email: ['mail', 'message'],
	meeting: ['event', 'calendar'],
	appointment: ['event', 'calendar'],
	schedule: ['event', 'cron'],
	availability: ['freebusy'],
	busy: ['freebusy'],
	free: ['freebusy'],
	clash: ['conflict', 'freebusy'],
	// Web and browsers
	web: ['internet', 'online'],
	online: ['web'],
	google: ['search', 'web'],
	page: ['web', 'url'],
	site: ['website', 'url'],
	website: ['site', 'url'],
	link: ['url'],
	visit: ['navigate', 'open'],
	go: ['navigate'],
	open: ['navigate', 'create'],
	tap: ['click'],
	press: ['click'],
	type: ['fill'],
	picture: ['image', 'photo', 'screenshot'],
	photo: ['image', 'picture'],
	snapshot: ['screenshot'],
	scrape: ['extract', 'crawl'],
	// Places and maps
	coordinates: ['geocode', 'latitude', 'longitude'],
	address: ['geocode'],
	route: ['directions'],
	drive: ['directions', 'distance'],
	height: ['elevation'],
	altitude: ['elevation'],
	nearby: ['places', 'search'],
	// Data
	db: ['database'],
	table: ['database', 'rows'],
	row: ['record'],
	entry: ['record', 'item'],
	chart: ['graph', 'plot'],
	plot: ['chart'],
	graph: ['chart'],
	visualize: ['chart', 'diagram'],
	diagram: ['chart'],
	// Payments
	chargeback: ['dispute'],
	bill: ['invoice'],
	// Operations
	k8s: ['kubernetes'],
	env: ['environment'],
	config: ['configuration', 'settings'],
	settings: ['configuration'],
	slow: ['performance'],
	speed: ['performance'],
	crash: ['error'],
	broken: ['error'],
	flag: ['feature'],
};

/** An indexed word: lower case, stemmed, stop words dropped. */
function indexTerm(term: string): string | null {
	const word = term.toLowerCase();
	return STOP_WORDS.has(word) ? null : stemmer(word);
}

/** A query word, with its synonyms. */
function queryTerms(term: string): string[] | null {
	const word = term.toLowerCase();
	if (STOP_WORDS.has(word)) return null;
	return [...new Set([word, ...(SYNONYMS[word] ?? [])].map((each) => stemmer(each)))];
}

/** The first sentence of a description: what the tool does, before how to use it. */
const summaryOf = (description: string) => /^[\s\S]*?(?:[.!?](?=\s)|\n\n|$)/.exec(description.trim())![0];

/**
 * How much of a text is indexed. What a tool does is said first; past that, long descriptions
 * (usage guides, examples, whole API references) match a query's every word and would outrank
 * the tool that does the task.
 */
const DESCRIPTION_CHARS = 600;
const SERVER_CHARS = 400;
const PARAMETER_CHARS = 120;

interface Document {
	readonly id: number;
	readonly name: string;
	readonly summary: string;
	readonly description: string;
	readonly parameters: string;
	readonly server: string;
}

const FIELDS = ['name', 'summary', 'description', 'parameters', 'server'] as const;
const BOOST: Record<(typeof FIELDS)[number], number> = { name: 3, summary: 2, description: 1, parameters: 0.3, server: 0.5 };

const text = (value: unknown) => (typeof value === 'string' ? value : '');

function documentOf(id: number, { tool, member, context }: IndexedTool): Document {
	const title = tool.title ?? (tool.annotations as { title?: unknown } | undefined)?.title;
	const description = text(tool.description);
	return {
		id,
		name: `${tool.name} ${text(title)}`,
		summary: summaryOf(description),
		description: description.slice(0, DESCRIPTION_CHARS),
		parameters: Object.entries(tool.inputSchema?.properties ?? {})
			.map(([parameter, schema]) => `${parameter} ${text(schema?.description).slice(0, PARAMETER_CHARS)}`)
			.join(' '),
		server: [member, context?.title, context?.description, text(context?.instructions).slice(0, SERVER_CHARS)].filter(Boolean).join(' '),
	};
}

/**
 * Words of a member's name that name its product ("asana", "gitlab", "postgres"), not a task:
 * a request that says one means that member. The generic words of names (`brave-search`,
 * `gitlab-community`) are left out.
 */
const GENERIC_NAME_WORDS = new Set('mcp server servers official community search desktop cloud run chart maps retrieval kb transcript manager task thinking sequential everything memory filesystem pdf mobile commander devtools api'.split(' '));

function brandsOf(member: string | undefined): string[] {
	return member ? tokenize(member).map((word) => word.toLowerCase()).filter((word) => word.length >= 3 && !GENERIC_NAME_WORDS.has(word) && !STOP_WORDS.has(word)) : [];
}

/** How much a synonym of a request's word weighs against the word itself. */
const SYNONYM_WEIGHT = 0.5;

/** What a request asks for, as tools' annotations say what they do: to read, or to destroy. */
type Intent = 'read' | 'destroy';

const READ_WORDS = new Set('what which who whom whose when where how show list view see find search get read look check count display'.split(' '));
const DESTROY_WORDS = new Set('delete remove drop erase forget kill destroy purge wipe clear'.split(' '));

/** The intent of a request's words: one kind only, else none. */
function intentOf(words: ReadonlySet<string>): Intent | undefined {
	const reads = [...words].some((word) => READ_WORDS.has(word));
	const destroys = [...words].some((word) => DESTROY_WORDS.has(word));
	return reads === destroys ? undefined : reads ? 'read' : 'destroy';
}

function kindOf(annotations: unknown): Intent | undefined {
	const hints = annotations as { readOnlyHint?: unknown; destructiveHint?: unknown } | undefined;
	return hints?.readOnlyHint === true ? 'read' : hints?.destructiveHint === true ? 'destroy' : undefined;
}

/** How much a tool whose annotations match the request's intent weighs up. */
const INTENT_BOOST = 1.2;

/** How much a member's tools weigh when the request names its product. */
const NAMED_MEMBER_BOOST = 4;

/** What an embeddings model reads of a tool: its name's words, title and description. */
export function embeddingTextOf({ tool }: IndexedTool): string {
	return [wordsOf(tool.name), tool.title, tool.description].filter(Boolean).join('. ');
}

/** The semantic side of a blended ranking: each entry's similarity to the query (undefined: not embedded). */
export interface Semantic {
	/** The semantic share of the blend, 0 to 1. */
	readonly weight: number;
	similarity(id: number): number | undefined;
}

/**
 * An index over `entries`, built once per list of tools: `find` ranks them for a task, `similar`
 * for a name. `describe` says what to read of an entry (an entry that is a tool: itself).
 */
export class ToolIndex<T> {
	private readonly search: MiniSearch<Document>;
	/** Each entry's member. */
	private readonly members: ReadonlyArray<string | undefined>;
	/** What each entry's annotations say it does: reads, or destroys (undefined: they do not say). */
	private readonly kinds: ReadonlyArray<Intent | undefined>;
	/** The product words of the members' names, and the members each names. */
	private readonly brands = new Map<string, Array<string | undefined>>();

	constructor(
		private readonly entries: readonly T[],
		describe: (entry: T) => IndexedTool = (entry) => ({ tool: entry as SearchableTool }),
	) {
		this.search = new MiniSearch<Document>({
			fields: [...FIELDS],
			tokenize,
			processTerm: indexTerm,
			searchOptions: {
				boost: BOOST,
				processTerm: queryTerms,
				// Prefix and typo matches only for words long enough not to match everything.
				prefix: (term) => term.length >= 4,
				fuzzy: (term) => (term.length >= 6 ? 0.2 : false),
				combineWith: 'OR',
			},
		});
		const described = entries.map(describe);
		this.search.addAll(described.map((entry, id) => documentOf(id, entry)));
		this.members = described.map((entry) => entry.member);
		this.kinds = described.map(({ tool }) => kindOf(tool.annotations));
		for (const member of new Set(this.members)) for (const brand of brandsOf(member)) this.brands.set(brand, [...(this.brands.get(brand) ?? []), member]);
	}

	/**
	 * The entries that best do `query`, best first: `limit` of them (default 5, at most 50). With
	 * `semantic`, each entry's score is the blend of its lexical and semantic scores, each scaled
	 * by the best of its kind.
	 */
	find(query: string, limit = DEFAULT_LIMIT, semantic?: Semantic): T[] {
		const count = Math.min(Math.max(1, Math.floor(limit)), MAX_LIMIT);
		const hits = this.lexical(query);
		if (!semantic) return hits.slice(0, count).map((hit) => this.entries[hit.id]!);
		const similarities = this.entries.map((_, id) => Math.max(0, semantic.similarity(id) ?? 0));
		const best = { lexical: hits[0]?.score || 1, semantic: Math.max(...similarities) || 1 };
		const scores = similarities.map((similarity) => (semantic.weight * similarity) / best.semantic);
		for (const hit of hits) scores[hit.id]! += ((1 - semantic.weight) * hit.score) / best.lexical;
		return scores
			.map((score, id) => ({ score, id }))
			.filter(({ score }) => score > 0)
			.sort((a, b) => b.score - a.score)
			.slice(0, count)
			.map(({ id }) => this.entries[id]!);
	}

	/** BM25 hits of `query`, best first, with the tools of a member the request names weighed up. */
	private lexical(query: string): Array<{ id: number; score: number }> {
		const words = new Set(tokenize(query).map((word) => word.toLowerCase()));
		const meant = [...words].flatMap((word) => [word, ...(SYNONYMS[word] ?? [])]);
		const named = new Set([...this.brands].filter(([brand]) => meant.some((word) => word === brand || (word.length >= 5 && brand.startsWith(word)))).flatMap(([, members]) => members));
		// A synonym counts, but less than a word the user said.
		const said = new Set([...words].filter((word) => !STOP_WORDS.has(word)).map((word) => stemmer(word)));
		const boostTerm = (term: string) => (said.has(term) ? 1 : SYNONYM_WEIGHT);
		const intent = intentOf(words);
		const hits = this.search.search(query, { boostTerm }).map((hit) => {
			const id = hit.id as number;
			return { id, score: hit.score * (named.has(this.members[id]) ? NAMED_MEMBER_BOOST : 1) * (intent && this.kinds[id] === intent ? INTENT_BOOST : 1) };
		});
		return named.size || intent ? hits.sort((a, b) => b.score - a.score) : hits;
	}

	/** The entries whose names are closest to `name` (a misspelt or unknown one), best first. */
	similar(name: string, count: number): T[] {
		return this.search
			.search(wordsOf(name), { fields: ['name'], fuzzy: 0.3, prefix: true, combineWith: 'OR' })
			.slice(0, count)
			.map((hit) => this.entries[hit.id as number]!);
	}
}
