/**
 * A bounded cache that forgets what was not used lately: two generations, `recent` and `older`.
 * A hit in `recent` changes nothing; a hit in `older` moves the entry to `recent`; when
 * `recent` holds half the capacity, it becomes `older` and the old `older` is forgotten. So a
 * steady set of keys (one client's token, its usual decisions) is looked up with no write at
 * all, where a strict LRU deletes and re-adds every hit: on the proxy's hot path that churns a
 * Map with a new key string per call, which V8 makes outlive the call (see core/callTable.ts).
 */
export class LruCache<K, V> {
	private recent = new Map<K, V>();
	private older = new Map<K, V>();
	private readonly generation: number;

	constructor(capacity: number) {
		this.generation = Math.max(1, Math.floor(capacity / 2));
	}

	get(key: K): V | undefined {
		const value = this.recent.get(key);
		if (value !== undefined) return value;
		const old = this.older.get(key);
		if (old !== undefined) {
			this.older.delete(key);
			this.remember(key, old);
		}
		return old;
	}

	set(key: K, value: V): void {
		this.older.delete(key);
		this.remember(key, value);
	}

	delete(key: K): void {
		this.recent.delete(key);
		this.older.delete(key);
	}

	private remember(key: K, value: V): void {
		if (!this.recent.has(key) && this.recent.size >= this.generation) {
			this.older = this.recent;
			this.recent = new Map();
		}
		this.recent.set(key, value);
	}
}
