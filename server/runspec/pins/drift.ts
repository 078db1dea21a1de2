/**
 * Drift: a list the server sends compared with the pins. The proxy screens every list it passes
 * on (`screen`), the services report each item's state (`reviewOf`) and approve (`approve`).
 * A rename is a removed name and a new one; a name listed twice makes the whole list suspect.
 */
import { definitionOf, fingerprintOf, type PinKind } from './fingerprint.js';
import { flagsOf } from './flags.js';
import type { KindPins, Observation, PinnedItem } from './store.js';

export type PinState = 'pinned' | 'changed' | 'new' | 'removed';

/** One item of a list as the server sent it, pinned fields only. */
export interface Listed {
	readonly name: string;
	readonly item: PinnedItem;
}

export interface Screening {
	/** The pins and observation after this list (the same object when nothing changed). */
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

function sameObservation(a: Observation | undefined, b: Observation): boolean {
	if (!a || a.complete !== b.complete || (a.duplicates ?? []).join('\n') !== (b.duplicates ?? []).join('\n')) return false;
	const names = Object.keys(b.items);
	return names.length === Object.keys(a.items).length && names.every((name) => a.items[name]?.fingerprint === b.items[name]!.fingerprint);
}

/**
 * Screens one page of a list against `record` (undefined: the first list of this kind, whose
 * unflagged items become the pins). Flags are found only for what is not pinned as it is, and
 * kept from the last observation while the definition stays the same, so an unchanged list
 * costs a hash per item and no pattern matching.
 */
export function screen(kind: PinKind, items: readonly Record<string, unknown>[], record: KindPins | undefined, page: Page, now: string): Screening {
	const listed = items.filter((item) => typeof item?.name === 'string');
	const ownNames = new Set(listed.map((item) => item.name as string));
	const counts = new Map<string, number>();
	for (const item of listed) counts.set(item.name as string, (counts.get(item.name as string) ?? 0) + 1);
	const duplicates = [...counts].filter(([, count]) => count > 1).map(([name]) => name);
	const previous = record?.observed;
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
		if (!record && !flags?.length && !duplicates.includes(name)) {
			pinned[name] = { ...seen[name], pinned_at: now };
			approved.add(name);
		} else drifted.push(name);
	}
	const observed: Observation = { at: now, complete: page.first && page.last, items: seen, ...(duplicates.length ? { duplicates } : {}) };
	const changed = !record || !sameObservation(previous, observed);
	return { record: changed ? { pinned, observed } : record, changed, drifted, duplicates, approved };
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

export function reviewOf(record: KindPins | undefined): ItemReview[] {
	if (!record) return [];
	const { pinned, observed } = record;
	const reviews: ItemReview[] = [];
	const duplicates = new Set(observed?.duplicates ?? []);
	for (const [name, current] of Object.entries(observed?.items ?? {})) {
		const pin = pinned[name];
		const state: PinState = !pin ? 'new' : pin.fingerprint === current.fingerprint && !duplicates.has(name) ? 'pinned' : 'changed';
		reviews.push({ name, state, fingerprint: current.fingerprint, ...(pin ? { pinned: pin } : {}), current, ...(duplicates.has(name) ? { duplicate: true } : {}) });
	}
	for (const [name, pin] of Object.entries(pinned)) {
		if (observed?.items[name]) continue;
		reviews.push({ name, state: observed?.complete ? 'removed' : 'pinned', fingerprint: pin.fingerprint, pinned: pin });
	}
	return reviews.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The names `block` lets through before any list is seen again: pinned, and not seen changed. */
export function approvedNames(record: KindPins | undefined): ReadonlySet<string> | undefined {
	if (!record) return undefined;
	return new Set(reviewOf(record).filter((review) => review.state === 'pinned').map((review) => review.name));
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
