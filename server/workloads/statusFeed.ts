/**
 * Workload statuses as recorded and as announced: every change is written to the status
 * store and sent as `workloads/didChange`, and changes other processes make (the CLI,
 * `hangar serve`, another daemon) are announced too, by watching the status folder.
 */
import { watch } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { WorkloadStatus } from '../../protocol/protocol.workloads.js';
import type { Environment } from '../environment.js';
import type { Logger } from '../log.js';
import { boundedReason, type StoredStatus, type WorkloadStore } from '../runspec/store.js';

const TRANSITIONAL = new Set<WorkloadStatus>(['starting', 'stopping', 'removing']);
const REMOVED = 'removed';

/** Whether `status` (with `context`) is news after `previous`. */
function replaces(previous: StoredStatus, status: WorkloadStatus, context: string | undefined): boolean {
	// `starting` for a create, then for its start, is one change.
	if (previous.status === status && (TRANSITIONAL.has(status) || previous.status_context === context)) return false;
	// A workload being removed stays so until it is gone (the reconciler finishes a deletion cut
	// short): a late `running` from its start must not hide it. Only a failed deletion says otherwise.
	return previous.status !== 'removing' || status === 'error';
}

export class StatusFeed {
	/** Workload → `updated_at` of the last status announced. */
	private readonly notified = new Map<string, string>();
	/** Workloads this process is deleting: it announces their removal itself, once purged. */
	private readonly deleting = new Set<string>();

	constructor(
		private readonly store: WorkloadStore,
		private readonly notifier: Environment['notifier'],
		private readonly log: Logger,
	) {}

	async set(name: string, status: WorkloadStatus, reason?: string): Promise<void> {
		const context = boundedReason(reason);
		const now = new Date().toISOString();
		// Decided and written under the record's lock: two writers never both act on one old status.
		const written = await this.store.statuses.change(name, (previous) => {
			if (previous && !replaces(previous, status, context)) return undefined;
			this.notified.set(name, now);
			return { status, status_context: context, started_at: status === 'running' ? now : previous?.started_at, updated_at: now };
		});
		if (written) this.notifier.notify('workloads/didChange', { name, status, status_context: context });
	}

	/** Runs the deletion of `name`, then announces its removal (not the watcher, which would see it first). */
	async whileDeleting<T>(name: string, work: () => Promise<T>): Promise<T> {
		this.deleting.add(name);
		try {
			const result = await work();
			this.announceRemoval(name);
			return result;
		} finally {
			this.deleting.delete(name);
		}
	}

	private announceRemoval(name: string): void {
		this.notified.set(name, REMOVED);
		this.notifier.notify('workloads/didChange', { name, status: 'removing', status_context: 'removed' });
	}

	/** Announces the status changes other processes make. Changes this process made were announced already. */
	watch(): void {
		const folder = this.store.statuses.collection.folder;
		const pending = new Map<string, NodeJS.Timeout>();
		const check = async (name: string) => {
			const record = await this.store.statuses.get(name).catch(() => undefined);
			const seen = this.notified.get(name);
			if (!record) {
				if (seen === undefined || seen === REMOVED || this.deleting.has(name)) return;
				this.announceRemoval(name);
			} else if (seen === undefined || seen === REMOVED || record.updated_at > seen) {
				// Only a newer record is news: a read that began before this process replaced the
				// record (its change was announced already) would announce the old status again.
				this.notified.set(name, record.updated_at);
				this.notifier.notify('workloads/didChange', { name, status: record.status, status_context: record.status_context });
			}
		};
		void (async () => {
			await mkdir(folder, { recursive: true, mode: 0o700 });
			for (const name of await this.store.statuses.collection.names()) {
				const record = await this.store.statuses.get(name).catch(() => undefined);
				if (record) this.notified.set(name, record.updated_at);
			}
			const watcher = watch(folder, (_event, file) => {
				if (!file || !file.endsWith('.json') || file.startsWith('.')) return;
				const name = decodeURIComponent(file.slice(0, -'.json'.length));
				clearTimeout(pending.get(name));
				pending.set(name, setTimeout(() => void check(name), 10));
			});
			watcher.unref();
		})().catch((error: Error) => this.log.warn(`cannot watch workload statuses: ${error.message}`));
	}
}
