/**
 * The cancellation of a call the aggregate runs itself (a script, a composite tool): what an
 * AbortController and its signal give, for a flag and a list. Node 20 takes about 10 µs to make
 * an AbortSignal and 4 more for its first listener (in process, warm), on the way of every
 * script to its sandbox.
 */

/** What a call's work reads of its cancellation; an AbortSignal is one too. */
export interface CancelSignal {
	readonly aborted: boolean;
	addEventListener(type: 'abort', listener: () => void): void;
	removeEventListener(type: 'abort', listener: () => void): void;
}

/** A cancellation and its signal in one: `abort` calls each listener once. */
export class Cancellation implements CancelSignal {
	private listeners: Array<() => void> = [];
	private done = false;

	get aborted(): boolean {
		return this.done;
	}

	addEventListener(_type: 'abort', listener: () => void): void {
		if (!this.done) this.listeners.push(listener);
	}

	removeEventListener(_type: 'abort', listener: () => void): void {
		const at = this.listeners.indexOf(listener);
		if (at >= 0) this.listeners.splice(at, 1);
	}

	abort(): void {
		if (this.done) return;
		this.done = true;
		const listeners = this.listeners;
		this.listeners = [];
		for (const listener of listeners) listener();
	}
}
