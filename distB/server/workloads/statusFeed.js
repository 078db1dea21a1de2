/**
 * Workload statuses as recorded and as announced: every change is written to the status
 * store and sent as `workloads/didChange`, and changes other processes make (the CLI,
 * `hangar serve`, another daemon) are announced too, by watching the status folder.
 */
import { watch } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { WorkloadsDidChange } from '../../protocol/protocol.workloads.js';
const TRANSITIONAL = new Set(['starting', 'stopping', 'removing']);
const REMOVED = 'removed';
export class StatusFeed {
    store;
    notifier;
    log;
    /** Workload → `updated_at` of the last status announced. */
    notified = new Map();
    /** Workloads this process is deleting: it announces their removal itself, once purged. */
    deleting = new Set();
    constructor(store, notifier, log) {
        this.store = store;
        this.notifier = notifier;
        this.log = log;
    }
    async set(name, status, context) {
        const now = new Date().toISOString();
        const previous = await this.store.statuses.get(name).catch(() => undefined);
        // `starting` for a create, then for its start, is one change.
        if (previous?.status === status && (TRANSITIONAL.has(status) || previous.status_context === context))
            return;
        this.notified.set(name, now);
        await this.store.statuses.put(name, {
            status,
            status_context: context,
            started_at: status === 'running' ? now : previous?.started_at,
            updated_at: now,
        });
        this.notifier.notify(WorkloadsDidChange, { name, status, status_context: context });
    }
    /** Runs the deletion of `name`, then announces its removal (not the watcher, which would see it first). */
    async whileDeleting(name, work) {
        this.deleting.add(name);
        try {
            const result = await work();
            this.announceRemoval(name);
            return result;
        }
        finally {
            this.deleting.delete(name);
        }
    }
    announceRemoval(name) {
        this.notified.set(name, REMOVED);
        this.notifier.notify(WorkloadsDidChange, { name, status: 'removing', status_context: 'removed' });
    }
    /** Announces the status changes other processes make. Changes this process made were announced already. */
    watch() {
        const folder = this.store.statuses.collection.folder;
        const pending = new Map();
        const check = async (name) => {
            const record = await this.store.statuses.get(name).catch(() => undefined);
            const seen = this.notified.get(name);
            if (!record) {
                if (seen === undefined || seen === REMOVED || this.deleting.has(name))
                    return;
                this.announceRemoval(name);
            }
            else if (record.updated_at !== seen) {
                this.notified.set(name, record.updated_at);
                this.notifier.notify(WorkloadsDidChange, { name, status: record.status, status_context: record.status_context });
            }
        };
        void (async () => {
            await mkdir(folder, { recursive: true, mode: 0o700 });
            for (const name of await this.store.statuses.collection.names()) {
                const record = await this.store.statuses.get(name).catch(() => undefined);
                if (record)
                    this.notified.set(name, record.updated_at);
            }
            const watcher = watch(folder, (_event, file) => {
                if (!file || !file.endsWith('.json') || file.startsWith('.'))
                    return;
                const name = decodeURIComponent(file.slice(0, -'.json'.length));
                clearTimeout(pending.get(name));
                pending.set(name, setTimeout(() => void check(name), 10));
            });
            watcher.unref();
        })().catch((error) => this.log.warn(`cannot watch workload statuses: ${error.message}`));
    }
}
//# sourceMappingURL=statusFeed.js.map