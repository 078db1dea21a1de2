/**
 * Drift: a list the server sends compared with the pins. The proxy screens every list it passes
 * on (`screen`), the services report each item's state (`reviewOf`) and approve (`approve`).
 * A rename is a removed name and a new one; a name listed twice makes the whole list suspect.
 *
 * A server may list more tools to a client with more capabilities, so lists are screened under
 * the client's capability set (capabilities.ts): the first list of a set with a capability no
 * set seen before had pins what it adds, as the very first list does, while a name that first
 * shows up in a later list of a set already seen, or of a set with no more capabilities than one
 * seen, is new. A definition is compared with its one pin whatever the set.
 */
import { isSubsetOf } from './capabilities.js';
import { definitionOf, fingerprintOf, type PinKind } from './fingerprint.js';
import { blocksOnSight, flagsOf } from './flags.js';
import type { KindPins, Observation, PinnedItem } from './store.js';

export type PinState = 'pinned' | 'changed' | 'new' | 'removed';

export interface Screening {
	/** The pins and observations after this list (the same object when nothing changed). */
	readonly record: KindPins;
	/** Whether `record` differs from the one screened against (it must be written). */
	readonly changed: boolean;
	/** The listed items whose definition is not the pinned one (changed, new or flagged at first sight). */
	readonly drifted: readonly string[];
	readonly duplicates: readonly string[];
	/** Of the listed items, those a `block` policy serves: pinned and unchanged. */
	readonly approved: ReadonlySet<string>;
}

/** Where in a paginated list a page is: the first page replaces what was seen, later ones add to it. */
export interface Page {
	readonly first: boolean;
	readonly last: boolean;
}

/** The most capability sets whose lists are kept; past it the oldest observation goes. */
export const MAX_OBSERVED_SETS = 32;

function sameObservation(a: Observation | undefined, b: Observation): boolean {
	if (!a || a.complete !== b.complete || a.initial !== b.initial || (a.duplicates ?? []).join('\n') !== (b.duplicates ?? []).join('\n')) return false;
	const names = Object.keys(b.items);
	return names.length === Object.keys(a.items).length && names.every((name) => a.items[name]?.fingerprint === b.items[name]!.fingerprint);
}

/**
 * Whether a list to clients of `set` pins what it adds on sight: its first list, when no set
 * seen before has every capability it has (a client with fewer capabilities sees no more tools).
 */
function pinsOnSight(set: string, observed: Readonly<Record<string, Observation>>, page: Page): boolean {
	const previous = observed[set];
	if (!page.first) return previous?.initial === true;
	return !previous && Object.keys(observed).every((other) => !isSubsetOf(set, other));
}

/** The observations with `set`'s replaced, the oldest dropped past MAX_OBSERVED_SETS. */
function withObservation(observed: Readonly<Record<string, Observation>>, set: string, observation: Observation): Record<string, Observation> {
	const next = { ...observed, [set]: observation };
	const sets = Object.keys(next);
	if (sets.length <= MAX_OBSERVED_SETS) return next;
	const oldest = sets.filter((other) => other !== set).sort((a, b) => (next[a]!.at < next[b]!.at ? -1 : next[a]!.at > next[b]!.at ? 1 : 0))[0]!;
	delete next[oldest];
	return next;
}

/**
 * Screens one page of a list, listed to a client of capability set `set`, against `record`
 * (undefined: nothing of this kind seen yet). What the list pins on sight (see `pinsOnSight`) is
 * what no blocking flag holds back (flags.ts) and was not seen unpinned in another set's list. Flags are found only for what
 * is not pinned as it is, and kept from the last observation while the definition stays the
 * same, so an unchanged list costs a hash per item and no pattern matching.
 */
export function screen(kind: PinKind, items: readonly Record<string, unknown>[], record: KindPins | undefined, set: string, page: Page, now: string): Screening {
	const listed = items.filter((item) => typeof item?.name === 'string');
	const ownNames = new Set(listed.map((item) => item.name as string));
	const counts = new Map<string, number>();
	for (const item of listed) counts.set(item.name as string, (counts.get(item.name as string) ?? 0) + 1);
	const duplicates = [...counts].filter(([, count]) => count > 1).map(([name]) => name);
	const observed = record?.observed ?? {};
	const previous = observed[set];
	const onSight = pinsOnSight(set, observed, page);
	const seen: Record<string, PinnedItem> = page.first || !previous ? {} : { ...previous.items };
	const pinned: Record<string, PinnedItem> = { ...(record?.pinned ?? {}) };
	const approved = new Set<string>();
	const drifted: string[] = [];
	const done = new Set<string>();
	for (const item of listed) {
		const name = item.name as string;
		if (done.has(name)) continue; // a duplicate: the first one is kept, the list is refused anyway
		done.add(name);
		const definition = definitionOf(kind, item);
		const fingerprint = fingerprintOf(definition);
		const pin = pinned[name];
		if (pin?.fingerprint === fingerprint) {
			seen[name] = { fingerprint, definition, ...(pin.flags ? { flags: pin.flags } : {}) };
			if (!duplicates.includes(name)) approved.add(name);
			continue;
		}
		const before = previous?.items[name];
		const flags = before?.fingerprint === fingerprint ? before.flags : flagsOf(definition, ownNames);
		seen[name] = { fingerprint, definition, ...(flags?.length ? { flags } : {}) };
		if (onSight && !pin && !blocksOnSight(flags) && !duplicates.includes(name) && !seenUnpinned(name, set, observed, pinned)) {
			pinned[name] = { ...seen[name], pinned_at: now };
			approved.add(name);
		} else drifted.push(name);
	}
	const observation: Observation = {
		at: now,
		complete: page.first && page.last,
		items: seen,
		...(duplicates.length ? { duplicates } : {}),
		...(onSight && !page.last ? { initial: true } : {}),
	};
	const changed = !record || !sameObservation(previous, observation);
	return { record: changed ? { pinned, observed: withObservation(observed, set, observation) } : record, changed, drifted, duplicates, approved };
}

/** Whether another set's list carries `name` and it is not pinned: seen new there, so not pinned on sight here. */
function seenUnpinned(name: string, set: string, observed: Readonly<Record<string, Observation>>, pinned: Readonly<Record<string, PinnedItem>>): boolean {
	return !pinned[name] && Object.entries(observed).some(([other, observation]) => other !== set && observation.items[name] !== undefined);
}

/** One item's review: its state, and both definitions when they differ. */
export interface ItemReview {
	readonly name: string;
	readonly state: PinState;
	/** The current fingerprint (the pinned one for a removed item). */
	readonly fingerprint: string;
	readonly pinned?: PinnedItem;
	readonly current?: PinnedItem;
	/** The server listed the name more than once. */
	readonly duplicate?: boolean;
}

/**
 * Each item's state, from its latest sighting in any set's list: a definition once changed and
 * approved is not reported changed again by an older list of another set. A pinned name is
 * removed when no set's list carries it and every list came whole.
 */
export function reviewOf(record: KindPins | undefined): ItemReview[] {
	if (!record) return [];
	const { pinned } = record;
	const observations = Object.values(record.observed).sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
	const latest = new Map<string, { current: PinnedItem; duplicate: boolean }>();
	for (const observation of observations) {
		const duplicates = new Set(observation.duplicates ?? []);
		for (const [name, current] of Object.entries(observation.items)) latest.set(name, { current, duplicate: duplicates.has(name) });
	}
	const reviews: ItemReview[] = [];
	for (const [name, { current, duplicate }] of latest) {
		const pin = pinned[name];
		const state: PinState = !pin ? 'new' : pin.fingerprint === current.fingerprint && !duplicate ? 'pinned' : 'changed';
		reviews.push({ name, state, fingerprint: current.fingerprint, ...(pin ? { pinned: pin } : {}), current, ...(duplicate ? { duplicate: true } : {}) });
	}
	const whole = observations.length > 0 && observations.every((observation) => observation.complete);
	for (const [name, pin] of Object.entries(pinned)) {
		if (latest.has(name)) continue;
		reviews.push({ name, state: whole ? 'removed' : 'pinned', fingerprint: pin.fingerprint, pinned: pin });
	}
	return reviews.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The names `block` lets through before any list is seen again: pinned, and not seen changed. */
export function approvedNames(record: KindPins | undefined): ReadonlySet<string> | undefined {
	if (!record) return undefined;
	return new Set(reviewOf(record).filter((review) => review.state === 'pinned').map((review) => review.name));
}

/** Whether two sets of approved names are the same names. */
export function sameNames(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
	return a.size === b.size && [...a].every((name) => b.has(name));
}

/**
 * The record with `names` (default: every drifted item) re-pinned as last seen, and removed
 * items forgotten. Throws `unknown` with a name that is not drifted, `duplicate` with a name
 * the server lists twice (there is no one definition to approve).
 */
export function approve(record: KindPins, names: readonly string[] | undefined, now: string): { record: KindPins; approved: string[] } | { unknown: string } | { duplicate: string } {
	const drifted = new Map(reviewOf(record).filter((review) => review.state !== 'pinned').map((review) => [review.name, review]));
	const chosen = names ?? [...drifted.keys()].filter((name) => !drifted.get(name)!.duplicate);
	const pinned = { ...record.pinned };
	for (const name of chosen) {
		const review = drifted.get(name);
		if (!review) return { unknown: name };
		if (review.duplicate) return { duplicate: name };
		if (review.state === 'removed') delete pinned[name];
		else pinned[name] = { ...review.current!, pinned_at: now };
	}
	return { record: { ...record, pinned }, approved: [...chosen] };
}
