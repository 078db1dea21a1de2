/**
 * Transaction journals of skill installs and uninstalls (`<state>/skills/journal/`): one small
 * JSON file per transaction, saying what it changes and how far it got, so the next operation
 * on the skill rolls a dead process's transaction back (prepare) or forward (commit).
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../store/atomic.js';
import { isAlive } from '../store/lock.js';
import { SkillRecord } from '../runspec/records.js';

export const Journal = z.object({
	id: z.string(),
	key: z.string(),
	operation: z.enum(['install', 'uninstall']),
	phase: z.enum(['prepare', 'commit']),
	pid: z.number(),
	/** The project the folders are in (empty for user scope): every path is confined to it. */
	project_root: z.string().default(''),
	/** Skill folders this transaction replaces (install) or removes (uninstall). */
	folders: z.array(z.string()),
	/** The record after the transaction (install), or the one removed (uninstall). */
	record: SkillRecord.optional(),
	/** An install by `skills/sync`: the lock file's entry keeps the clients it records. */
	syncing: z.boolean().optional(),
	/** An uninstall for some clients only: the record that stays, with the folders still read. */
	remaining: SkillRecord.optional(),
});
export type Journal = z.infer<typeof Journal>;

/**
 * Transaction journals: one small JSON file each, replaced atomically (temporary file, then
 * rename) and only ever touched under the skill's lock. They guard against a process dying,
 * not against power loss, so they skip the fsync of the state store; a journal a power cut
 * left unreadable is dropped (its transaction never reached the records).
 */
export class Journals {
	constructor(private readonly folder: string) {}

	private pathOf(id: string): string {
		return join(this.folder, `${id}.json`);
	}

	async ids(): Promise<string[]> {
		const names = await readdir(this.folder).catch(() => [] as string[]);
		return names.filter((name) => name.endsWith('.json') && !name.startsWith('.')).map((name) => name.slice(0, -'.json'.length));
	}

	async read(id: string): Promise<Journal | undefined> {
		const text = await readFile(this.pathOf(id), 'utf8').catch(() => undefined);
		if (text === undefined) return undefined;
		try {
			return Journal.parse(JSON.parse(text));
		} catch {
			await this.delete(id);
			return undefined;
		}
	}

	async write(journal: Journal): Promise<void> {
		await writeFileAtomic(this.pathOf(journal.id), JSON.stringify(journal), { mode: 0o600, dirMode: 0o700, durable: false });
	}

	async delete(id: string): Promise<void> {
		await rm(this.pathOf(id), { force: true });
	}

	/** Removes the temporary files of journal writes whose process died before the rename. */
	async sweep(): Promise<void> {
		for (const name of await readdir(this.folder).catch(() => [] as string[])) {
			const writer = /^\..+\.(\d+)\.[0-9a-f]+\.tmp$/.exec(name)?.[1];
			if (writer !== undefined && !isAlive(Number(writer))) await rm(join(this.folder, name), { force: true });
		}
	}
}
