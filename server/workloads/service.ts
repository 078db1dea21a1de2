/**
 * The workloads service: creates workloads (run configuration, image, container, proxy),
 * reports them, and stops, restarts, updates and deletes them.
 *
 * Reads are answered here, by the observer (what runs), the pin review and the views of
 * views.ts. Changes are made by the parts of changes.ts, loaded on the first one: a command
 * that only reads (`hangar ls`, `info`, `logs`) starts without their code.
 */
import { readFile } from 'node:fs/promises';
import { HangarError } from '../../protocol/errors.js';
import type { WorkloadDetail, WorkloadPinsResult, WorkloadSignInResult, WorkloadStats, WorkloadSummary } from '../../protocol/protocol.workloads.js';
import type { OperationContext } from '../context.js';
import { DEFAULT_GROUP } from '../groups/store.js';
import { aggregatedGroupOf } from '../runspec/aggregation.js';
import { backendInstancesOf, instanceContainerName } from '../runspec/instances.js';
import { PinningDefault } from '../runspec/pins/policy.js';
import { isSignInState, WorkloadStore } from '../runspec/store.js';
import { clientTransportOf, type ClientTransport } from '../runspec/urls.js';
import type { Runtime } from '../runtime/runtime.js';
import type { WorkloadChanges } from './changes.js';
import type { CreateRequest, UpdateRequest } from './config.js';
import type { WorkloadSelection, WorkloadServiceOptions } from './dependencies.js';
import { mergedLogs } from './logs.js';
import { WorkloadObserver } from './observer.js';
import { PinReview } from './pins.js';
import { effectiveStatus, type EffectiveStatus } from './status.js';
import { detailOf, exportedRunConfig } from './views.js';

const LOG_LINES = 1000;

export type { GroupDirectory, WorkloadSelection, WorkloadServiceOptions } from './dependencies.js';

/** A running workload as registered clients reference it. */
export interface WorkloadEndpoint {
	readonly name: string;
	readonly group: string;
	readonly url: string;
	readonly transport: ClientTransport;
	/** The group an aggregate serves. */
	readonly aggregates?: string;
}

export class WorkloadService {
	readonly store: WorkloadStore;
	private readonly runtime: Runtime;
	private readonly observer: WorkloadObserver;
	private readonly pins: PinReview;
	private changing?: Promise<WorkloadChanges>;

	constructor(private readonly options: WorkloadServiceOptions) {
		this.store = new WorkloadStore(options.environment.paths);
		this.runtime = options.runtime;
		this.observer = new WorkloadObserver(this.store, options.runtime, options.groups);
		this.pins = new PinReview(this.store, new PinningDefault(options.environment.paths));
	}

	// --- Changes: made on the first one (changes.ts) -----------------------------------------

	private changes(): Promise<WorkloadChanges> {
		return (this.changing ??= import('./changes.js').then(({ WorkloadChanges }) => new WorkloadChanges(this.options, this.store, this.observer)));
	}

	/**
	 * Creates a workload. A server that does not come up (its container exits, a remote URL does
	 * not answer) leaves the workload in `error` with the reason, for `logs` and `edit`; a
	 * failure or a cancellation before that leaves nothing behind.
	 */
	async create(request: CreateRequest, context: OperationContext): Promise<{ name: string; port: number }> {
		return (await this.changes()).create(request, context);
	}

	/**
	 * Recreates a workload with a new configuration, keeping its port unless another is asked
	 * for. Transactional: the old one is put back when the new one fails to start.
	 */
	async update(request: UpdateRequest, context: OperationContext): Promise<{ name: string; port: number }> {
		return (await this.changes()).update(request, context);
	}

	async stop(name: string): Promise<void> {
		return (await this.changes()).stop(name);
	}

	async restart(name: string): Promise<void> {
		return (await this.changes()).restart(name);
	}

	async delete(name: string): Promise<void> {
		return (await this.changes()).delete(name);
	}

	async stopMany(selection: WorkloadSelection): Promise<void> {
		return (await this.changes()).stopMany(selection);
	}

	async restartMany(selection: WorkloadSelection): Promise<void> {
		return (await this.changes()).restartMany(selection);
	}

	async deleteMany(selection: WorkloadSelection): Promise<void> {
		return (await this.changes()).deleteMany(selection);
	}

	/** A group is being deleted: its workloads move to `default`, or are deleted with it. */
	async releaseGroup(group: string, deleteWorkloads: boolean): Promise<void> {
		return (await this.changes()).releaseGroup(group, deleteWorkloads);
	}

	/**
	 * Brings workloads back to what was asked of them, after a crash, a reboot or a daemon
	 * restart (see reconcile.ts).
	 */
	async reconcile(): Promise<void> {
		return (await this.changes()).reconcile();
	}

	/** Runs `reconcile` in the background (daemon and `hangar serve` start-up). */
	startReconcile(): void {
		this.changes().then((changes) => changes.startReconcile(), this.reportFailure('reconcile'));
	}

	/** Announces status changes other processes make, and tool drift, as `workloads/didChange` too. */
	watchStatuses(): void {
		this.changes().then((changes) => changes.watch(), this.reportFailure('watching statuses'));
	}

	private reportFailure(task: string): (error: Error) => void {
		return (error) => this.options.environment.log.error(`${task}: ${error.message}`);
	}

	/** Resolves once the background work started so far is done. */
	async idle(): Promise<void> {
		if (this.changing) await (await this.changing).idle();
	}

	// --- Reads -------------------------------------------------------------------------------

	async list(params: { all?: boolean; group?: string }): Promise<{ workloads: WorkloadSummary[] }> {
		const listed = await this.observer.listed(params);
		return { workloads: listed.map(({ summary }) => summary) };
	}

	async get(name: string): Promise<WorkloadDetail> {
		return detailOf(await this.observer.require(name));
	}

	async export(name: string): Promise<Record<string, unknown>> {
		return exportedRunConfig(await this.observer.require(name));
	}

	async status(name: string): Promise<EffectiveStatus> {
		const config = await this.observer.require(name);
		return effectiveStatus(config, await this.observer.observe(config));
	}

	/**
	 * The server's last output: a stdio server's stderr only, since its stdout is the MCP traffic
	 * itself (answers, tool results, whatever a tool echoes). A workload of several server instances (`backend_replicas`) gives
	 * every instance's, merged in time, each line after its container's name (`name-2 | …`), as
	 * `docker compose logs` shows them.
	 */
	async logs(name: string): Promise<string> {
		const config = await this.observer.require(name);
		if (!config.container_name) {
			const kind = aggregatedGroupOf(config) === undefined ? 'a remote server' : 'an aggregate';
			throw HangarError.notFound(`workload ${name} is ${kind} and has no container logs; see its proxy logs`, 'no_container');
		}
		const instances = backendInstancesOf(config);
		const stderrOnly = config.transport === 'stdio';
		if (instances === 1) {
			const container = await this.runtime.inspect(config.container_name);
			if (!container) throw HangarError.notFound(`the container of workload ${name} is gone`, 'container_not_found');
			return this.runtime.logs(container.id, LOG_LINES, { stderrOnly });
		}
		const read = Array.from({ length: instances }, async (_, index) => {
			const container = await this.runtime.inspect(instanceContainerName(config, index + 1));
			// An instance the engine is replacing has no container for a moment: the others still tell.
			return container && { container: container.name, text: await this.runtime.logs(container.id, LOG_LINES, { timestamps: true, stderrOnly }) };
		});
		const outputs = (await Promise.all(read)).filter((output) => output !== undefined);
		if (!outputs.length) throw HangarError.notFound(`the containers of workload ${name} are gone`, 'container_not_found');
		return mergedLogs(outputs, LOG_LINES);
	}

	async proxyLogs(name: string): Promise<string> {
		await this.observer.require(name);
		let text: string;
		try {
			text = await readFile(this.store.logFile(name), 'utf8');
		} catch {
			throw HangarError.notFound(`no proxy log for workload ${name}`, 'log_not_found');
		}
		const lines = text.split('\n');
		if (lines.at(-1) === '') lines.pop();
		return lines.slice(-LOG_LINES).map((line) => `${line}\n`).join('');
	}

	async signIn(name: string, params: { device?: boolean; wait?: number }, context?: OperationContext): Promise<WorkloadSignInResult> {
		const [{ signIn }, config] = await Promise.all([import('./signIn.js'), this.observer.require(name)]);
		return signIn(this.store, config, params, context?.signal);
	}

	async stats(name: string, window?: number, context?: OperationContext): Promise<WorkloadStats> {
		const [{ readStats }, config] = await Promise.all([import('./stats.js'), this.observer.require(name)]);
		return readStats(this.store, config, window, context?.signal);
	}

	/** Each tool and prompt against its pin (tool pinning). */
	async tools(name: string): Promise<WorkloadPinsResult> {
		return this.pins.review(await this.observer.require(name));
	}

	/** Re-pins drifted tools and prompts; the workload's proxy serves them again at once. */
	async approveTools(name: string, selection: { tools?: string[]; prompts?: string[] }): Promise<{ name: string; tools: string[]; prompts: string[] }> {
		const config = await this.observer.require(name);
		return this.pins.approve(config, selection);
	}

	/** Running workloads as registered clients reference them (the clients area's port). */
	async listEndpoints(): Promise<WorkloadEndpoint[]> {
		const listed = await this.observer.listed({ all: false });
		return listed
			.filter(({ summary }) => summary.status === 'running' || isSignInState(summary.status))
			.map(({ config, summary }) => {
				const aggregates = aggregatedGroupOf(config);
				return { name: summary.name, group: summary.group ?? DEFAULT_GROUP, url: summary.url!, transport: clientTransportOf(config), ...(aggregates === undefined ? {} : { aggregates }) };
			});
	}
}
