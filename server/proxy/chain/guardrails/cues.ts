/**
 * Which of the rules' cues (the literals a rule cannot match without) a text holds. Each cue is
 * tested on its own, and only when the text holds its gate: for each of the cue's alternatives,
 * a character every match of it needs, the rarest in ordinary text (`_`, `~`, `@`, an uppercase
 * letter), looked up with `indexOf`, which runs at memory speed. Ordinary text lacks most gates,
 * so most cues cost a character search; an alternative needing only lowercase letters (`secret`)
 * has no gate and is always tested. One expression of all the cues read every position of the
 * text against every alternative: 4.5 µs over 1 KiB of ordinary text, where this takes about 1.
 */

/** Characters a gate may be, rarest in ordinary text first (prose, paths, JSON, URLs). */
const GATE_CHARACTERS = '~@^|`\\_;=%"-QJZXKVYBWGFHMUPLCDONRTSIEA0123456789';

/** A cue as it is tested: its expression, and the gates of its alternatives (undefined when one has none). */
interface GatedCue {
	readonly pattern: RegExp;
	/** The bits of its gates in `Cues`' list of them; 0 when an alternative has none. */
	readonly gates: number;
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

/**
 * The characters every match of `alternative` holds: its literal characters outside groups and
 * classes that no quantifier makes optional. Letters only when the cue is case-sensitive.
 */
export function neededCharacters(alternative: string, caseless: boolean): string[] {
	const needed: string[] = [];
	for (let index = 0; index < alternative.length; ) {
		const char = alternative[index]!;
		let literal: string | undefined;
		let end = index + 1;
		if (char === '\\') {
			// An escaped letter or digit is a class, an assertion or a back reference; punctuation is itself.
			const escaped = alternative[index + 1]!;
			literal = /[A-Za-z0-9]/.test(escaped) ? undefined : escaped;
			end = index + 2;
		} else if (char === '(' || char === '[') end = endOf(alternative, index);
		else if (!'.^$'.includes(char)) literal = char;
		const quantifier = alternative[end];
		let optional = false;
		if (quantifier === '?' || quantifier === '*') {
			optional = true;
			end++;
		} else if (quantifier === '+') end++;
		else if (quantifier === '{') {
			const close = alternative.indexOf('}', end);
			optional = /^\{0\b/.test(alternative.slice(end, close + 1));
			end = close + 1;
		}
		if (alternative[end] === '?') end++;
		if (literal !== undefined && !optional && !(caseless && /[A-Za-z]/.test(literal))) needed.push(literal);
		index = end;
	}
	return needed;
}

/** The gate of each alternative of `cue`, or undefined when one of them has none. */
export function gatesOf(cue: RegExp): string[] | undefined {
	const gates = new Set<string>();
	for (const alternative of alternativesOf(cue.source)) {
		const needed = neededCharacters(alternative, cue.flags.includes('i'));
		const gate = [...GATE_CHARACTERS].find((candidate) => needed.includes(candidate));
		if (gate === undefined) return undefined;
		gates.add(gate);
	}
	return [...gates];
}

export class Cues {
	readonly #cues: readonly GatedCue[];
	/** Every cue's gates, each once (`_` gates a dozen cues): a text is searched for each at most once. */
	readonly #gates: readonly string[];

	constructor(cues: readonly RegExp[]) {
		if (cues.length > 30) throw new Error('at most 30 cues');
		const gates: string[] = [];
		this.#cues = cues.map((cue) => {
			let bits = 0;
			for (const gate of gatesOf(cue) ?? []) {
				let index = gates.indexOf(gate);
				if (index < 0) index = gates.push(gate) - 1;
				bits |= 2 ** index;
			}
			return { pattern: new RegExp(cue.source, cue.flags.replace(/[gy]/g, '')), gates: bits };
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
			const { pattern, gates } = this.#cues[index]!;
			if (gates) {
				for (let gate = 0, bit = 1; bit <= gates && !(gates & held); gate++, bit <<= 1) {
					if (!(gates & bit) || searched & bit) continue;
					searched |= bit;
					if (text.includes(this.#gates[gate]!)) held |= bit;
				}
				if (!(gates & held)) continue;
			}
			if (pattern.test(text)) found |= 1 << index;
		}
		return found;
	}
}
