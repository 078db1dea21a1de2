/**
 * The names of the documents in a folder of `<name>.json` files, read from the file names
 * alone (no document is opened).
 */
import { readdirSync } from 'node:fs';

/** The names, sorted; none when the folder does not exist. Read synchronously, as the documents are (atomic.ts). */
export async function documentNames(folder: string): Promise<string[]> {
	let entries: string[];
	try {
		entries = readdirSync(folder);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
		throw error;
	}
	return entries
		.filter((entry) => entry.endsWith('.json') && !entry.startsWith('.'))
		.map((entry) => decodeURIComponent(entry.slice(0, -'.json'.length)))
		.sort();
}
