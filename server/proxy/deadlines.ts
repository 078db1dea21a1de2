/**
 * Timers of one fixed delay for things that mostly end before it: a call's idle timeout, a
 * reply's switch to keep-alive events. A Node timer is an object per call, and when calls come
 * one at a time every one of them also makes and drops the delay's timer list. Here, as all
 * entries have the same delay, the order they are added in is the order they fall due: an
 * insertion-ordered map and one Node timer for its head, which stays armed while the map is
 * empty and, when it fires early, is armed again for the new head.
 */
export class Deadlines<T> {
	private readonly due = new Map<T, number>();
	private timer: NodeJS.Timeout | undefined;

	constructor(
		readonly delayMs: number,
		private readonly expire: (item: T) => void,
	) {}

	/** (Re)starts `item`'s delay from `now` (`performance.now()`, which a caller may have at hand). */
	add(item: T, now = performance.now()): void {
		this.due.delete(item);
		this.due.set(item, now + this.delayMs);
		if (!this.timer) this.arm(this.delayMs);
	}

	delete(item: T): void {
		this.due.delete(item);
	}

	private arm(ms: number): void {
		this.timer = setTimeout(() => this.fire(), ms);
		// Like the calls they time, these never keep the process alive by themselves.
		this.timer.unref();
	}

	private fire(): void {
		this.timer = undefined;
		const now = performance.now();
		for (const [item, at] of this.due) {
			if (at > now) return this.arm(at - now);
			this.due.delete(item);
			this.expire(item);
		}
	}
}
