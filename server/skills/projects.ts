/**
 * A project's skills against its lock file: `sync` makes the installed set match the lock
 * exactly (like `npm ci`), `upgrade` re-resolves each skill's source and moves the pin when
 * the source moved (like `npm update`).
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import type { ValidParamsOf } from '../../protocol/operation.js';
import type { SkillSyncResult, SkillUpgradeResult, SyncSkills, UpgradeSkills } from '../../protocol/protocol.skills.js';
import { CLIENT_TABLE, clientDefinition, type ClientDefinition } from '../clients/table.js';
import type { OperationContext, ProgressReporter } from '../context.js';
import { DEFAULT_GROUP } from '../groups/store.js';
import { formatReference } from '../oci/reference.js';
import { contentDigest } from './files.js';
import { formatGitReference } from './git.js';
import type { InstallOutcome, SkillInstaller } from './installer.js';
import { LOCK_FILE, putLockEntry, readLock, TOOLHIVE_LOCK_FILE, type LockEntry } from './lockfile.js';
import { knownDigest, withRecordedAllowance, type ResolvedSource, type SkillSources } from './sources.js';
import type { SkillRecord, SkillRecords } from './store.js';
import { checkProjectRoot, skillsDirectory, type Placement } from './targets.js';

type FailureReason = NonNullable<NonNullable<SkillSyncResult['failed']>[number]['reason']>;
type Outcome = NonNullable<SkillUpgradeResult['outcomes']>[number];

/** What a project's sync and upgrade use of the skill service: service.ts implements it, and this module imports no service. */
export interface ProjectSkillService {
	readonly records: SkillRecords;
	recover(): Promise<void>;
	withProgress<T>(context: OperationContext, title: string, work: (progress: ProgressReporter) => Promise<T>, failedIn?: (result: T) => boolean): Promise<T>;
	chooseClients(clients: readonly string[] | undefined): Promise<ClientDefinition[]>;
	addToGroup(group: string, name: string): Promise<void>;
	announce(outcome: InstallOutcome, placement: Placement): void;
	remove(placement: Placement, name: string, signal: AbortSignal, client?: string): Promise<void>;
}

export class SkillProjects {
	constructor(
		private readonly skills: ProjectSkillService,
		private readonly workshop: { readonly sources: SkillSources; readonly installer: SkillInstaller },
	) {}

	async sync(params: ValidParamsOf<typeof SyncSkills>, context: OperationContext): Promise<SkillSyncResult> {
		const { placement, lock } = await this.open(params.project_root);
		const result = { installed: [], already_current: [], drifted: [], missing: [], removed_from_lock: [], pruned: [], never_managed: [], failed: [] } satisfies Required<
			Record<keyof SkillSyncResult, unknown[]>
		> as Required<SkillSyncResult>;
		const installed = await this.projectRecords(placement);
		const entries = lock?.skills ?? [];
		const clientsFor = this.clientChooser(params.clients, installed, entries);
		// ToolHive hashes the files another way: its content digests cannot be compared with Hangar's.
		const comparable = lock?.file !== TOOLHIVE_LOCK_FILE;

		await this.skills.withProgress(context, `Syncing skills of ${placement.projectRoot}`, async (progress) => {
			for (const entry of entries) {
				const record = installed.find((candidate) => candidate.name === entry.name);
				const pinned = comparable ? entry.contentDigest : record?.content_digest;
				const state = !record ? 'missing' : record.digest !== entry.digest || !(await this.intact(record, pinned)) ? 'drifted' : 'current';
				if (state === 'current') {
					result.already_current.push(entry.name);
					continue;
				}
				result[state].push(entry.name);
				if (params.check) continue;
				progress.report(`installing ${entry.name} at ${entry.digest.slice(0, 19)}`);
				try {
					const clients = await clientsFor(entry.name);
					const source = withRecordedAllowance(await this.workshop.sources.resolvePinned(entry.resolvedReference, entry.digest, context.signal), record);
					const dependencies = entries
						.filter((other) => other.requiredBy?.includes(entry.name))
						.map((other) => ({ name: other.name, reference: other.source, digest: other.digest }));
					const outcome = await this.workshop.installer.install(
						{
							source,
							requested: entry.source,
							placement,
							clients,
							force: true,
							repair: true,
							explicit: entry.explicit,
							...(entry.requiredBy && { requiredBy: entry.requiredBy }),
							pinnedDependencies: dependencies,
							recordAs: { reference: entry.resolvedReference, ...(tagOf(entry.resolvedReference) && { tag: tagOf(entry.resolvedReference) }), movable: true },
						},
						{ signal: context.signal, progress },
					);
					if (comparable && outcome.record.content_digest !== entry.contentDigest) {
						throw new HangarError(502, `${entry.name} at ${entry.digest} has different content than the lock file records`, 'content_mismatch');
					}
					await this.skills.addToGroup(DEFAULT_GROUP, entry.name);
					this.skills.announce(outcome, placement);
					result.installed.push(entry.name);
				} catch (error) {
					// A link out of the project is an attack on the whole project, not one skill's failure.
					if (context.signal.aborted || isOutsideProject(error)) throw error;
					result.failed.push({ name: entry.name, error: (error as Error).message, reason: reasonOf(error) });
				}
			}

			for (const record of installed.filter((candidate) => !entries.some((entry) => entry.name === candidate.name))) {
				if (params.adopt && !params.check) {
					await putLockEntry(placement.projectRoot, record);
					result.already_current.push(record.name);
				} else if (params.prune && !params.check) {
					await this.skills.remove(placement, record.name, context.signal);
					result.pruned.push(record.name);
				} else {
					result.removed_from_lock.push(record.name);
				}
			}
			result.never_managed.push(...(await this.unmanagedFolders(placement, installed)));
		}, () => result.failed.length > 0);
		return result;
	}

	async upgrade(params: ValidParamsOf<typeof UpgradeSkills>, context: OperationContext): Promise<SkillUpgradeResult> {
		const { placement, lock } = await this.open(params.project_root);
		if (!lock) throw HangarError.notFound(`no ${LOCK_FILE} (or ${TOOLHIVE_LOCK_FILE}) in ${placement.projectRoot}; install a skill with scope "project" first`, 'no_lock_file');
		const unknown = (params.names ?? []).filter((name) => !lock.skills.some((entry) => entry.name === name));
		if (unknown.length) throw HangarError.notFound(`${unknown.join(', ')} not in ${LOCK_FILE}`, 'skill_not_locked');
		const chosen = lock.skills.filter((entry) => !params.names?.length || params.names.includes(entry.name));
		const apply = !params.preview && !params.fail_on_changes;
		const records = await this.projectRecords(placement);
		const clientsFor = this.clientChooser(params.clients, records, lock.skills);
		const outcomes: Outcome[] = [];

		await this.skills.withProgress(context, `Upgrading skills of ${placement.projectRoot}`, async (progress) => {
			for (const entry of chosen) {
				progress.report(`resolving ${entry.source}`);
				try {
					const record = records.find((candidate) => candidate.name === entry.name);
					outcomes.push(await this.upgradeOne(entry, record, placement, () => clientsFor(entry.name), apply, params.allow_ref_change ?? false, context));
				} catch (error) {
					if (context.signal.aborted || isOutsideProject(error)) throw error;
					outcomes.push({ name: entry.name, status: 'failed', reason: reasonOf(error), error: (error as Error).message, old_digest: entry.digest });
				}
			}
		}, () => outcomes.some((outcome) => outcome.status === 'failed'));
		return { outcomes };
	}

	private async upgradeOne(
		entry: LockEntry,
		record: SkillRecord | undefined,
		placement: Placement,
		clients: () => Promise<ClientDefinition[]>,
		apply: boolean,
		allowRefChange: boolean,
		context: OperationContext,
	): Promise<Outcome> {
		const source = withRecordedAllowance(await this.workshop.sources.resolve(entry.source, undefined, context.signal), record);
		const reference = referenceOf(source);
		const pinnedBySource = source.kind === 'oci' ? source.reference.digest !== undefined : source.kind === 'git' ? /^[0-9a-f]{40,64}$/.test(source.reference.ref ?? '') : false;
		if (pinnedBySource) return { name: entry.name, status: 'not-upgradable', old_digest: entry.digest };
		if (reference !== entry.resolvedReference && !allowRefChange) {
			return { name: entry.name, status: 'ref-change-blocked', old_digest: entry.digest, new_resolved_reference: reference };
		}
		const digest = await this.digestOf(source, context);
		if (digest === entry.digest) return { name: entry.name, status: 'up-to-date', old_digest: entry.digest, new_digest: digest };
		const outcome: Outcome = { name: entry.name, status: 'upgraded', old_digest: entry.digest, new_digest: digest, new_resolved_reference: reference };
		if (!apply) return outcome;
		const installed = await this.workshop.installer.install(
			{ source, requested: entry.source, placement, clients: await clients(), force: true, explicit: entry.explicit, ...(entry.requiredBy && { requiredBy: entry.requiredBy }) },
			{ signal: context.signal },
		);
		this.skills.announce(installed, placement);
		return { ...outcome, new_digest: installed.record.digest };
	}

	/** The digest a source resolves to now: known for OCI and local builds, fetched for git. */
	private async digestOf(source: ResolvedSource, context: OperationContext): Promise<string> {
		if (source.kind !== 'git') return knownDigest(source)!;
		return this.workshop.installer.withScratch(async (scratch) => (await this.workshop.sources.git.fetch(source.reference, join(scratch, 'skill'), context.signal, undefined, source.allowLocal)).commit);
	}

	/**
	 * The clients to install a lock entry for: the ones asked for; else those the skill is
	 * already installed for; else those the lock file records for it (a fresh clone); else
	 * every detected client; else the clients the project's other skills use.
	 */
	private clientChooser(
		requested: readonly string[] | undefined,
		records: readonly SkillRecord[],
		entries: readonly LockEntry[],
	): (name: string) => Promise<ClientDefinition[]> {
		return async (name) => {
			if (requested?.length) return this.skills.chooseClients(requested);
			const own = records.find((record) => record.name === name)?.folders.flatMap((folder) => folder.clients);
			if (own?.length) return this.skills.chooseClients(own);
			const locked = entries.find((entry) => entry.name === name)?.clients?.filter((id) => clientDefinition(id)?.skills);
			if (locked?.length) return this.skills.chooseClients(locked);
			try {
				return await this.skills.chooseClients(undefined);
			} catch (error) {
				const used = [...new Set([...records.flatMap((record) => record.folders.flatMap((folder) => folder.clients)), ...entries.flatMap((entry) => entry.clients ?? [])])];
				if (used.length) return this.skills.chooseClients(used);
				throw error;
			}
		};
	}

	private async open(given: string): Promise<{ placement: Placement; lock: Awaited<ReturnType<typeof readLock>> }> {
		const projectRoot = await checkProjectRoot(given);
		await this.skills.recover();
		const placement: Placement = { scope: 'project', projectRoot };
		return { placement, lock: await readLock(projectRoot) };
	}

	private async projectRecords(placement: Placement): Promise<SkillRecord[]> {
		return (await this.skills.records.list()).filter((record) => record.scope === 'project' && record.project_root === placement.projectRoot);
	}

	/** The files in every folder still hash to `pinned` (the lock file's content digest, or the record's). */
	private async intact(record: SkillRecord, pinned: string | undefined): Promise<boolean> {
		for (const folder of record.folders) {
			const files = await Promise.all(
				record.files.map(async (path) => {
					const absolute = join(folder.path, ...path.split('/'));
					return { path, absolute, size: (await stat(absolute).catch(() => undefined))?.size ?? -1 };
				}),
			);
			if (files.some((file) => file.size < 0)) return false;
			if ((await contentDigest(files)) !== pinned) return false;
		}
		return true;
	}

	/** Skill folders in the project's client folders that no Hangar record owns. */
	private async unmanagedFolders(placement: Placement, records: readonly SkillRecord[]): Promise<string[]> {
		const owned = new Set(records.flatMap((record) => record.folders.map((folder) => folder.path)));
		const found = new Set<string>();
		for (const client of CLIENT_TABLE) {
			const directory = skillsDirectory(client, placement, '');
			if (!directory) continue;
			for (const entry of await readdir(directory, { withFileTypes: true }).catch(() => [])) {
				if (entry.isDirectory() && !entry.name.startsWith('.') && !owned.has(join(directory, entry.name))) found.add(entry.name);
			}
		}
		return [...found].sort();
	}
}

function referenceOf(source: ResolvedSource): string {
	if (source.kind === 'oci') {
		const { registry, repository, tag } = source.reference;
		return formatReference({ registry, repository, ...(tag !== undefined && { tag }) });
	}
	return source.kind === 'git' ? formatGitReference(source.reference) : source.build.tag;
}

function tagOf(reference: string): string | undefined {
	const git = /@([^#]+)/.exec(reference);
	if (reference.startsWith('git')) return git?.[1];
	const last = reference.split('/').at(-1) ?? '';
	return last.includes(':') ? last.slice(last.indexOf(':') + 1) : undefined;
}

function isOutsideProject(error: unknown): boolean {
	return error instanceof HangarError && error.code === 'outside_project';
}

function reasonOf(error: unknown): FailureReason {
	const status = error instanceof HangarError ? error.status : 500;
	if (status === 401 || status === 429 || status === 502 || status === 503 || status === 504) return 'registry-unreachable';
	if (status === 404) return 'digest-missing';
	if (status === 400 || status === 409 || status === 422) return 'validation-rejected';
	return 'unknown';
}
