/**
 * Putting skills into client folders, and taking them out, so that a crash at any point
 * leaves the old skill or the new one — never a mix, never a record without its files.
 *
 * An install is a small transaction, journaled in `<state>/skills/journal/`:
 *
 * 1. prepare: the fetched skill is copied into `<skills dir>/.hangar/<id>/new` beside each
 *    target folder (same file system, invisible to clients: they read `<skills dir>/<name>/`);
 * 2. commit: the journal records the new record — from here on the install completes;
 * 3. each target folder is swapped whole (old folder renamed aside, new one renamed in);
 * 4. the record is written (and the project lock file), then the journal and leftovers go.
 *
 * A journal left behind by a dead process is rolled back (prepare) or forward (commit) by the
 * next operation on skills, which takes the skill's lock first. Uninstall is journaled the
 * same way and always rolls forward.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import type { ClientDefinition } from '../clients/table.js';
import type { ProgressReporter } from '../context.js';
import { isAlive, tryLock, withLock } from '../store/lock.js';
import type { HangarPaths } from '../store/paths.js';
import { contentDigest } from './files.js';
import { confineFolders, copyTree, exists, listFiles, moveFolder, removeOwnFiles, removeTransactionFolder, transactionFolder } from './folders.js';
import { Journals, type Journal } from './journal.js';
import { journalFolder, stagingFolder } from './pending.js';
import { putLockEntry, updateLock } from './lockfile.js';
import { knownDigest, type FetchedSkill, type ResolvedSource, type SkillSources } from './sources.js';
import { placementOfRecord, recordKey, SkillRecords, type SkillRecord } from './store.js';
import { allSkillsDirectories, targetsFor, type Placement, type SkillTarget } from './targets.js';

/** Most skills one install may bring in through dependencies (ToolHive's limit). */
const MAX_DEPENDENCIES = 100;

export interface InstallRequest {
	readonly source: ResolvedSource;
	/** What the user asked for, recorded as the source to re-resolve on upgrade. */
	readonly requested: string;
	readonly placement: Placement;
	readonly clients: readonly ClientDefinition[];
	readonly force: boolean;
	readonly explicit: boolean;
	/** The skills that require this one, for a dependency. */
	readonly requiredBy?: readonly string[];
	/**
	 * The dependencies to record as they are, without installing them (sync installs every
	 * skill of the lock file at its own pin).
	 */
	readonly pinnedDependencies?: SkillRecord['dependencies'];
	/** Rewrite every folder even when the digest is unchanged (sync repairing edited files). */
	readonly repair?: boolean;
	/** Record the reference and tag as given instead of as fetched (sync installs by pin). */
	readonly recordAs?: { readonly reference: string; readonly tag?: string; readonly movable: boolean };
}

export interface InstallOutcome {
	readonly record: SkillRecord;
	readonly change: 'installed' | 'upgraded' | 'unchanged';
	/** Skills this install put in place for the first time (itself and dependencies). */
	readonly added: readonly string[];
	/** What the install went past (see `FetchedSkill.warnings`). */
	readonly warnings: readonly string[];
}

export interface InstallContext {
	readonly signal: AbortSignal;
	readonly progress?: ProgressReporter;
}

export class SkillInstaller {
	private readonly journals: Journals;
	/** Folder of the per-skill locks: one install, uninstall or recovery of a skill at a time. */
	private readonly locks: string;
	/** Scratch folders of fetches (`<cache>/skills/staging/<pid>-<random>`), removed when done or when their process is gone. */
	readonly stagingRoot: string;

	constructor(
		paths: HangarPaths,
		readonly records: SkillRecords,
		private readonly sources: SkillSources,
		private readonly home: string,
		private readonly env: NodeJS.ProcessEnv = process.env,
	) {
		this.journals = new Journals(journalFolder(paths));
		this.locks = join(paths.state, 'skills', 'locks');
		this.stagingRoot = stagingFolder(paths);
	}

	/** Installs a resolved source and its dependencies. */
	install(request: InstallRequest, context: InstallContext): Promise<InstallOutcome> {
		return this.installWithin(request, context, [], { count: 0 });
	}

	private async installWithin(request: InstallRequest, context: InstallContext, chain: readonly string[], budget: { count: number }): Promise<InstallOutcome> {
		const { source, placement } = request;
		// OCI and local builds are named (and pinned) before fetching: an unchanged skill or a folder in the way costs no download.
		if (knownDigest(source) !== undefined) {
			const targets = targetsFor(request.clients, placement, this.home, source.name);
			await confineFolders(placement.projectRoot, targets.map((target) => target.folder));
			const existing = await this.records.get(placement, source.name);
			if (existing && !request.repair && knownDigest(source) === existing.digest && (await this.covers(existing, targets))) {
				return { record: await this.markRequested(existing, request), change: 'unchanged', added: [], warnings: [] };
			}
			await this.refuseUnmanaged(existing, targets, request.force);
		}

		return this.withScratch(async (stagingFolder) => {
			const added: string[] = [];
			try {
				const fetched = await this.sources.fetch(source, join(stagingFolder, 'skill'), context.signal, context.progress);
				// A git skill's name is known once its SKILL.md is read.
				const name = fetched.name;
				const targets = targetsFor(request.clients, placement, this.home, name);
				await confineFolders(placement.projectRoot, targets.map((target) => target.folder));
				const dependencies: SkillRecord['dependencies'] = [...(request.pinnedDependencies ?? [])];
				for (const required of request.pinnedDependencies ? [] : fetched.fields.requires) {
					if (++budget.count > MAX_DEPENDENCIES) throw new HangarError(422, `${name} brings in more than ${MAX_DEPENDENCIES} dependencies`, 'too_many_dependencies');
					context.signal.throwIfAborted();
					const dependency = await this.sources.resolve(required, undefined, context.signal);
					if (chain.includes(dependency.name) || dependency.name === name) {
						// A cycle: the skill is being installed further up; record the edge only.
						dependencies.push({ name: dependency.name, reference: required, digest: knownDigest(dependency) ?? '' });
						continue;
					}
					context.progress?.report(`installing dependency ${dependency.name}`);
					const outcome = await this.installWithin(
						{ ...request, source: dependency, requested: required, explicit: false, requiredBy: [name], recordAs: undefined, pinnedDependencies: undefined },
						context,
						[...chain, name],
						budget,
					);
					added.push(...outcome.added);
					dependencies.push({ name: outcome.record.name, reference: required, digest: outcome.record.digest });
				}
				context.signal.throwIfAborted();
				const outcome = await this.locked(recordKey(placement, name), context.signal, () =>
					this.commit(request, targets, fetched, join(stagingFolder, 'skill'), dependencies, context.signal),
				);
				return { ...outcome, added: [...added, ...outcome.added], warnings: fetched.warnings };
			} catch (error) {
				// Dependencies put in place for this install go again if the install fails.
				for (const dependency of added.reverse()) await this.uninstall(placement, dependency, context.signal).catch(() => undefined);
				throw error;
			}
		});
	}

	/**
	 * Runs `work` in a new scratch folder under the staging root, removed afterwards. Its name
	 * starts with this process's id: `recover` clears the leftovers of processes that died.
	 */
	async withScratch<T>(work: (folder: string) => Promise<T>): Promise<T> {
		const folder = join(this.stagingRoot, `${process.pid}-${randomBytes(6).toString('hex')}`);
		await mkdir(this.stagingRoot, { recursive: true });
		try {
			return await work(folder);
		} finally {
			await rm(folder, { recursive: true, force: true });
		}
	}

	/** The locked part of an install: decide what to write, stage it, swap it in, record it. */
	private async commit(
		request: InstallRequest,
		targets: readonly SkillTarget[],
		fetched: FetchedSkill,
		stagedSkill: string,
		dependencies: SkillRecord['dependencies'],
		signal: AbortSignal,
	): Promise<Omit<InstallOutcome, 'warnings'>> {
		const { placement } = request;
		const existing = await this.records.get(placement, fetched.name);
		const sameContent = existing?.digest === fetched.digest;
		if (existing && !request.repair && sameContent && (await this.covers(existing, targets))) {
			return { record: await this.markRequested(existing, request), change: 'unchanged', added: [] };
		}
		await this.refuseUnmanaged(existing, targets, request.force);

		// Same content: write only the folders missing. New content: every folder, old and requested.
		const folders = new Map<string, string[]>((existing?.folders ?? []).map((folder) => [folder.path, [...folder.clients]]));
		for (const target of targets) folders.set(target.folder, [...new Set([...(folders.get(target.folder) ?? []), ...target.clients])]);
		const writing = sameContent && !request.repair ? await this.missingFolders(existing!, [...folders.keys()]) : [...folders.keys()];
		await confineFolders(placement.projectRoot, writing);

		const files = fetched.files.map((file) => file.path);
		const tag = request.recordAs ? request.recordAs.tag : fetched.tag;
		const record: SkillRecord = {
			name: fetched.name,
			scope: placement.scope,
			project_root: placement.projectRoot,
			source: request.requested,
			reference: request.recordAs?.reference ?? fetched.reference,
			...(tag !== undefined && { tag }),
			digest: fetched.digest,
			pinned: fetched.pinned,
			movable: request.recordAs?.movable ?? fetched.movable,
			...(await this.contentDigestOf(fetched, stagedSkill, placement)),
			...(fetched.fields.version !== undefined && { version: fetched.fields.version }),
			...(fetched.fields.description !== undefined && { description: fetched.fields.description }),
			...(fetched.fields.license !== undefined && { license: fetched.fields.license }),
			...(fetched.fields.metadata.author !== undefined && { author: fetched.fields.metadata.author }),
			tags: tagsOf(fetched.fields.metadata),
			installed_at: sameContent ? existing!.installed_at : new Date().toISOString(),
			folders: [...folders].map(([path, clients]) => ({ path, clients })),
			files,
			dependencies,
			required_by: [...new Set([...(existing?.required_by ?? []), ...(request.requiredBy ?? [])])],
			explicit: (existing?.explicit ?? false) || request.explicit,
			managed: placement.scope === 'project',
			// Fetching a local repository succeeded, so development mode (or an earlier such install) allowed it.
			...(request.source.kind === 'git' && !request.source.reference.host && { allow_local: true }),
		};

		const journal: Journal = { id: `${Date.now()}-${randomBytes(6).toString('hex')}`, key: recordKey(placement, fetched.name), operation: 'install', phase: 'prepare', pid: process.pid, project_root: placement.projectRoot, folders: writing, ...(request.recordAs && { syncing: true }) };
		await this.journals.write(journal);
		try {
			// The staged copy moves into the last folder (one rename on the same file system); the others get copies.
			for (const [index, folder] of writing.entries()) {
				const target = join(transactionFolder(folder, journal.id), 'new');
				if (index < writing.length - 1 || !(await moveFolder(stagedSkill, target))) await copyTree(stagedSkill, files, target);
			}
		} catch (error) {
			await this.rollBack(journal);
			throw error;
		}
		if (signal.aborted) {
			await this.rollBack(journal);
			throw HangarError.cancelled(`installing ${fetched.name}`);
		}
		crashPoint(this.env, 'prepared');
		const committed: Journal = { ...journal, phase: 'commit', record };
		await this.journals.write(committed);
		crashPoint(this.env, 'committed');
		await this.rollForward(committed);
		return { record, change: existing && !sameContent ? 'upgraded' : 'installed', added: existing ? [] : [record.name] };
	}

	private lockOf(key: string): string {
		return join(this.locks, encodeURIComponent(key));
	}

	/** Runs `work` holding the skill's lock, waiting for it as long as `signal` allows. */
	private locked<T>(key: string, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
		return withLock(this.lockOf(key), work, { signal });
	}

	/** Removes an installed skill's files from every folder, and its record. */
	/**
	 * Removes an installed skill's files and record; with `client`, only that client's folders
	 * (a folder another client still reads stays) — the record goes once no client is left.
	 */
	async uninstall(placement: Placement, name: string, signal: AbortSignal, client?: string): Promise<{ removed: SkillRecord; remaining?: SkillRecord }> {
		return this.locked(recordKey(placement, name), signal, async () => {
			const record = await this.records.get(placement, name);
			if (!record) throw HangarError.notFound(`skill ${name} is not installed${placement.scope === 'project' ? ` in ${placement.projectRoot}` : ''}`, 'skill_not_installed');
			this.checkRemovable(record);
			const kept = client === undefined ? [] : record.folders.map((folder) => ({ ...folder, clients: folder.clients.filter((id) => id !== client) })).filter((folder) => folder.clients.length);
			if (client !== undefined && !record.folders.some((folder) => folder.clients.includes(client))) {
				const installedFor = record.folders.flatMap((folder) => folder.clients).join(', ');
				throw HangarError.notFound(`skill ${name} is not installed for ${client} (it is for ${installedFor})`, 'skill_not_installed');
			}
			const removing = record.folders.filter((folder) => !kept.some((other) => other.path === folder.path)).map((folder) => folder.path);
			await confineFolders(record.project_root, removing, record.files);
			const journal: Journal = {
				id: `${Date.now()}-${randomBytes(6).toString('hex')}`,
				key: recordKey(placement, name),
				operation: 'uninstall',
				phase: 'commit',
				pid: process.pid,
				project_root: record.project_root,
				folders: removing,
				record,
				...(kept.length && { remaining: { ...record, folders: kept } }),
			};
			await this.journals.write(journal);
			await this.rollForward(journal);
			return { removed: record, ...(journal.remaining && { remaining: journal.remaining }) };
		});
	}

	/**
	 * Finishes or undoes what crashed processes left: journals whose skill lock is free, and
	 * staging folders and half-written journals of processes that are gone.
	 */
	async recover(): Promise<void> {
		await this.journals.sweep();
		for (const id of await this.journals.ids()) {
			const journal = await this.journals.read(id);
			if (!journal) continue;
			// A journal that cannot finish (its project now holds a link out of it) stays for the next try.
			await tryLock(this.lockOf(journal.key), async () => {
				const current = await this.journals.read(id);
				if (!current) return;
				if (current.phase === 'prepare') await this.rollBack(current);
				else await this.rollForward(current);
			}).catch(() => undefined);
		}
		for (const entry of await readdir(this.stagingRoot).catch(() => [] as string[])) {
			const pid = Number.parseInt(entry, 10);
			if (Number.isInteger(pid) && !isAlive(pid)) await rm(join(this.stagingRoot, entry), { recursive: true, force: true });
		}
	}

	private async rollBack(journal: Journal): Promise<void> {
		await confineFolders(journal.project_root, journal.folders);
		for (const folder of journal.folders) await removeTransactionFolder(folder, journal.id);
		await this.journals.delete(journal.id);
	}

	/** Completes a committed transaction; every step may already have happened. */
	private async rollForward(journal: Journal): Promise<void> {
		const record = journal.record!;
		await confineFolders(journal.project_root, journal.folders, journal.operation === 'uninstall' ? record.files : []);
		if (journal.operation === 'install') {
			for (const folder of journal.folders) {
				const transaction = transactionFolder(folder, journal.id);
				const staged = join(transaction, 'new');
				if (!(await exists(staged))) continue; // already swapped in
				if ((await exists(folder)) && !(await exists(join(transaction, 'old')))) await rename(folder, join(transaction, 'old'));
				crashPoint(this.env, 'swapping');
				await rename(staged, folder);
			}
			crashPoint(this.env, 'swapped');
			await this.records.put(record);
			if (record.managed) await putLockEntry(record.project_root, record, { keepClients: journal.syncing });
		} else {
			for (const folder of journal.folders) await removeOwnFiles(folder, record.files, transactionFolder(folder, journal.id));
			crashPoint(this.env, 'removed');
			if (journal.remaining) {
				await this.records.put(journal.remaining);
				if (record.managed) await putLockEntry(record.project_root, journal.remaining);
			} else {
				await this.records.delete(placementOfRecord(record), record.name);
				if (record.managed) await updateLock(record.project_root, (entries) => entries.filter((entry) => entry.name !== record.name));
			}
		}
		crashPoint(this.env, 'recorded');
		for (const folder of journal.folders) await removeTransactionFolder(folder, journal.id);
		await this.journals.delete(journal.id);
	}

	/**
	 * The files' digest when it costs nothing (hashed while extracting) or is needed (project
	 * scope: the lock file pins it); reading every file back for a user install is not worth it.
	 */
	private async contentDigestOf(fetched: FetchedSkill, stagedSkill: string, placement: Placement): Promise<{ content_digest?: string }> {
		const hashed = fetched.files.every((file) => file.sha256 !== undefined);
		if (!hashed && placement.scope === 'user') return {};
		return { content_digest: await contentDigest(fetched.files.map((file) => ({ ...file, absolute: join(stagedSkill, ...file.path.split('/')) }))) };
	}

	/** True when the record already has every target folder, on disk, for its clients. */
	private async covers(record: SkillRecord, targets: readonly SkillTarget[]): Promise<boolean> {
		for (const target of targets) {
			const known = record.folders.find((folder) => folder.path === target.folder);
			if (!known || !target.clients.every((client) => known.clients.includes(client))) return false;
		}
		return (await this.missingFolders(record, targets.map((target) => target.folder))).length === 0;
	}

	/** Folders of the record (among `folders`) whose files are not all on disk. */
	private async missingFolders(record: SkillRecord, folders: readonly string[]): Promise<string[]> {
		const missing: string[] = [];
		for (const folder of folders) {
			const complete = record.folders.some((known) => known.path === folder) && (await Promise.all(record.files.map((file) => exists(join(folder, file))))).every(Boolean);
			if (!complete) missing.push(folder);
		}
		return missing;
	}

	/** 409 for a target folder Hangar did not write, or one holding files Hangar did not write. */
	private async refuseUnmanaged(existing: SkillRecord | undefined, targets: readonly SkillTarget[], force: boolean): Promise<void> {
		if (force) return;
		for (const target of targets) {
			if (!(await exists(target.folder))) continue;
			const known = existing?.folders.some((folder) => folder.path === target.folder);
			if (!known) {
				throw HangarError.conflict(`directory "${target.folder}" exists but is not managed by Hangar; install with force (--force) to overwrite it`, 'unmanaged_directory');
			}
			const foreign = (await listFiles(target.folder)).filter((file) => !existing!.files.includes(file));
			if (foreign.length) {
				throw HangarError.conflict(`directory "${target.folder}" holds files Hangar did not write (${foreign.slice(0, 5).join(', ')}); install with force (--force) to overwrite it`, 'unmanaged_files');
			}
		}
	}

	/** Records that the skill was asked for again (explicitly, or as a dependency of another). */
	private async markRequested(record: SkillRecord, request: InstallRequest): Promise<SkillRecord> {
		const added = (request.requiredBy ?? []).filter((name) => !record.required_by.includes(name));
		if (!added.length && (record.explicit || !request.explicit)) return record;
		const requiredBy = [...record.required_by, ...added];
		const updated = { ...record, required_by: requiredBy, explicit: record.explicit || request.explicit };
		await this.records.put(updated);
		if (updated.managed) await putLockEntry(updated.project_root, updated);
		return updated;
	}

	/**
	 * Drops `parent` from a dependency's `required_by`; true when nothing requires the
	 * dependency any more and it was never asked for by itself (an orphan to remove).
	 */
	async release(placement: Placement, dependency: string, parent: string, signal: AbortSignal): Promise<boolean> {
		return this.locked(recordKey(placement, dependency), signal, async () => {
			const updated = await this.records.update(placement, dependency, (record) => ({ ...record, required_by: record.required_by.filter((name) => name !== parent) }));
			if (!updated) return false;
			if (updated.managed) await putLockEntry(updated.project_root, updated);
			return !updated.explicit && updated.required_by.length === 0;
		});
	}

	/** Uninstall never leaves the skills folders: every path must be `<a client's skills dir>/<name>/<file>`. */
	private checkRemovable(record: SkillRecord): void {
		const allowed = allSkillsDirectories(placementOfRecord(record), this.home);
		for (const folder of record.folders) {
			if (!allowed.has(dirname(folder.path)) || basename(folder.path) !== record.name) {
				throw new HangarError(500, `refusing to remove ${folder.path}: it is not a skill folder of any client`, 'unsafe_path');
			}
		}
		for (const file of record.files) {
			if (file.startsWith('/') || file.split('/').includes('..') || file.includes('\\') || file === '') {
				throw new HangarError(500, `refusing to remove ${file}: the record names a path outside the skill folder`, 'unsafe_path');
			}
		}
	}
}

function tagsOf(metadata: Record<string, string>): string[] {
	return (metadata.tags ?? '').split(/[,\s]+/).filter(Boolean);
}

/** Test hook: dies on the spot at a named point, as `kill -9` would, to prove crash safety. */
function crashPoint(env: NodeJS.ProcessEnv, point: string): void {
	if (env.HANGAR_TEST_CRASH_AT === point) process.kill(process.pid, 'SIGKILL');
}
