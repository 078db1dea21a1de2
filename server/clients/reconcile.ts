/**
 * The one edit Hangar makes to a client configuration: make the entries it manages match the
 * running workloads exactly. Adds missing ones, updates the URL and transport of changed ones
 * (keeping any field the user added), removes managed ones that no longer run, and never
 * touches an entry Hangar did not write.
 */
import { isDeepStrictEqual } from 'node:util';
import type { EntryFields } from './editing.js';
import { openEditor } from './editor.js';
import type { ConfigShape } from './table.js';
import type { WorkloadEndpoint } from './workloads.js';

export interface Reconciliation {
	readonly text: string;
	/** Entries Hangar manages in the new text. */
	readonly managed: string[];
	/** Running workloads left out because an entry of that name is the user's own. */
	readonly skipped: string[];
}

/** An entry's fields for a workload, in the order the client's own examples use. */
export function entryFields(shape: ConfigShape, workload: WorkloadEndpoint): EntryFields {
	const fields: [string, string | number | boolean][] = [];
	if (shape.nameField) fields.push(['name', workload.name]);
	fields.push([shape.urlKey[workload.transport], workload.url]);
	if (shape.transportField) fields.push([shape.transportField.key, shape.transportField.values[workload.transport]]);
	for (const [key, value] of Object.entries(shape.extraFields ?? {})) fields.push([key, value]);
	return fields;
}

export async function reconcile(
	text: string,
	shape: ConfigShape,
	desired: readonly WorkloadEndpoint[],
	managed: ReadonlySet<string>,
): Promise<Reconciliation> {
	const editor = await openEditor(text, shape);
	const before = editor.entries();
	const wanted = new Map(desired.map((workload) => [workload.name, workload]));
	const result: Reconciliation = { text, managed: [], skipped: [] };

	for (const name of managed) {
		if (!wanted.has(name) && before.has(name)) editor.remove(name);
	}
	for (const workload of wanted.values()) {
		const existing = before.get(workload.name);
		if (existing && !managed.has(workload.name)) {
			result.skipped.push(workload.name);
			continue;
		}
		result.managed.push(workload.name);
		const fields = entryFields(shape, workload);
		if (!existing) {
			editor.add(workload.name, fields);
			continue;
		}
		// URL and transport follow the workload; fields the user added to the entry stay.
		const urlKey = shape.urlKey[workload.transport];
		if (existing[urlKey] !== workload.url) editor.set(workload.name, urlKey, workload.url);
		for (const staleKey of Object.values(shape.urlKey)) {
			if (staleKey !== urlKey && staleKey in existing) editor.unset(workload.name, staleKey);
		}
		const transport = shape.transportField;
		if (transport && existing[transport.key] !== transport.values[workload.transport]) {
			editor.set(workload.name, transport.key, transport.values[workload.transport]);
		}
	}

	const next = editor.text();
	if (next !== text) verify(before, (await openEditor(next, shape)).entries(), result.managed, managed, wanted, shape);
	return { ...result, text: next };
}

/**
 * Reads the edited text back and checks it says what was meant: the user's entries exactly
 * as they were, every managed entry pointing at its workload, removed ones gone. A failure
 * here is a bug in an editor, caught before anything reaches the disk.
 */
function verify(
	before: ReadonlyMap<string, Record<string, unknown>>,
	after: ReadonlyMap<string, Record<string, unknown>>,
	nowManaged: readonly string[],
	wasManaged: ReadonlySet<string>,
	wanted: ReadonlyMap<string, WorkloadEndpoint>,
	shape: ConfigShape,
): void {
	const problems: string[] = [];
	for (const [name, entry] of before) {
		if (!wasManaged.has(name) && !isDeepStrictEqual(after.get(name), entry)) problems.push(`user entry "${name}" changed`);
	}
	for (const name of nowManaged) {
		const workload = wanted.get(name)!;
		if (after.get(name)?.[shape.urlKey[workload.transport]] !== workload.url) problems.push(`entry "${name}" lacks its URL`);
	}
	for (const name of wasManaged) {
		if (!wanted.has(name) && after.has(name)) problems.push(`entry "${name}" was not removed`);
	}
	if (problems.length) throw new Error(`client configuration edit failed its check: ${problems.join('; ')}`);
}
