/**
 * Which of the rules' cues (the literals a rule cannot match without) a text holds, found in one
 * pass: a regular expression of them all, a group each, whose match names the cue it found.
 * Testing two dozen cues one by one costs as much again in calls as in matching (measured on
 * 1 KiB of ordinary text). Once a cue is seen the pass goes on without it, from the same place
 * (another cue may start there too), so a cue that recurs (`://` on every line) costs nothing
 * more.
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
	/** The pass over the cues not yet seen, by the set of them (a bit per cue), and the cue of each of its groups. */
	readonly #passes = new Map<number, { readonly pattern: RegExp; readonly cues: readonly number[] }>();

	constructor(cues: readonly RegExp[]) {
		if (cues.length > 30) throw new Error('at most 30 cues');
		// A cue's own capturing group would shift the groups that name the cues.
		for (const cue of cues) if (new RegExp(`${cue.source}|`).exec('')!.length > 1) throw new Error(`a cue has a capturing group: ${cue.source}`);
		this.#cues = cues;
	}

	/** The pass looking for the cues whose bits `unseen` has. */
	#pass(unseen: number): { readonly pattern: RegExp; readonly cues: readonly number[] } {
		let pass = this.#passes.get(unseen);
		if (!pass) {
			const cues = this.#cues.flatMap((_, index) => (unseen & (1 << index) ? [index] : []));
			pass = { pattern: new RegExp(cues.map((index) => `(${caseless(this.#cues[index]!)})`).join('|'), 'g'), cues };
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
			const { pattern, cues } = this.#pass(unseen);
			pattern.lastIndex = from;
			const match = pattern.exec(text);
			if (!match) break;
			let group = 1;
			while (match[group] === undefined) group++;
			unseen &= ~(1 << cues[group - 1]!);
			from = match.index;
		}
		return all & ~unseen;
	}
}
