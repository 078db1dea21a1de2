/**
 * Versioned JSON documents on disk.
 *
 * Every file carries `schema_version`. Reading a file written by an older Hangar runs the
 * migrations from its version up to the current one; a file from a newer Hangar is refused
 * rather than silently rewritten. Writes are atomic and happen under the document's lock.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import { readTextIfExists, writeFileAtomic } from './atomic.js';
import { withLock } from './lock.js';
import { documentNames } from './names.js';
import { describeJsonError } from '../json.js';

/** Upgrades a document from version `n` (the key) to `n + 1`. */
export type Migrations = Readonly<Record<number, (document: Record<string, unknown>) => Record<string, unknown>>>;

/** How a document is checked and parsed: a zod schema, or a check of a schema generated from one (jsonSchema.ts). */
export interface RecordSchema<T> {
	safeParse(data: unknown): { success: true; data: T } | { success: false; error: { issues: ReadonlyArray<{ message: string }> } };
}

export interface DocumentSchema<T> {
	readonly schema: RecordSchema<T>;
	/** The version this build writes. */
	readonly version: number;
	readonly migrations?: Migrations;
}

/** Parses a stored document, migrating it when it is older than `spec.version`. */
function decodeDocument<T>(path: string, text: string, spec: DocumentSchema<T>): T {
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch (error) {
		throw new HangarError(500, `state file ${path} is not valid JSON: ${describeJsonError(error)}`, 'corrupt_state');
	}
	if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
		throw new HangarError(500, `state file ${path} does not hold an object`, 'corrupt_state');
	}
	let document = raw as Record<string, unknown>;
	let version = typeof document.schema_version === 'number' ? document.schema_version : 0;
	if (version > spec.version) {
		throw new HangarError(
			500,
			`state file ${path} was written by a newer Hangar (schema ${version} > ${spec.version}); upgrade Hangar`,
			'state_too_new',
		);
	}
	while (version < spec.version) {
		const migrate = spec.migrations?.[version];
		if (!migrate) throw new HangarError(500, `no migration for ${path} from schema ${version}`, 'corrupt_state');
		document = migrate(document);
		version += 1;
	}
	const { schema_version: _version, ...data } = document;
	const parsed = spec.schema.safeParse(data);
	if (!parsed.success) {
		throw new HangarError(500, `state file ${path} is malformed: ${parsed.error.issues[0]?.message}`, 'corrupt_state');
	}
	return parsed.data;
}

function encodeDocument<T>(value: T, spec: DocumentSchema<T>): string {
	return `${JSON.stringify({ schema_version: spec.version, ...(value as object) }, null, 2)}\n`;
}

/** One JSON document with a fallback value while the file does not exist. */
export class JsonDocument<T> {
	constructor(
		readonly path: string,
		private readonly spec: DocumentSchema<T>,
		private readonly initial: () => T,
	) {}

	async read(): Promise<T> {
		const text = await readTextIfExists(this.path);
		return text === undefined ? this.initial() : decodeDocument(this.path, text, this.spec);
	}

	/**
	 * Read-modify-write under the lock. `change` returns the new value and what to hand back
	 * to the caller; returning `undefined` as the value leaves the file as it is.
	 */
	async update<R>(change: (current: T) => Promise<[T | undefined, R]> | [T | undefined, R]): Promise<R> {
		return withLock(this.path, async () => {
			const [next, result] = await change(await this.read());
			if (next !== undefined) await writeFileAtomic(this.path, encodeDocument(next, this.spec));
			return result;
		});
	}
}

/**
 * A folder of JSON documents, one per named entity (`<folder>/<name>.json`). Every change
 * takes the entity's lock, so an update cannot bring back an entity deleted meanwhile, while
 * changes to different entities (fifty proxies recording their state) go on side by side.
 */
export class JsonCollection<T> {
	constructor(
		readonly folder: string,
		private readonly spec: DocumentSchema<T>,
	) {}

	private fileOf(name: string): string {
		return join(this.folder, `${encodeURIComponent(name)}.json`);
	}

	names(): Promise<string[]> {
		return documentNames(this.folder);
	}

	async get(name: string): Promise<T | undefined> {
		const path = this.fileOf(name);
		const text = await readTextIfExists(path);
		return text === undefined ? undefined : decodeDocument(path, text, this.spec);
	}

	async list(): Promise<T[]> {
		const values: (T | undefined)[] = await Promise.all((await this.names()).map((name) => this.get(name)));
		return values.filter((value): value is T => value !== undefined);
	}

	/** Creates an entity; `false` when one of that name exists already. */
	async create(name: string, value: T): Promise<boolean> {
		const path = this.fileOf(name);
		return withLock(path, async () => {
			if ((await readTextIfExists(path)) !== undefined) return false;
			await writeFileAtomic(path, encodeDocument(value, this.spec));
			return true;
		});
	}

	/** Changes an existing entity under its lock; `undefined` when it does not exist. */
	async update(name: string, change: (current: T) => T): Promise<T | undefined> {
		let next: T | undefined;
		await this.change(name, (current) => (current === undefined ? undefined : (next = change(current))));
		return next;
	}

	/**
	 * Writes what `decide` makes of the entity (undefined when there is none), under its lock;
	 * `decide` returning undefined leaves it as it is. Whether it wrote.
	 */
	async change(name: string, decide: (current: T | undefined) => T | undefined): Promise<boolean> {
		const path = this.fileOf(name);
		return withLock(path, async () => {
			const text = await readTextIfExists(path);
			const next = decide(text === undefined ? undefined : decodeDocument(path, text, this.spec));
			if (next === undefined) return false;
			await writeFileAtomic(path, encodeDocument(next, this.spec));
			return true;
		});
	}

	/** Deletes an entity; `false` when it did not exist. */
	async delete(name: string): Promise<boolean> {
		const path = this.fileOf(name);
		return withLock(path, async () => {
			if ((await readTextIfExists(path)) === undefined) return false;
			await rm(path);
			return true;
		});
	}
}
