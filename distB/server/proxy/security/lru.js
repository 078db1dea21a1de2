/** A bounded map that forgets the least recently used entry first (a Map keeps insertion order). */
export class LruCache {
    capacity;
    entries = new Map();
    constructor(capacity) {
        this.capacity = capacity;
    }
    get(key) {
        const value = this.entries.get(key);
        if (value !== undefined) {
            this.entries.delete(key);
            this.entries.set(key, value);
        }
        return value;
    }
    set(key, value) {
        this.entries.delete(key);
        if (this.entries.size >= this.capacity)
            this.entries.delete(this.entries.keys().next().value);
        this.entries.set(key, value);
    }
    delete(key) {
        this.entries.delete(key);
    }
}
//# sourceMappingURL=lru.js.map