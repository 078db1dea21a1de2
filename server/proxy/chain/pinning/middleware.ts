/**
 * Tool pinning in the proxy: every `tools/list` and `prompts/list` result the server sends is
 * screened against the workload's pins (runspec/pins) before a client sees it. What was seen is
 * recorded in the pin store, for the services to report and approve; an approval written there
 * reaches this process through a watch on the store's folder.
 *
 * `block` leaves a changed, new or first-sight-flagged item out of the list and refuses its use
 * (`tools/call`, `prompts/get`) by a lookup in the set of approved names, made when the pins or
 * a list change, never per call; a list naming an item twice is refused whole. `warn` serves
 * everything and logs (and audits) the drift. The middleware sits after the tool filter, so it
 * sees the server's own names.
 *
 * Each list is screened under the capability set of the client it goes to (runspec/pins/
 * capabilities.ts): the one its session declared in `initialize` (seen passing here, or brought
 * by a session another replica opened), or a 2026-07-28 request's own.
 */
import { watch, type FSWatcher } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { ToolPinning } from '../../../../protocol/runConfig.js';
import type { Logger } from '../../../log.js';
import { capabilitySetOf } from '../../../runspec/pins/capabilities.js';
import { approvedNames, sameNames, screen, type Page, type Screening } from '../../../runspec/pins/drift.js';
import { itemWord, LIST_METHODS, USE_METHODS, type PinKind } from '../../../runspec/pins/fingerprint.js';
import type { PinStore, WorkloadPins } from '../../../runspec/pins/store.js';
import type { McpCall, McpMiddleware } from '../chain.js';
import { ErrorCode, errorResponse, META_2026, type JsonRpcResponse } from '../../core/jsonrpc.js';
import type { Auditor } from '../audit/audit.js';

const listKinds = new Map(Object.entries(LIST_METHODS));
const useKinds = new Map(Object.entries(USE_METHODS));
const listMethods = new Map(Object.entries(LIST_METHODS).map(([method, kind]) => [kind, method]));

/** Pages of a list read on a client's behalf before its first use of an item (a bound on a server that pages without end). */
const MAX_SCREENING_PAGES = 20;

export interface PinningOptions {
	readonly workload: string;
	readonly policy: Exclude<ToolPinning, 'off'>;
	readonly store: PinStore;
	readonly log: Logger;
	readonly auditor?: Auditor;
}

export class PinGuard {
	private pins: WorkloadPins = {};
	/** Per kind, the names `block` lets through; undefined before the first list (nothing to compare yet). */
	private readonly approved = new Map<PinKind, ReadonlySet<string> | undefined>();
	/** Each client session's capability set, from its `initialize`. */
	private readonly sets = new WeakMap<object, string>();
	private watcher: FSWatcher | undefined;
	private reload: NodeJS.Timeout | undefined;
	/** Ids of the lists this guard asks for itself (a prefix no client id is expected to carry). */
	private screenings = 0;
	/**
	 * Called when what `block` serves of a kind changed: an approval (over any door, in any
	 * process: it comes through the pin store), a drift or a removal. The proxy tells its client
	 * sessions their list changed, so that clients (an aggregate above, among them) list again.
	 */
	onServedChanged: ((kinds: readonly PinKind[]) => void) | undefined;

	private constructor(private readonly options: PinningOptions) {}

	/** Reads the pins and watches them for approvals. */
	static async start(options: PinningOptions): Promise<PinGuard> {
		const guard = new PinGuard(options);
		await guard.load();
		const folder = options.store.collection.folder;
		await mkdir(folder, { recursive: true, mode: 0o700 });
		const file = options.store.fileName(options.workload);
		guard.watcher = watch(folder, (_event, name) => {
			if (name !== file) return;
			clearTimeout(guard.reload);
			guard.reload = setTimeout(() => void guard.load(), 10);
		});
		guard.watcher.unref();
		return guard;
	}

	close(): void {
		clearTimeout(this.reload);
		this.watcher?.close();
	}

	private async load(): Promise<void> {
		try {
			this.adopt((await this.options.store.get(this.options.workload)) ?? {});
		} catch (error) {
			this.options.log.warn(`cannot read the tool pins: ${(error as Error).message}`);
		}
	}

	private adopt(pins: WorkloadPins): void {
		this.pins = pins;
		const changed: PinKind[] = [];
		for (const kind of ['tools', 'prompts'] as const) {
			const before = this.approved.get(kind);
			const after = approvedNames(pins[kind]);
			this.approved.set(kind, after);
			if (before && !(after && sameNames(before, after))) changed.push(kind);
		}
		if (changed.length && this.options.policy === 'block') this.onServedChanged?.(changed);
	}

	// Not an async function: an approved call goes on with no promise of this middleware's own.
	readonly middleware: McpMiddleware = (call, next) => {
		const { method } = call.request;
		const useKind = useKinds.get(method);
		if (useKind) {
			const name = call.request.params?.name;
			if (this.options.policy === 'block' && typeof name === 'string' && !this.isApproved(useKind, name)) return this.useUnapproved(useKind, name, call, next);
			return next(call);
		}
		const listKind = listKinds.get(method);
		if (listKind) return next(call).then((response) => this.screenList(listKind, call, response));
		if (method === 'initialize') this.sets.set(call.session, capabilitySetOf(call.request.params?.capabilities));
		return next(call);
	};

	/** A use of an item not approved (yet): refused, unless its client's list, read now, approves it. */
	private async useUnapproved(kind: PinKind, name: string, call: McpCall, next: Parameters<McpMiddleware>[1]): Promise<JsonRpcResponse> {
		// A client may use an item without listing first: its capability set's list decides, so read it now.
		if (!this.hasScreened(kind, call)) await this.screenOnBehalf(kind, call, next);
		if (!this.isApproved(kind, name)) return errorResponse(call.request.id, ErrorCode.InvalidParams, this.refusal(kind, name));
		return next(call);
	}

	/** Whether `block` lets `name` through (everything does before the first list: nothing to compare yet). */
	private isApproved(kind: PinKind, name: string): boolean {
		return this.approved.get(kind)?.has(name) ?? true;
	}

	/** Whether a list of `kind` was screened under the capability set of `call`'s client. */
	private hasScreened(kind: PinKind, call: McpCall): boolean {
		return this.pins[kind]?.observed[this.setOf(call)] !== undefined;
	}

	/** Reads and screens the list of `kind` the server gives `call`'s client, every page of it. */
	private async screenOnBehalf(kind: PinKind, call: McpCall, next: Parameters<McpMiddleware>[1]): Promise<void> {
		const meta = call.request.params?._meta;
		let cursor: unknown;
		for (let page = 0; page < MAX_SCREENING_PAGES; page++) {
			const params = { ...(meta === undefined ? {} : { _meta: meta }), ...(cursor === undefined ? {} : { cursor }) };
			const request = { jsonrpc: '2.0' as const, id: `hangar-pins-${++this.screenings}`, method: listMethods.get(kind)!, params };
			const listing: McpCall = { ...call, request, accepted: undefined };
			const response = await this.screenList(kind, listing, await next(listing));
			cursor = response.result?.nextCursor;
			if (cursor === undefined || response.error) return;
		}
	}

	/** The capability set of the client a list goes to. */
	private setOf(call: McpCall): string {
		const claimed = (call.request.params?._meta as Record<string, unknown> | undefined)?.[META_2026.clientCapabilities];
		if (claimed !== undefined) return capabilitySetOf(claimed);
		let set = this.sets.get(call.session);
		if (set === undefined) {
			set = capabilitySetOf(call.session.handshake?.capabilities);
			this.sets.set(call.session, set);
		}
		return set;
	}

	private refusal(kind: PinKind, name: string): string {
		const workload = this.options.workload;
		return `${itemWord(kind)} ${name} of ${workload} is not approved: it changed or is new since its definition was pinned (Hangar tool pinning). Review it with \`hangar tools diff ${workload} ${name}\` and approve it with \`hangar tools approve ${workload} ${name}\`.`;
	}

	private async screenList(kind: PinKind, call: McpCall, response: JsonRpcResponse): Promise<JsonRpcResponse> {
		const items = response.result?.[kind];
		if (!Array.isArray(items)) return response;
		const page = { first: call.request.params?.cursor === undefined, last: response.result?.nextCursor === undefined };
		const now = new Date().toISOString();
		const set = this.setOf(call);
		let screening = screen(kind, items, this.pins[kind], set, page, now);
		if (screening.changed) screening = await this.record(kind, items, set, page, now, screening, call);
		if (this.options.policy === 'warn') return response;
		if (screening.duplicates.length) {
			return errorResponse(call.request.id, ErrorCode.InternalError, `the server of ${this.options.workload} lists the ${itemWord(kind)} ${screening.duplicates.join(', ')} more than once; Hangar refuses its ${kind} list until it stops (tool pinning)`);
		}
		if (!screening.drifted.length) return response;
		const served = items.filter((item: { name?: unknown }) => screening.approved.has(item?.name as string));
		return { ...response, result: { ...response.result, [kind]: served } };
	}

	/** Writes what was seen (screened again under the store's lock, against an approval made meanwhile), and tells of the drift. */
	private async record(kind: PinKind, items: readonly Record<string, unknown>[], set: string, page: Page, now: string, screened: Screening, call: McpCall): Promise<Screening> {
		const { store, workload, log } = this.options;
		let screening = screened;
		try {
			let latest: WorkloadPins = {};
			await store.change(workload, (current) => {
				latest = current ?? {};
				screening = screen(kind, items, latest[kind], set, page, now);
				return screening.changed ? (latest = { ...latest, [kind]: screening.record }) : undefined;
			});
			this.adopt(latest);
		} catch (error) {
			log.warn(`cannot record the ${kind} list: ${(error as Error).message}`);
		}
		if (screening.drifted.length || screening.duplicates.length) {
			const observed = screening.record.observed[set]?.items ?? {};
			const described = screening.drifted.map((name) => {
				const flags = observed[name]?.flags?.map((flag) => flag.rule) ?? [];
				return `${name} (${screening.record.pinned[name] ? 'changed' : 'new'}${flags.length ? `; flagged: ${flags.join(', ')}` : ''})`;
			});
			const action = this.options.policy === 'block' ? 'blocked until approved' : 'served (tool_pinning: warn)';
			log.warn(`${kind} differ from their pins, ${action}: ${[...described, ...screening.duplicates.map((name) => `${name} (listed twice)`)].join('; ')}; review with \`hangar tools diff ${workload}\``);
			this.options.auditor?.callEvent(call, 'mcp_tool_drift', this.options.policy === 'block' ? 'denied' : 'success', {
				kind,
				drifted: screening.drifted,
				duplicates: screening.duplicates,
				flags: Object.fromEntries(screening.drifted.map((name) => [name, observed[name]?.flags ?? []])),
				policy: this.options.policy,
			});
		}
		return screening;
	}
}
