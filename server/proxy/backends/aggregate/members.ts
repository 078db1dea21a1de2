/**
 * The members of an aggregate: the workloads of its group other than aggregates, each with the
 * URL of its own proxy while it serves. Re-read when the workloads' state changes (run
 * configurations, statuses, proxy records: the folders the services and proxies write, watched),
 * so members added, started, stopped or removed are seen within moments.
 */
import { watch, type FSWatcher } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { Logger } from '../../../log.js';
import { isMemberOf, memberEndpoint, type MemberEndpoint } from '../../../runspec/aggregation.js';
import type { WorkloadStore } from '../../../runspec/store.js';

/** How long a burst of writes settles before the members are read again. */
const SETTLE_MS = 50;

export interface Member extends MemberEndpoint {
	readonly name: string;
}

export class Membership {
	private current: Promise<Map<string, Member>>;
	private signature = '';
	private readonly watchers: FSWatcher[] = [];
	private timer: NodeJS.Timeout | undefined;
	/** Called when a member comes, goes, starts or stops. */
	onChange: (() => void) | undefined;
	/**
	 * Called when a workload's tool pins change (an approval, a drift recorded): what its proxy
	 * serves may have changed, even while no client session of the aggregate hears it say so.
	 */
	onPinsChanged: ((workload: string) => void) | undefined;

	constructor(
		private readonly store: WorkloadStore,
		private readonly group: string,
		private readonly log: Logger,
	) {
		this.current = this.read();
	}

	members(): Promise<Map<string, Member>> {
		return this.current;
	}

	async start(): Promise<void> {
		const folders = [this.store.configs.folder, this.store.statuses.collection.folder, this.store.proxies.collection.folder];
		for (const folder of folders) {
			await mkdir(folder, { recursive: true, mode: 0o700 });
			const watcher = watch(folder, (_event, file) => {
				if (file && file.endsWith('.json') && !file.startsWith('.')) this.changed();
			});
			watcher.on('error', (error) => this.log.warn(`cannot watch ${folder}: ${error.message}`));
			this.watchers.push(watcher);
		}
		const pins = this.store.pins.collection.folder;
		await mkdir(pins, { recursive: true, mode: 0o700 });
		const watcher = watch(pins, (_event, file) => {
			if (file && file.endsWith('.json') && !file.startsWith('.')) this.onPinsChanged?.(decodeURIComponent(file.slice(0, -'.json'.length)));
		});
		watcher.on('error', (error) => this.log.warn(`cannot watch ${pins}: ${error.message}`));
		this.watchers.push(watcher);
		await this.current;
	}

	close(): void {
		clearTimeout(this.timer);
		for (const watcher of this.watchers) watcher.close();
	}

	private changed(): void {
		clearTimeout(this.timer);
		this.timer = setTimeout(() => {
			const before = this.signature;
			this.current = this.read();
			void this.current.then(() => (this.signature !== before ? this.onChange?.() : undefined));
		}, SETTLE_MS);
	}

	private async read(): Promise<Map<string, Member>> {
		const members = new Map<string, Member>();
		const configs = (await this.store.configs.list().catch(() => [])).filter((config) => isMemberOf(config, this.group));
		await Promise.all(configs.map(async (config) => members.set(config.name, { name: config.name, ...(await memberEndpoint(this.store, config.name)) })));
		const signature = JSON.stringify([...members.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map((member) => [member.name, member.url?.href, member.generation]));
		this.signature = signature;
		return members;
	}
}
