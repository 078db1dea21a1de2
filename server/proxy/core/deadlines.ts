/**
 * Timers of one fixed delay for things that mostly end before it: a call's idle timeout, a
 * reply's switch to keep-alive events. A Node timer is an object per call, and when calls come
 * one at a time every one of them also makes and drops the delay's timer list. Here, as all
 * entries have the same delay, the order they are added in is the order they fall due: a
 * linked list (not a Map: see callTable.ts) and one Node timer for its head, which stays armed
 * while the list is empty and, when it fires early, is armed again for the new head.
 */
export interface Deadline<T> {
	readonly item: T;
	readonly at: number;
	previous: Deadline<T> | undefined;
	next: Deadline<T> | undefined;
}

export class Deadlines<T> {
	private first: Deadline<T> | undefined;
	private last: Deadline<T> | undefined;
	private timer: NodeJS.Timeout | undefined;

	constructor(
		readonly delayMs: number,
		private readonly expire: (item: T) => void,
	) {}

	/** Starts `item`'s delay from `now` (`performance.now()`, which a caller may have at hand); `delete` the result to stop it. */
	add(item: T, now = performance.now()): Deadline<T> {
		const deadline: Deadline<T> = { item, at: now + this.delayMs, previous: this.last, next: undefined };
		if (this.last) this.last.next = deadline;
		else this.first = deadline;
		this.last = deadline;
		if (!this.timer) this.arm(this.delayMs);
		return deadline;
	}

	delete(deadline: Deadline<T> | undefined): void {
		if (!deadline || (deadline !== this.first && !deadline.previous)) return; // not in the list (any more)
		if (deadline.previous) deadline.previous.next = deadline.next;
		else this.first = deadline.next;
		if (deadline.next) deadline.next.previous = deadline.previous;
		else this.last = deadline.previous;
		deadline.previous = deadline.next = undefined;
	}

	private arm(ms: number): void {
		this.timer = setTimeout(() => this.fire(), ms);
		// Like the calls they time, these never keep the process alive by themselves.
		this.timer.unref();
	}

	private fire(): void {
		this.timer = undefined;
		const now = performance.now();
		for (let deadline = this.first; deadline; deadline = this.first) {
			if (deadline.at > now) return this.arm(deadline.at - now);
			this.delete(deadline);
			this.expire(deadline.item);
		}
	}
}
