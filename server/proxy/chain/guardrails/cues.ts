/**
 * Which of the rules' cues (the literals a rule cannot match without) a text holds, found in one
 * pass: a regular expression of them all, and where it matches, each cue not yet seen tried
 * there. Testing two dozen cues one by one costs as much again in calls as in matching (measured
 * on 1 KiB of ordinary text); once a cue is seen it is left out of the pass, so a cue that recurs
 * (`://` on every line) is tried at one place only.
 */

/** A case-insensitive cue's letters as classes (`secret` → `[sS][eE]…`): the pass mixes cues of both kinds. */
function caseless(cue: RegExp): string {
	if (!cue.flags.includes('i')) return cue.source;
	// Only literals and escaped punctuation are rewritten so: a class or an escaped letter would change meaning.
	if (/\[|\\[A-Za-z]/.test(cue.source)) throw new Error(`a case-insensitive cue must be literals: ${cue.source}`);
	return cue.source.replace(/[A-Za-z]/g, (letter) => `[${letter.toLowerCase()}${letter.toUpperCase()}]`);
}

export class Cues {
	readonly #cues: readonly RegExp[];
	/** Each cue, tried at one place (`y`). */
	readonly #sticky: readonly RegExp[];
	/** The pass over the cues not yet seen, by the set of them (a bit per cue). */
	readonly #passes = new Map<number, RegExp>();

	constructor(cues: readonly RegExp[]) {
		if (cues.length > 30) throw new Error('at most 30 cues');
		this.#cues = cues;
		this.#sticky = cues.map((cue) => new RegExp(cue.source, `${cue.flags.replace(/[gy]/g, '')}y`));
	}

	/** The pass looking for the cues whose bits `unseen` has. */
	#pass(unseen: number): RegExp {
		let pass = this.#passes.get(unseen);
		if (!pass) {
			pass = new RegExp(this.#cues.flatMap((cue, index) => (unseen & (1 << index) ? [`(?:${caseless(cue)})`] : [])).join('|'), 'g');
			this.#passes.set(unseen, pass);
		}
		return pass;
	}

	/** The bits of the cues `text` holds. */
	in(text: string): number {
		const all = (1 << this.#cues.length) - 1;
		let unseen = all;
		let from = 0;
		while (unseen) {
			const pass = this.#pass(unseen);
			pass.lastIndex = from;
			const match = pass.exec(text);
			if (!match) break;
			for (let index = 0; index < this.#sticky.length; index++) {
				if (!(unseen & (1 << index))) continue;
				const sticky = this.#sticky[index]!;
				sticky.lastIndex = match.index;
				if (sticky.test(text)) unseen &= ~(1 << index);
			}
			from = match.index + 1;
		}
		return all & ~unseen;
	}
}
