/**
 * The names an aggregate exposes for its members' tools and prompts: what each member may show
 * (`tools`, `exclude_all`, `default_visibility`), its renames (`overrides`), and the conflict
 * strategy; every name made to match `^[a-zA-Z0-9_-]{1,64}$`, shortened deterministically and
 * kept unique. Pure: the same lists give the same names.
 */
import { createHash } from 'node:crypto';
import type { AggregationConfig } from '../../protocol/runConfig.js';
import { EXPOSED_NAME } from './aggregation.js';

const MAX_NAME = 64;
const HASH_LENGTH = 8;

/** One member's list, in the member's own names. */
export interface MemberList<T extends { name: string }> {
	readonly member: string;
	readonly items: readonly T[];
}

/** An item as the aggregate shows it, and where it comes from. */
export interface Exposed<T> {
	readonly name: string;
	readonly member: string;
	/** The item with its exposed name (and overridden description). */
	readonly item: T;
	/** Its name at the member. */
	readonly original: string;
}

/** A name two members hold that `manual` leaves unresolved: both copies are hidden. */
export interface Clash {
	readonly name: string;
	readonly members: readonly string[];
}

export interface Resolution<T> {
	readonly exposed: readonly Exposed<T>[];
	readonly clashes: readonly Clash[];
}

const hashOf = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, HASH_LENGTH);

/** `name` with every character outside the pattern made `_`, cut to 64 with a hash of what it was when longer. */
export function validName(name: string): string {
	const clean = name.replace(/[^a-zA-Z0-9_-]/g, '_') || '_';
	if (clean.length <= MAX_NAME) return clean;
	return `${clean.slice(0, MAX_NAME - HASH_LENGTH - 1)}_${hashOf(name)}`;
}

/**
 * Resolves the names of the members' tools (`tools` true: filters and overrides apply) or
 * prompts. Lists are taken in member name order, whatever order they came in.
 */
export function resolveNames<T extends { name: string; description?: string }>(config: AggregationConfig, lists: readonly MemberList<T>[], tools: boolean): Resolution<T> {
	const conflict = config.conflict ?? 'prefix';
	const format = config.prefix_format ?? '{workload}_';
	const candidates: Array<{ wanted: string; member: string; item: T; original: string }> = [];
	for (const { member, items } of [...lists].sort((a, b) => (a.member < b.member ? -1 : a.member > b.member ? 1 : 0))) {
		const settings = config.members?.[member];
		if (tools && settings?.exclude_all) continue;
		const allowed = tools && settings?.tools ? new Set(settings.tools) : undefined;
		if (tools && !allowed && config.default_visibility === 'deny') continue;
		for (const item of [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
			if (allowed && !allowed.has(item.name)) continue;
			const override = tools ? settings?.overrides?.[item.name] : undefined;
			// A rename is the exposed name as given; otherwise the strategy decides.
			const wanted = override?.name ?? (conflict === 'prefix' ? `${format.replaceAll('{workload}', member)}${item.name}` : item.name);
			const shown = override?.description !== undefined ? { ...item, description: override.description } : item;
			candidates.push({ wanted, member, item: shown, original: item.name });
		}
	}
	const byName = new Map<string, typeof candidates>();
	for (const candidate of candidates) (byName.get(candidate.wanted) ?? byName.set(candidate.wanted, []).get(candidate.wanted)!).push(candidate);
	const rank = (member: string) => {
		const index = config.priority?.indexOf(member) ?? -1;
		return index < 0 ? Number.MAX_SAFE_INTEGER : index;
	};
	const kept: typeof candidates = [];
	const clashes: Clash[] = [];
	for (const [name, holders] of byName) {
		if (holders.length === 1 || conflict === 'prefix') kept.push(...holders);
		else if (conflict === 'priority') kept.push([...holders].sort((a, b) => rank(a.member) - rank(b.member))[0]!);
		else clashes.push({ name, members: holders.map((holder) => holder.member) });
	}
	// Valid and unique: a name changed to fit, or one a second holder has, gets a hash of where it comes from.
	const exposed: Exposed<T>[] = [];
	const taken = new Set<string>();
	for (const { wanted, member, item, original } of kept) {
		let name = EXPOSED_NAME.test(wanted) ? wanted : validName(wanted);
		if (taken.has(name)) name = `${name.slice(0, MAX_NAME - HASH_LENGTH - 1)}_${hashOf(`${member}/${original}`)}`;
		taken.add(name);
		exposed.push({ name, member, item: { ...item, name }, original });
	}
	return { exposed, clashes };
}
