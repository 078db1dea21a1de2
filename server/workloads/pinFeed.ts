/**
 * Announces tool drift: the proxies write what they see to the pin store (runspec/pins), and
 * this watch on its folder sends `workloads/didChange` with `tools_drifted` when the drifted
 * names of a workload change (empty once everything is approved), for editors to tell the user.
 */
import { mkdirSync, watch } from 'node:fs';
import type { Environment } from '../environment.js';
import type { Logger } from '../log.js';
import type { WorkloadStore } from '../runspec/store.js';
import { driftOf } from './pins.js';

export class PinFeed {
	/** Workload → its drifted names as last announced (joined). */
	private readonly announced = new Map<string, string>();

	constructor(
		private readonly store: WorkloadStore,
		private readonly notifier: Environment['notifier'],
		private readonly log: Logger,
	) {}

	private async check(name: string): Promise<void> {
		const drift = driftOf(name, await this.store.pins.get(name).catch(() => undefined));
		const names = drift?.names ?? [];
		if ((this.announced.get(name) ?? '') === names.join('\n')) return;
		this.announced.set(name, names.join('\n'));
		const recorded = await this.store.statuses.get(name).catch(() => undefined);
		if (!recorded) return; // removed meanwhile
		this.notifier.notify('workloads/didChange', { name, status: recorded.status, status_context: drift?.context ?? recorded.status_context, tools_drifted: names });
	}

	/** Watches from now on (the folder is made if need be); the drift already there is the baseline, not news. */
	watch(): void {
		const folder = this.store.pins.collection.folder;
		const pending = new Map<string, NodeJS.Timeout>();
		try {
			mkdirSync(folder, { recursive: true, mode: 0o700 });
			const watcher = watch(folder, (_event, file) => {
				if (!file || !file.endsWith('.json') || file.startsWith('.')) return;
				const name = decodeURIComponent(file.slice(0, -'.json'.length));
				clearTimeout(pending.get(name));
				pending.set(name, setTimeout(() => void this.check(name), 10));
			});
			watcher.unref();
		} catch (error) {
			return this.log.warn(`cannot watch tool pins: ${(error as Error).message}`);
		}
		void (async () => {
			for (const name of await this.store.pins.collection.names()) {
				if (this.announced.has(name)) continue; // a change seen meanwhile
				const drift = driftOf(name, await this.store.pins.get(name).catch(() => undefined));
				this.announced.set(name, (drift?.names ?? []).join('\n'));
			}
		})().catch((error: Error) => this.log.warn(`cannot read tool pins: ${error.message}`));
	}
}
