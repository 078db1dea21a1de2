/**
 * The texts of a JSON value a guardrail reads: every string, object keys included, in document
 * order, up to a cap; and the same value with some of them rewritten. Binary content is left
 * out and counted: an image's or audio's base64 `data`, a resource's `blob`.
 */

type Path = ReadonlyArray<string | number>;

/** One string of the value: where it is, whether it is a key, and its text (its start, for the one the cap cuts). */
export interface TextSlot {
	readonly path: Path;
	readonly key: boolean;
	readonly text: string;
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

/** The strings of `value`, at most `maxChars` characters of them. */
export function collectTexts(value: unknown, maxChars: number): CollectedTexts {
	const slots: TextSlot[] = [];
	let chars = 0;
	let binary = 0;
	let truncated = false;
	const add = (path: Path, key: boolean, text: string): boolean => {
		// The string that crosses the cap is scanned up to it.
		const kept = chars + text.length > maxChars ? text.slice(0, maxChars - chars) : text;
		chars += kept.length;
		if (kept) slots.push({ path, key, text: kept });
		if (kept.length < text.length) truncated = true;
		return !truncated;
	};
	const walk = (node: unknown, path: Path): boolean => {
		if (typeof node === 'string') return add(path, false, node);
		if (Array.isArray(node)) {
			for (let index = 0; index < node.length; index++) if (!walk(node[index], [...path, index])) return false;
			return true;
		}
		if (node === null || typeof node !== 'object') return true;
		const record = node as Record<string, unknown>;
		for (const key of Object.keys(record)) {
			if (isBinaryField(record, key)) {
				binary++;
				continue;
			}
			const at = [...path, key];
			if (!add(at, true, key) || !walk(record[key], at)) return false;
		}
		return true;
	};
	walk(value, []);
	return { slots, binary, truncated };
}

/** A copy of `value` with the strings of `slots` replaced by `texts` (a cut string keeps its unscanned rest). */
export function rewriteTexts(value: unknown, rewrites: ReadonlyArray<readonly [slot: TextSlot, text: string]>): unknown {
	const copy = structuredClone(value);
	// Values first, then keys deepest first, so that a renamed key leaves the paths below it valid.
	const ordered = [...rewrites].sort(([a], [b]) => Number(a.key) - Number(b.key) || b.path.length - a.path.length);
	for (const [slot, text] of ordered) {
		const parent = slot.path.slice(0, -1).reduce<any>((node, step) => node[step], copy);
		const last = slot.path[slot.path.length - 1]!;
		const original = slot.key ? String(last) : slot.path.length ? (parent[last] as string) : (copy as string);
		const rewritten = text + original.slice(slot.text.length);
		if (!slot.key) {
			if (slot.path.length === 0) return rewritten;
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
