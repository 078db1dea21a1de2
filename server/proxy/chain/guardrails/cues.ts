/**
 * Which of the rules' cues (the literals a rule cannot match without) a text holds. Each cue is
 * tested only when the text holds its gate: for each of the cue's alternatives, a character
 * every match of it needs, the rarest in ordinary text (`_`, `~`, `@`, an uppercase letter; a
 * lowercase one only where an alternative has nothing rarer), looked up with `indexOf`, which
 * runs at memory speed, once a text however many cues share it; a short text's gates are read
 * in one pass instead. When a gate lies at a fixed distance from an alternative's match start
 * (`=` in `sig=`, `A` in `A(?:KIA|…)`), the alternative is tried only there: at each occurrence
 * of its key (the gate, or the literal the match starts with from the gate on: `29.` in `ya29.`,
 * `unt` in `ccount`), walked once for every alternative that shares it; the rest of the literal
 * start is compared, then the character that must follow the key (`A` then one of `3KGIRNS`),
 * and only then the expression, held to that start.
 *
 * The rules' cues all have gates, so that ordinary text is settled by searches alone: in the
 * proxy, where the scan runs on caches the rest of its work has filled, an expression's test
 * costs about a microsecond, many times a search's. Past LONG_TEXT characters, the cues of the
 * gates every long text holds (`:`, lowercase letters) are tested by their expressions, which
 * then cost less than searching for their keys. A cue an alternative of which has no gate (only
 * letters of a caseless cue) is tested over every text. One expression of all the cues read
 * every position of the text against every alternative: 4.5 µs over 1 KiB of ordinary text.
 */

/**
 * Gates that every long text holds (`:` and the lowercase letters), for an alternative that has
 * nothing rarer: a key that starts with one is searched for by stopping at each of its
 * occurrences, so past LONG_TEXT characters their cues' expressions are run instead.
 */
const COMMON_GATES = ':zqxjkvbpygfwmuclhdrsnioate';
/** Characters a gate may be, rarest in ordinary text first (prose, paths, JSON, URLs). */
const GATE_CHARACTERS = `~@^|\`\\_;=%"-QJZXKVYBWGFHMUPLCDONRTSIEA0123456789${COMMON_GATES}`;
/** How long a text is for its common gates' cues to be tested by their expressions: a search per key costs more from about here. */
const LONG_TEXT = 4096;

/**
 * How many of a key's occurrences are tried in place before its cues' expressions run over the
 * whole text instead (a text of snake_case names holds many `_`): a try costs a few
 * nanoseconds, an expression over 1 KiB 30 to 400.
 */
const MAX_ANCHOR_TRIES = 16;

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

/** An alternative tried where its key lies `offset` characters past a match's start. */
interface AnchoredAlternative {
	/** Its cue's bit. */
	readonly bit: number;
	readonly offset: number;
	/** The part of the literal start before the key, compared before the expression runs. */
	readonly head: string;
	/**
	 * The characters that may come right after the key (ASCII, by code), past any whitespace when
	 * `spaced`; undefined when any may.
	 */
	readonly follows: Uint8Array | undefined;
	readonly spaced: boolean;
	/** The cue's expression, held to a match's start. */
	readonly sticky: RegExp;
}

/** A gate and what a text holding it goes on to: cues tested by their expressions, and keys whose occurrences are tried. */
interface Gated {
	readonly char: string;
	/** Whether it is one of COMMON_GATES. */
	readonly common: boolean;
	/** The bits of its cues, searched and keyed: once they are all settled, the gate is not looked for. */
	readonly cues: number;
	/** The bits of the cues tested by their expressions over the text (a gate at no fixed distance from a match's start). */
	readonly searched: number;
	readonly keys: readonly Key[];
}

/**
 * A key and the alternatives tried at its occurrences: the literal every match of them holds from
 * the gate on (`29.` of `ya29.`: one search, where the gate alone, a digit, is everywhere).
 */
interface Key {
	readonly key: string;
	/** The bits of the alternatives' cues. */
	readonly cues: number;
	readonly alternatives: readonly AnchoredAlternative[];
}

/** What follows the first `count` literal characters of an alternative's source. */
function restAfter(alternative: string, count: number): string {
	let index = 0;
	for (let seen = 0; seen < count; seen++) index += alternative[index] === '\\' ? 2 : 1;
	return alternative.slice(index);
}

/**
 * The characters that may come first in `rest` (past whitespace when it starts with `\s*`):
 * its first letter or digit, or that of each alternative of the group it starts with, in both
 * cases when `caseless`. Undefined when those are not all plain characters (a class, an escape,
 * a quantified first character, a group that may be skipped).
 */
function followsOf(rest: string, caseless: boolean): { follows: Uint8Array; spaced: boolean } | undefined {
	const spaced = rest.startsWith('\\s*');
	const after = spaced ? rest.slice(3) : rest;
	let firsts = [after];
	if (after.startsWith('(?:')) {
		const end = endOf(after, 0);
		if (/^[?*{]/.test(after.slice(end, end + 1))) return undefined;
		firsts = alternativesOf(after.slice(3, end - 1));
	}
	const follows = new Uint8Array(128);
	for (const alternative of firsts) {
		const char = alternative[0];
		if (char === undefined || !/[A-Za-z0-9]/.test(char) || /^[?*{]/.test(alternative.slice(1, 2))) return undefined;
		for (const one of caseless ? [char.toLowerCase(), char.toUpperCase()] : [char]) follows[one.charCodeAt(0)] = 1;
	}
	return { follows, spaced };
}

/** How long a text is for its gates to be read in one pass, cheaper than a search per gate. */
const SHORT_TEXT = 64;

/** Whether a character is whitespace in ASCII (what `\s` means below 128). */
function isAsciiSpace(code: number): boolean {
	return code === 32 || (code >= 9 && code <= 13);
}

export class Cues {
	/** The bits of the cues an alternative of which has no gate: tested over every text. */
	readonly #ungated: number;
	/**
	 * The gates, in the order of their bits, each with the cues it opens: a text is searched for
	 * each at most once (`_` gates a dozen cues), a short text's read in one pass.
	 */
	readonly #gates: readonly Gated[];
	/** Each cue's expression, for a key with too many occurrences to try each. */
	readonly #patterns: readonly RegExp[];
	/** Each ASCII character's gate bits, to read a short text's gates in one pass. */
	readonly #gateBits = new Int32Array(128);
	/** During `in`: the cues found, and those settled (found, or searched for in vain). */
	#found = 0;
	#settled = 0;

	constructor(cues: readonly RegExp[]) {
		if (cues.length > 30) throw new Error('at most 30 cues');
		const gates: Array<{ char: string; cues: number; searched: number; keys: Map<string, { cues: number; alternatives: AnchoredAlternative[] }> }> = [];
		const gateOfChar = (char: string) => {
			let gate = gates.find((known) => known.char === char);
			if (!gate) gates.push((gate = { char, cues: 0, searched: 0, keys: new Map() }));
			return gate;
		};
		let ungated = 0;
		this.#patterns = cues.map((cue, index) => {
			const bit = 2 ** index;
			const flags = cue.flags.replace(/[gy]/g, '');
			const pattern = new RegExp(cue.source, flags);
			const alternatives = alternativeGatesOf(cue);
			if (!alternatives) {
				ungated |= bit;
				return pattern;
			}
			if (!alternatives.every((gate) => gate.offset !== undefined)) {
				for (const { char } of alternatives) {
					const gate = gateOfChar(char);
					gate.cues |= bit;
					gate.searched |= bit;
				}
				return pattern;
			}
			const sticky = new RegExp(cue.source, `${flags}y`);
			const sources = alternativesOf(cue.source);
			alternatives.forEach(({ char, offset, prefix }, at) => {
				const key = offset! < prefix.length ? prefix.slice(offset) : char;
				// What follows the key is known only where the key ends the literal start.
				const follows = offset! < prefix.length ? followsOf(restAfter(sources[at]!, prefix.length), flags.includes('i')) : undefined;
				const gate = gateOfChar(char);
				gate.cues |= bit;
				const entry = gate.keys.get(key) ?? { cues: 0, alternatives: [] };
				entry.cues |= bit;
				entry.alternatives.push({ bit, offset: offset!, head: prefix.slice(0, offset), follows: follows?.follows, spaced: follows?.spaced ?? false, sticky });
				gate.keys.set(key, entry);
			});
			return pattern;
		});
		if (gates.length > 30) throw new Error('at most 30 gates');
		this.#ungated = ungated;
		this.#gates = gates.map(({ char, cues, searched, keys }) => ({ char, common: COMMON_GATES.includes(char), cues, searched, keys: [...keys].map(([key, entry]) => ({ key, ...entry })) }));
		gates.forEach(({ char }, index) => (this.#gateBits[char.charCodeAt(0)]! |= 2 ** index));
	}

	/** The bits of the cues `text` holds. */
	in(text: string): number {
		this.#found = 0;
		this.#settled = 0;
		this.#test(this.#ungated, text);
		if (text.length <= SHORT_TEXT) {
			let held = 0;
			for (let index = 0; index < text.length; index++) {
				const code = text.charCodeAt(index);
				if (code < 128) held |= this.#gateBits[code]!;
			}
			for (; held; held &= held - 1) this.#open(this.#gates[31 - Math.clz32(held & -held)]!, text);
		} else {
			const long = text.length > LONG_TEXT;
			for (const gate of this.#gates) {
				if (!(gate.cues & ~this.#settled)) continue;
				if (long && gate.common) this.#test(gate.cues, text);
				else if (text.includes(gate.char)) this.#open(gate, text);
			}
		}
		return this.#found;
	}

	/** Tests the expressions of the cues of `bits` not settled yet over `text`. */
	#test(bits: number, text: string): void {
		for (let unsettled = bits & ~this.#settled; unsettled; unsettled &= unsettled - 1) {
			const bit = unsettled & -unsettled;
			this.#settled |= bit;
			if (this.#patterns[31 - Math.clz32(bit)]!.test(text)) this.#found |= bit;
		}
	}

	/** Searches `text`, which holds `gate`, for the gate's cues not settled yet, and tries its keys. */
	#open(gate: Gated, text: string): void {
		this.#test(gate.searched, text);
		for (const key of gate.keys) {
			if (!(key.cues & ~this.#found)) continue;
			const matched = this.#tryAt(key, text, this.#found);
			this.#found |= matched;
			this.#settled |= matched;
		}
	}

	/**
	 * The bits of the cues, not among `found`, that match where an occurrence of `key` puts a
	 * match's start; past MAX_ANCHOR_TRIES occurrences, those whose expression matches anywhere.
	 */
	#tryAt({ key, alternatives, cues }: Key, text: string, found: number): number {
		let matched = 0;
		let tries = 0;
		for (let at = text.indexOf(key); at >= 0 && cues & ~(found | matched); at = text.indexOf(key, at + 1)) {
			if (++tries > MAX_ANCHOR_TRIES) {
				for (const { bit } of alternatives) if (!((found | matched) & bit) && this.#patterns[31 - Math.clz32(bit)]!.test(text)) matched |= bit;
				return matched;
			}
			for (const { bit, offset, head, follows, spaced, sticky } of alternatives) {
				if ((found | matched) & bit) continue;
				const start = at - offset;
				if (start < 0) continue;
				// The literal start is compared first, its last character on its own (cheaper than a
				// builtin's call), then what follows the key: most anchors in ordinary text start no match.
				if (head && (text.charCodeAt(start + head.length - 1) !== head.charCodeAt(head.length - 1) || !text.startsWith(head, start))) continue;
				if (follows) {
					let next = at + key.length;
					if (spaced) while (isAsciiSpace(text.charCodeAt(next))) next++;
					const code = text.charCodeAt(next);
					// A character past ASCII may be whitespace `\s` knows: the expression decides.
					if (code < 128 && !follows[code]) continue;
				}
				sticky.lastIndex = start;
				if (sticky.test(text)) matched |= bit;
			}
		}
		return matched;
	}
}
