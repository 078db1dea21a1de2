/**
 * The texts of a JSON value a guardrail reads: every string, object keys included, in document
 * order, up to a cap; and the same value with some of them rewritten. Binary content is left
 * out and counted: an image's or audio's base64 `data`, a resource's `blob`.
 */

type Path = ReadonlyArray<string | number>;

/** A key or index on the way down to a string, linked to the one above it: a path made only when asked for. */
interface Step {
	readonly parent: Step | undefined;
	readonly name: string | number;
	readonly depth: number;
}

/** One string of the value: where it is, whether it is a key, and its text (its start, for the one the cap cuts). */
export class TextSlot {
	constructor(
		private readonly at: Step | undefined,
		readonly key: boolean,
		readonly text: string,
	) {}

	/** How many keys and indexes lead to it: 0 for the value itself. */
	get depth(): number {
		return this.at?.depth ?? 0;
	}

	/** Its own key or index (for a key, the key itself); undefined for the value itself. */
	get last(): string | number | undefined {
		return this.at?.name;
	}

	/** The keys and indexes from the value down to it (a redaction's rewrite needs them; a scan does not). */
	get path(): Path {
		const path: Array<string | number> = [];
		for (let step = this.at; step; step = step.parent) path.push(step.name);
		return path.reverse();
	}
}

export interface CollectedTexts {
	readonly slots: TextSlot[];
	/** Binary parts left out. */
	readonly binary: number;
	/** Whether texts past `maxChars` were left out. */
	readonly truncated: boolean;
}

const BINARY_CONTENT_TYPES = new Set(['image', 'audio']);

function isBinaryField(parent: Record<string, unknown>, key: string): boolean {
	return (key === 'blob' && typeof parent[key] === 'string') || (key === 'data' && typeof parent.type === 'string' && BINARY_CONTENT_TYPES.has(parent.type));
}

function stepInto(parent: Step | undefined, name: string | number): Step {
	return { parent, name, depth: (parent?.depth ?? 0) + 1 };
}

/**
 * The walk of one value. It runs on every scanned message, mostly on caches the rest of the
 * proxy's work has filled, so it makes no path arrays and no closures: a slot's path is made
 * only for a rewrite (they were a third to a half of the walk's time, measured cold).
 */
class Collector {
	readonly slots: TextSlot[] = [];
	binary = 0;
	truncated = false;
	#chars = 0;

	constructor(private readonly maxChars: number) {}

	/** Adds `text`; false once the cap is reached. */
	add(at: Step | undefined, key: boolean, text: string): boolean {
		// The string that crosses the cap is scanned up to it.
		const kept = this.#chars + text.length > this.maxChars ? text.slice(0, this.maxChars - this.#chars) : text;
		this.#chars += kept.length;
		if (kept) this.slots.push(new TextSlot(at, key, kept));
		if (kept.length < text.length) this.truncated = true;
		return !this.truncated;
	}

	walk(node: unknown, at: Step | undefined): boolean {
		if (typeof node === 'string') return this.add(at, false, node);
		if (node === null || typeof node !== 'object') return true;
		if (Array.isArray(node)) {
			for (let index = 0; index < node.length; index++) if (!this.walk(node[index], stepInto(at, index))) return false;
			return true;
		}
		const record = node as Record<string, unknown>;
		for (const key of Object.keys(record)) {
			if (isBinaryField(record, key)) {
				this.binary++;
				continue;
			}
			const step = stepInto(at, key);
			if (!this.add(step, true, key) || !this.walk(record[key], step)) return false;
		}
		return true;
	}
}

/** The strings of `value`, at most `maxChars` characters of them. */
export function collectTexts(value: unknown, maxChars: number): CollectedTexts {
	const collector = new Collector(maxChars);
	collector.walk(value, undefined);
	return { slots: collector.slots, binary: collector.binary, truncated: collector.truncated };
}

/** A copy of `value` with the strings of `slots` replaced by `texts` (a cut string keeps its unscanned rest). */
export function rewriteTexts(value: unknown, rewrites: ReadonlyArray<readonly [slot: TextSlot, text: string]>): unknown {
	const copy = structuredClone(value);
	// Values first, then keys deepest first, so that a renamed key leaves the paths below it valid.
	const ordered = [...rewrites].sort(([a], [b]) => Number(a.key) - Number(b.key) || b.depth - a.depth);
	for (const [slot, text] of ordered) {
		const path = slot.path;
		const parent = path.slice(0, -1).reduce<any>((node, step) => node[step], copy);
		const last = path[path.length - 1]!;
		const original = slot.key ? String(last) : path.length ? (parent[last] as string) : (copy as string);
		const rewritten = text + original.slice(slot.text.length);
		if (!slot.key) {
			if (path.length === 0) return rewritten;
			parent[last] = rewritten;
			continue;
		}
		let name = rewritten;
		for (let suffix = 2; name in parent && name !== last; suffix++) name = `${rewritten}#${suffix}`;
		const entries = Object.entries(parent as Record<string, unknown>).map(([key, entry]) => [key === last ? name : key, entry] as const);
		for (const key of Object.keys(parent)) delete parent[key];
		for (const [key, entry] of entries) parent[key] = entry;
	}
	return copy;
}
