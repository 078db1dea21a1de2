/**
 * The tools an aggregate shows, for one set of its members' lists: each definition checked
 * (definitions.ts), the exposed names resolved (runspec/aggregationNames.ts), and, when first
 * needed, the search index over them (search.ts). Built once per change of the lists and
 * shared by every client session that sees the same lists, so neither a list nor a search
 * pays for it again.
 */
import type { AggregationConfig } from '../../../../protocol/runConfig.js';
import { resolveNames, type Clash, type Exposed, type MemberList } from '../../../runspec/aggregationNames.js';
import { checkTool, type DefinitionNote } from './definitions.js';
import type { Embeddings } from './embeddings.js';
import { embeddingTextOf, ToolIndex, type IndexedTool, type MemberContext, type SearchableTool } from './search.js';

export type Tool = SearchableTool;

/** The tools one caller sees: a view, or the part of one shown to it and that it may call (ToolView.seenBy). */
export interface ToolsSeen {
	readonly exposed: readonly Exposed<Tool>[];
	get(name: string): Exposed<Tool> | undefined;
	/** A tool of the view it was made from as this caller sees it, or undefined when hidden. */
	seen(tool: Exposed<Tool>): Exposed<Tool> | undefined;
	/** Up to `count` of its names closest to `name`, an unknown one. */
	closest(name: string, count?: number): string[];
}

export class ToolView implements ToolsSeen {
	readonly exposed: readonly Exposed<Tool>[];
	readonly clashes: readonly Clash[];
	/** Member tools repaired or left out, and why. */
	readonly notes: readonly DefinitionNote[];
	private readonly byName: ReadonlyMap<string, Exposed<Tool>>;
	private built: ToolIndex<Exposed<Tool>> | undefined;
	private keys: ReturnType<ToolView['embeddingKeys']> | undefined;

	constructor(
		config: AggregationConfig,
		/** The lists it was built from: the cache's own arrays, so a view is reused while they are. */
		readonly lists: readonly MemberList<Tool>[],
		private readonly contexts: ReadonlyMap<string, MemberContext>,
	) {
		const notes: DefinitionNote[] = [];
		const checked = lists.map(({ member, items }) => ({
			member,
			items: items.flatMap((item) => {
				const result = checkTool(item);
				if (result.tool === undefined) notes.push({ member, tool: String(item?.name ?? '(no name)'), action: 'left out', reason: result.problem });
				else if (result.repaired) notes.push({ member, tool: item.name, action: 'repaired', reason: result.repaired });
				return result.tool === undefined ? [] : [result.tool];
			}),
		}));
		const { exposed, clashes } = resolveNames(config, checked, true);
		this.exposed = exposed;
		this.clashes = clashes;
		this.notes = notes;
		this.byName = new Map(exposed.map((tool) => [tool.name, tool]));
	}

	/** Whether this view was built from exactly `lists` (the same arrays of the same members). */
	isOf(lists: readonly MemberList<Tool>[]): boolean {
		return lists.length === this.lists.length && lists.every((list, at) => list.member === this.lists[at]!.member && list.items === this.lists[at]!.items);
	}

	get(name: string): Exposed<Tool> | undefined {
		return this.byName.get(name);
	}

	/** What the search reads of an exposed tool: the tool, its member, and what the member says of itself. */
	indexed(tool: Exposed<Tool>): IndexedTool {
		return { tool: tool.item, member: tool.member, context: this.contexts.get(tool.member) };
	}

	/** The search index, built on first use. */
	get index(): ToolIndex<Exposed<Tool>> {
		this.built ??= new ToolIndex(this.exposed, (tool) => this.indexed(tool));
		return this.built;
	}

	/** Each exposed tool's embedding fingerprint, in index order, and the text it is of; made on first use. */
	embeddingKeys(embeddings: Embeddings): { readonly fingerprints: readonly string[]; readonly texts: ReadonlyMap<string, string> } {
		if (!this.keys) {
			const texts = new Map<string, string>();
			const fingerprints = this.exposed.map((tool) => {
				const text = embeddingTextOf(this.indexed(tool));
				const fingerprint = embeddings.fingerprintOf(text);
				texts.set(fingerprint, text);
				return fingerprint;
			});
			this.keys = { fingerprints, texts };
		}
		return this.keys;
	}

	/**
	 * The tools of this view as one caller sees them: `shown` gives each tool as shown to that
	 * caller (renamed, described anew), or undefined when it is hidden from them.
	 */
	seenBy(shown: (tool: Exposed<Tool>) => Exposed<Tool> | undefined): ToolsSeen {
		const seen = new Map<Exposed<Tool>, Exposed<Tool>>();
		for (const tool of this.exposed) {
			const each = shown(tool);
			if (each) seen.set(tool, each);
		}
		if (seen.size === this.exposed.length && [...seen].every(([tool, each]) => tool === each)) return this;
		const exposed = [...seen.values()];
		const byName = new Map(exposed.map((tool) => [tool.name, tool]));
		return {
			exposed,
			get: (name) => byName.get(name),
			seen: (tool) => seen.get(tool),
			closest: (name, count = 3) =>
				this.index
					.similar(name, this.exposed.length)
					.flatMap((tool) => seen.get(tool) ?? [])
					.slice(0, count)
					.map((tool) => tool.name),
		};
	}

	seen(tool: Exposed<Tool>): Exposed<Tool> | undefined {
		return this.byName.get(tool.name) === tool ? tool : undefined;
	}

	/** Up to `count` visible names closest to `name`, an unknown one: what the caller likely meant. */
	closest(name: string, count = 3): string[] {
		return this.index.similar(name, count).map((tool) => tool.name);
	}
}
