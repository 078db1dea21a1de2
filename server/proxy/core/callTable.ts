/**
 * Per-call state keyed by JSON-RPC request id, on the proxy's hot path.
 *
 * Not a Map: in V8, a Map or Set whose entries are calls' objects, added and deleted call
 * after call, keeps those objects alive past their call. With 64 calls in flight, one such
 * Map made fourteen times the bytes survive each young-generation collection, and they were
 * promoted to the old generation, which then needed full collections; plain objects used as
 * dictionaries did not (measured: docs/benchmarks.md, issue 20). So: two of them, one for
 * numeric ids and one for string ids, which JSON-RPC tells apart.
 */
import type { RequestId } from './jsonrpc.js';

type Table<V> = Record<string, V>;

export class CallTable<V> {
	private numbers: Table<V> = Object.create(null) as Table<V>;
	private strings: Table<V> = Object.create(null) as Table<V>;
	private count = 0;

	get size(): number {
		return this.count;
	}

	get(id: RequestId): V | undefined {
		return this.tableOf(id)[id];
	}

	has(id: RequestId): boolean {
		return id in this.tableOf(id);
	}

	set(id: RequestId, value: V): void {
		const table = this.tableOf(id);
		if (!(id in table)) this.count++;
		table[id] = value;
	}

	delete(id: RequestId): boolean {
		const table = this.tableOf(id);
		if (!(id in table)) return false;
		delete table[id];
		this.count--;
		return true;
	}

	/** Every entry; deleting the current one meanwhile is safe. */
	*entries(): IterableIterator<[RequestId, V]> {
		for (const key in this.numbers) yield [Number(key), this.numbers[key]!];
		for (const key in this.strings) yield [key, this.strings[key]!];
	}

	*values(): IterableIterator<V> {
		for (const [, value] of this.entries()) yield value;
	}

	clear(): void {
		this.numbers = Object.create(null) as Table<V>;
		this.strings = Object.create(null) as Table<V>;
		this.count = 0;
	}

	private tableOf(id: RequestId): Table<V> {
		return typeof id === 'number' ? this.numbers : this.strings;
	}
}
