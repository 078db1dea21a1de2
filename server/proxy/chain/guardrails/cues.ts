/**
 * Which of the rules' cues (the literals a rule cannot match without) a text holds. Each cue is
 * tested on its own, and only when the text holds its gate: for each of the cue's alternatives,
 * a character every match of it needs, the rarest in ordinary text (`_`, `~`, `@`, an uppercase
 * letter), looked up with `indexOf`, which runs at memory speed. When each gate lies at a fixed
 * distance from its match's start (`=` in `sig=`, `A` in `A(?:KIA|…)`), the cue is tried only
 * there: at each occurrence of the gate (or of the literal the match starts with from the gate
 * on, `29.` in `ya29.`), the rest of that literal, then the expression held to that start. An
 * alternative needing only lowercase letters of a caseless cue has no gate and is always
 * tested. One expression of all the cues read every position of the text against every
 * alternative: 4.5 µs over 1 KiB of ordinary text.
 */

/** Characters a gate may be, rarest in ordinary text first (prose, paths, JSON, URLs). */
const GATE_CHARACTERS = '~@^|`\\_;=%"-QJZXKVYBWGFHMUPLCDONRTSIEA0123456789';

/**
 * How many of an anchor's occurrences are tried in place before the cue's expression runs over
 * the whole text instead (a text of snake_case names holds many `_`): a try costs a few
 * nanoseconds, an expression over 1 KiB 30 to 400.
 */
const MAX_ANCHOR_TRIES = 16;

/**
 * Where an alternative is tried: at each occurrence of its key, `offset` characters past a
 * match's start. The key is the literal every match starts with from the gate on (`29.` of
 * `ya29.`: one search, where the gate alone, a digit, is everywhere), or the gate alone when
 * that literal ends before it.
 */
interface Anchor {
	readonly key: string;
	readonly offset: number;
	/** The part of the literal start before the key, compared before the expression runs. */
	readonly head: string;
}

/** A cue as it is tested. */
interface GatedCue {
	readonly pattern: RegExp;
	/** The same expression, tried where an anchor puts a match's start. */
	readonly sticky: RegExp;
	/** The bits of its gates in `Cues`' list of them; 0 when an alternative has none. */
	readonly gates: number;
	/**
	 * Each alternative's anchor, or undefined when a gate lies at no fixed distance from a
	 * match's start: then the expression runs over the text.
	 */
	readonly anchors: readonly Anchor[] | undefined;
}

/** Where the group or class of `source` that opens at `at` ends, past its closing character. */
function endOf(source: string, at: number): number {
	let depth = 0;
	for (let index = at; index < source.length; index++) {
		const char = source[index];
		if (char === '\\') index++;
		else if (char === '[') {
			// A class: up to its `]`, where `(`, `)` and `|` are literals.
			while (++index < source.length && source[index] !== ']') if (source[index] === '\\') index++;
			if (depth === 0) return index + 1;
		} else if (char === '(') depth++;
		else if (char === ')' && --depth === 0) return index + 1;
	}
	throw new Error(`an unclosed group or class in a cue: ${source}`);
}

/** The top-level alternatives of a cue's source. */
function alternativesOf(source: string): string[] {
	const alternatives: string[] = [];
	let start = 0;
	for (let index = 0; index < source.length; index++) {
		const char = source[index];
		if (char === '\\') index++;
		else if (char === '(' || char === '[') index = endOf(source, index) - 1;
		else if (char === '|') {
			alternatives.push(source.slice(start, index));
			start = index + 1;
		}
	}
	alternatives.push(source.slice(start));
	return alternatives;
}

/** A character every match of an alternative holds, and how far from the match's start, when that is fixed. */
interface Needed {
	readonly char: string;
	readonly offset: number | undefined;
}

/**
 * The characters every match of `alternative` holds: its literal characters outside groups and
 * classes that no quantifier makes optional. Letters only when the cue is case-sensitive.
 */
function neededOf(alternative: string, caseless: boolean): Needed[] {
	const needed: Needed[] = [];
	// How far the next element starts from the match's start; undefined past a group or a quantifier that is not `{n}`.
	let offset: number | undefined = 0;
	for (let index = 0; index < alternative.length; ) {
		const char = alternative[index]!;
		let literal: string | undefined;
		let width: number | undefined = 1;
		let end = index + 1;
		if (char === '\\') {
			// An escaped letter or digit is a class, an assertion or a back reference; punctuation is itself.
			const escaped = alternative[index + 1]!;
			literal = /[A-Za-z0-9]/.test(escaped) ? undefined : escaped;
			width = /[bB]/.test(escaped) ? 0 : /[dDwWsS]/.test(escaped) || literal ? 1 : undefined;
			end = index + 2;
		} else if (char === '[') end = endOf(alternative, index);
		else if (char === '(') {
			end = endOf(alternative, index);
			width = undefined;
		} else if (char === '^' || char === '$') width = 0;
		else if (char !== '.') literal = char;
		const quantifier = alternative[end];
		let optional = false;
		let times: number | undefined = 1;
		if (quantifier === '?' || quantifier === '*') {
			optional = true;
			times = undefined;
			end++;
		} else if (quantifier === '+') {
			times = undefined;
			end++;
		} else if (quantifier === '{') {
			const close = alternative.indexOf('}', end);
			const bounds = alternative.slice(end, close + 1);
			optional = /^\{0\b/.test(bounds);
			times = /^\{\d+\}$/.test(bounds) ? Number(bounds.slice(1, -1)) : undefined;
			end = close + 1;
		}
		if (alternative[end] === '?') end++;
		if (literal !== undefined && !optional && !(caseless && /[A-Za-z]/.test(literal))) needed.push({ char: literal, offset });
		offset = offset === undefined || width === undefined || times === undefined ? undefined : offset + width * times;
		index = end;
	}
	return needed;
}

export function neededCharacters(alternative: string, caseless: boolean): string[] {
	return neededOf(alternative, caseless).map(({ char }) => char);
}

/** An alternative's gate, how far from its match's start the gate lies when that is fixed, and the literal every match starts with. */
interface Gate {
	readonly char: string;
	readonly offset: number | undefined;
	readonly prefix: string;
}

function gateOf(alternative: string, caseless: boolean): Gate | undefined {
	const needed = neededOf(alternative, caseless);
	const char = [...GATE_CHARACTERS].find((candidate) => needed.some((one) => one.char === candidate));
	if (char === undefined) return undefined;
	let prefix = '';
	for (const one of needed) {
		if (one.offset !== prefix.length) break;
		prefix += one.char;
	}
	// The gate's offset, from the first of its occurrences at a fixed one.
	return { char, offset: needed.find((one) => one.char === char && one.offset !== undefined)?.offset, prefix };
}

/** The gate of each alternative of `cue`, or undefined when one of them has none. */
function alternativeGatesOf(cue: RegExp): Gate[] | undefined {
	const gates: Gate[] = [];
	for (const alternative of alternativesOf(cue.source)) {
		const gate = gateOf(alternative, cue.flags.includes('i'));
		if (gate === undefined) return undefined;
		gates.push(gate);
	}
	return gates;
}

/** The gate characters of `cue`'s alternatives, each once, or undefined when one of them has none. */
export function gatesOf(cue: RegExp): string[] | undefined {
	const gates = alternativeGatesOf(cue);
	return gates && [...new Set(gates.map(({ char }) => char))];
}

export class Cues {
	readonly #cues: readonly GatedCue[];
	/** Every cue's gates, each once (`_` gates a dozen cues): a text is searched for each at most once. */
	readonly #gates: readonly string[];

	constructor(cues: readonly RegExp[]) {
		if (cues.length > 30) throw new Error('at most 30 cues');
		const gates: string[] = [];
		this.#cues = cues.map((cue) => {
			const alternatives = alternativeGatesOf(cue);
			let bits = 0;
			for (const { char } of alternatives ?? []) {
				let index = gates.indexOf(char);
				if (index < 0) index = gates.push(char) - 1;
				bits |= 2 ** index;
			}
			const flags = cue.flags.replace(/[gy]/g, '');
			const anchored = alternatives?.every((gate) => gate.offset !== undefined);
			return {
				pattern: new RegExp(cue.source, flags),
				sticky: new RegExp(cue.source, `${flags}y`),
				gates: bits,
				anchors: anchored
					? alternatives!.map(({ char, offset, prefix }) => ({ key: offset! < prefix.length ? prefix.slice(offset) : char, offset: offset!, head: prefix.slice(0, offset) }))
					: undefined,
			};
		});
		if (gates.length > 30) throw new Error('at most 30 gates');
		this.#gates = gates;
	}

	/** The bits of the cues `text` holds. */
	in(text: string): number {
		let found = 0;
		// The gates looked for so far, and those of them the text holds.
		let searched = 0;
		let held = 0;
		for (let index = 0; index < this.#cues.length; index++) {
			const cue = this.#cues[index]!;
			const { gates } = cue;
			if (gates) {
				for (let gate = 0, bit = 1; bit <= gates && !(gates & held); gate++, bit <<= 1) {
					if (!(gates & bit) || searched & bit) continue;
					searched |= bit;
					if (text.includes(this.#gates[gate]!)) held |= bit;
				}
				if (!(gates & held)) continue;
			}
			if (cue.anchors ? this.#anchoredTest(cue, text) : cue.pattern.test(text)) found |= 1 << index;
		}
		return found;
	}

	/** Whether the cue matches where one of its anchors puts a match's start, up to MAX_ANCHOR_TRIES of them, then anywhere. */
	#anchoredTest({ pattern, sticky, anchors }: GatedCue, text: string): boolean {
		let tries = 0;
		for (const { key, offset, head } of anchors!) {
			for (let at = text.indexOf(key, offset); at >= 0; at = text.indexOf(key, at + 1)) {
				if (++tries > MAX_ANCHOR_TRIES) return pattern.test(text);
				// The literal start is compared first, its last character on its own (cheaper than a
				// builtin's call): most anchors in ordinary text start no match.
				const start = at - offset;
				if (head && (text.charCodeAt(start + head.length - 1) !== head.charCodeAt(head.length - 1) || !text.startsWith(head, start))) continue;
				sticky.lastIndex = start;
				if (sticky.test(text)) return true;
			}
		}
		return false;
	}
}
