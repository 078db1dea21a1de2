/**
 * Workloads as they are: each one's recorded status checked against its container (one
 * runtime call for a whole list) and its proxy, and the summaries lists show.
 */
import { HangarError } from '../../protocol/errors.js';
import type { WorkloadSummary } from '../../protocol/protocol.workloads.js';
import { DEFAULT_GROUP } from '../groups/store.js';
import type { ContainerInfo, Runtime } from '../runtime/runtime.js';
import { instanceLabels, isFirstInstance, LABELS } from './container.js';
import type { GroupDirectory } from './dependencies.js';
import { driftOf } from './pins.js';
import { liveProxy } from './liveProxy.js';
import { effectiveStatus, isActive, type EffectiveStatus, type Observed } from './status.js';
import type { StoredWorkload, WorkloadStore } from '../runspec/store.js';
import { clientUrlOf } from '../runspec/urls.js';

export class WorkloadObserver {
	constructor(
		private readonly store: WorkloadStore,
		private readonly runtime: Runtime,
		private readonly groups: GroupDirectory,
	) {}

	async require(name: string): Promise<StoredWorkload> {
		const config = await this.store.configs.get(name);
		if (!config) throw HangarError.notFound(`workload ${name} not found`, 'workload_not_found');
		return config;
	}

	/** Containers of this Hangar by workload name, or why the runtime could not tell. */
	private async containers(): Promise<Map<string, ContainerInfo> | { unavailable: string }> {
		try {
			const list = await this.runtime.list(instanceLabels(this.store.instance));
			// A workload with several server instances is seen through its first, as a workload with one.
			return new Map(list.filter(isFirstInstance).map((container) => [container.labels[LABELS.name] ?? '', container]));
		} catch (error) {
			return { unavailable: `the container runtime does not answer: ${(error as Error).message}` };
		}
	}

	async observe(config: StoredWorkload, containers?: Map<string, ContainerInfo> | { unavailable: string }): Promise<Observed> {
		const [recorded, proxy, pins] = await Promise.all([
			this.store.statuses.get(config.name).catch(() => undefined),
			liveProxy(this.store, config.name),
			this.store.pins.get(config.name).catch(() => undefined),
		]);
		let container: Observed['container'];
		if (config.container_name) {
			if (containers instanceof Map) container = containers.get(config.name);
			else if (containers) container = containers;
			else {
				try {
					container = await this.runtime.inspect(config.container_name);
				} catch (error) {
					container = { unavailable: `the container runtime does not answer: ${(error as Error).message}` };
				}
			}
		}
		return { recorded, container, proxy, drift: driftOf(config.name, pins) };
	}

	/** The workloads a list shows, each with the configuration its summary was made from. */
	async listed(params: { all?: boolean; group?: string }): Promise<Array<{ config: StoredWorkload; summary: WorkloadSummary }>> {
		if (params.group && !(await this.groups.exists(params.group))) {
			throw HangarError.notFound(`group '${params.group}' not found`, 'group_not_found');
		}
		const configs = (await this.store.configs.list()).filter((config) => !params.group || (config.group ?? DEFAULT_GROUP) === params.group);
		const containers = configs.some((config) => config.container_name) ? await this.containers() : new Map<string, ContainerInfo>();
		const listed = await Promise.all(
			configs.map(async (config) => {
				const observed = await this.observe(config, containers);
				// A deletion that finished between the two reads left no status behind: the workload is gone.
				if (!observed.recorded && !(await this.store.configs.get(config.name))) return undefined;
				return { config, summary: summaryOf(config, effectiveStatus(config, observed), observed) };
			}),
		);
		return listed.filter((entry) => entry !== undefined).filter(({ summary }) => params.all || isActive(summary.status!));
	}
}

function summaryOf(config: StoredWorkload, status: EffectiveStatus, observed: Observed): WorkloadSummary {
	return {
		name: config.name,
		package: config.remote_url ?? config.image ?? '',
		url: clientUrlOf(config),
		port: config.port ?? 0,
		transport_type: config.transport ?? 'stdio',
		proxy_mode: config.proxy_mode ?? 'streamable-http',
		status: status.status,
		status_context: status.context ?? '',
		created_at: config.created_at,
		started_at: observed.recorded?.started_at ?? '',
		labels: config.container_labels ?? {},
		group: config.group ?? DEFAULT_GROUP,
		tools: config.tools_filter ?? [],
		remote: Boolean(config.remote_url),
		...(observed.drift ? { tools_drifted: observed.drift.names } : {}),
	};
}
