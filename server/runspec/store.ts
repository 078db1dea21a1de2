/**
 * Workload state on disk:
 *
 * - `<state>/runconfigs/<name>.json`: the run configuration (spec 2.17, ToolHive's field names)
 *   plus a few Hangar settings; the desired state, written by the management services only.
 * - `<data>/statuses/<name>.json`: the last status a service recorded, with its reason.
 * - `<data>/proxies/<name>.json`: written by the workload's proxy process: its pid, port and
 *   whether its backend answers.
 * - `<data>/logs/<name>.log`: the proxy's log.
 * - `<state>/pins/<name>.json`: the pinned tool and prompt definitions (pins/store.ts).
 *
 * Every write is atomic and locked (server/store), so daemons, `hangar serve`, the CLI and
 * proxies can share the folders.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkloadStatus } from '../../protocol/protocol.workloads.js';
import { sha256Hex } from '../hash.js';
import { JsonCollection, type RecordSchema } from '../store/document.js';
import { jsonSchemaCheck } from '../store/jsonSchema.js';
import { balancerFilesOf } from './balancer.js';
import { PinStore } from './pins/store.js';
import { withLock } from '../store/lock.js';
import type { HangarPaths } from '../store/paths.js';
import { recordSchemas } from './records.generated.js';
import type { ProxyRecord, StoredStatus, StoredWorkload } from './records.js';
import { runConfigFolder } from './workloadNames.js';

export type { BackendState, ProxyRecord, StoredStatus, StoredWorkload } from './records.js';

/** The format version of the run configuration ToolHive writes, shown on export. */
export const RUN_CONFIG_FORMAT = 'v0.1.0';

/** Most characters of a status reason kept; a server's text beyond it is cut (with `…`). */
export const MAX_REASON_LENGTH = 500;

/** `reason` bounded to MAX_REASON_LENGTH, as every recorded status reason is. */
export function boundedReason<T extends string | undefined>(reason: T): T {
	return (reason !== undefined && reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH - 1)}…` : reason) as T;
}

/** The proxy serves but cannot get a token for its server: a backend state, and the workload status the proxy records. */
export function isSignInState(state: string | undefined): state is 'unauthenticated' | 'auth_retrying' {
	return state === 'unauthenticated' || state === 'auth_retrying';
}

/** A workload whose proxy serves (a sign-in away from working, perhaps): checked against the proxy, its endpoint listed. */
export function isServing(status: WorkloadStatus): boolean {
	return status === 'running' || status === 'unhealthy' || isSignInState(status);
}

/** A folder of records, one per workload, with an upsert. */
class RecordFolder<T> {
	readonly collection: JsonCollection<T>;

	constructor(folder: string, schema: RecordSchema<T>) {
		this.collection = new JsonCollection(folder, { schema, version: 1 });
	}

	get(name: string): Promise<T | undefined> {
		return this.collection.get(name);
	}

	async put(name: string, value: T): Promise<void> {
		await this.collection.change(name, () => value);
	}

	/** See `JsonCollection.change`. */
	change(name: string, decide: (current: T | undefined) => T | undefined): Promise<boolean> {
		return this.collection.change(name, decide);
	}

	/** Changes an existing record under its lock (a `change` that returns it as it is leaves it so). */
	async update(name: string, change: (current: T) => T): Promise<void> {
		await this.collection.update(name, change);
	}

	async remove(name: string): Promise<void> {
		await this.collection.delete(name);
	}
}

export class WorkloadStore {
	readonly configs: JsonCollection<StoredWorkload>;
	readonly statuses: RecordFolder<StoredStatus>;
	readonly proxies: RecordFolder<ProxyRecord>;
	readonly pins: PinStore;
	private instanceId?: string;
	private readonly locks: string;
	private readonly logs: string;

	constructor(readonly paths: HangarPaths) {
		this.configs = new JsonCollection(runConfigFolder(paths), { schema: jsonSchemaCheck<StoredWorkload>(recordSchemas.StoredWorkload), version: 1 });
		this.statuses = new RecordFolder(join(paths.data, 'statuses'), jsonSchemaCheck<StoredStatus>(recordSchemas.StoredStatus));
		this.proxies = new RecordFolder(join(paths.data, 'proxies'), jsonSchemaCheck<ProxyRecord>(recordSchemas.ProxyRecord));
		this.pins = new PinStore(paths);
		this.locks = join(paths.state, 'workload-locks');
		this.logs = join(paths.data, 'logs');
	}

	/**
	 * A short stable id of this state folder, put on every container as `hangar.instance`.
	 * Hashed on first use: reading remote workloads needs no `node:crypto`.
	 */
	get instance(): string {
		return (this.instanceId ??= sha256Hex(this.paths.state).slice(0, 8));
	}

	logFile(name: string): string {
		return join(this.logs, `${name}.log`);
	}

	/** Runs `work` holding the workload's lifecycle lock (start, stop, delete, reconcile). */
	withWorkloadLock<T>(name: string, work: () => Promise<T>): Promise<T> {
		return withLock(join(this.locks, name), work);
	}

	/** Removes everything recorded about a workload but its run configuration. */
	async forgetRuntimeState(name: string): Promise<void> {
		const log = this.logFile(name);
		const balancer = balancerFilesOf(this.paths, name);
		await Promise.all([this.statuses.remove(name), this.proxies.remove(name), rm(log, { force: true }), rm(`${log}.1`, { force: true }), rm(balancer.config, { force: true })]);
	}
}
