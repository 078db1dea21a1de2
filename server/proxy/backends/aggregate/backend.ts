/**
 * The aggregator: the backend of an aggregate's proxy (image `group://NAME`). Its upstreams are
 * the members' own proxies, reached as MCP clients by each client session (session.ts, over the
 * transport of each member kept here); what they list is cached here, shared by the
 * sessions that declared the same client capabilities (a member may list tools by them), until
 * a member says its list changed or its proxy restarts. A change of members tells every client
 * session its lists changed.
 */
import type { AggregationConfig } from '../../../../protocol/runConfig.js';
import type { Logger } from '../../../log.js';
import type { BackendState, WorkloadStore } from '../../../runspec/store.js';
import type { Backend, ClientSessionSink, UpstreamSession } from '../../core/backend.js';
import { HttpBackend } from '../http.js';
import { LinkTransport } from './link.js';
import { Membership, type Member } from './members.js';
import type { MemberTransport } from './member.js';
import { AggregateSession, LIST_CHANGED, type ListKind } from './session.js';

export interface AggregateOptions {
	/** The aggregate workload's name. */
	readonly name: string;
	/** The group it serves. */
	readonly group: string;
	readonly config: AggregationConfig;
	readonly store: WorkloadStore;
	readonly log: Logger;
}

export class AggregateBackend implements Backend {
	state: BackendState = 'connecting';
	detail: string | undefined;
	onStateChange?: (state: BackendState, detail: string | undefined) => void;
	readonly membership: Membership;
	private readonly sessions = new Set<AggregateSession>();
	/** Each member's lists, by `member generation kind capabilities`. */
	private readonly lists = new Map<string, Promise<unknown[]>>();
	/** How each member's proxy is reached, by `member generation`. */
	private readonly transports = new Map<string, MemberTransport>();
	/** Late lists whose arrival is announced already (announceWhenDone). */
	private readonly announced = new WeakSet<Promise<unknown[]>>();

	constructor(readonly options: AggregateOptions) {
		this.membership = new Membership(options.store, options.group, options.log);
	}

	async start(): Promise<void> {
		this.membership.onChange = () => void this.membersChanged();
		await this.membership.start();
		this.state = 'connected';
		this.detail = undefined;
		this.onStateChange?.(this.state, this.detail);
	}

	open(sink: ClientSessionSink): UpstreamSession {
		const session = new AggregateSession(this, sink, () => this.sessions.delete(session));
		this.sessions.add(session);
		return session;
	}

	async close(): Promise<void> {
		this.membership.close();
		for (const session of this.sessions) session.close();
		for (const transport of this.transports.values()) void transport.close();
		this.transports.clear();
	}

	/**
	 * How `member`'s proxy is reached: by links on its Unix socket when it has one (a call then
	 * costs neither proxy an HTTP request; docs/benchmarks.md), else as a Streamable HTTP client
	 * of its URL, which keeps its connections alive for every session.
	 */
	transportOf(member: Member): MemberTransport {
		const key = `${member.name} ${member.generation}`;
		let transport = this.transports.get(key);
		if (!transport) {
			const url = member.url!;
			transport = member.socket
				? new LinkTransport(member.socket, url)
				: new HttpBackend({ transport: 'streamable-http', locate: async () => url, headers: {}, guardAddresses: false, probe: false, log: this.options.log });
			this.transports.set(key, transport);
		}
		return transport;
	}

	/**
	 * A member's list of `kind` for clients that declared `capabilities` (canonical JSON), from the
	 * cache or fetched with `fetch` (a failure is not kept).
	 */
	cachedList<T>(member: Member, kind: ListKind, capabilities: string, fetch: () => Promise<T[]>): Promise<T[]> {
		const key = `${member.name} ${member.generation} ${kind} ${capabilities}`;
		let list = this.lists.get(key);
		if (!list) {
			list = fetch();
			this.lists.set(key, list);
			list.catch(() => this.lists.get(key) === list && this.lists.delete(key));
		}
		return list as Promise<T[]>;
	}

	/**
	 * A list that came too late for the session that asked: every client is told, once, when it
	 * arrives, while the cache still holds it (a change since then was announced already).
	 */
	announceWhenDone(list: Promise<unknown[]>, kind: ListKind): void {
		if (this.announced.has(list)) return;
		this.announced.add(list);
		list.then(
			() => {
				const method = LIST_CHANGED[kind];
				if (method && [...this.lists.values()].includes(list)) for (const session of this.sessions) session.notify(method);
			},
			() => undefined,
		);
	}

	/** A member said its list of `kind` changed: forgotten, and every client told. */
	listChanged(member: string, kind: ListKind): void {
		for (const key of this.lists.keys()) {
			const [name, , listed] = key.split(' ');
			if (name === member && listed === kind) this.lists.delete(key);
		}
		const method = LIST_CHANGED[kind];
		if (method) for (const session of this.sessions) session.notify(method);
	}

	private async membersChanged(): Promise<void> {
		const members = await this.membership.members();
		for (const key of this.lists.keys()) {
			const [name, generation] = key.split(' ');
			if (members.get(name!)?.generation !== generation) this.lists.delete(key);
		}
		for (const [key, transport] of this.transports) {
			const [name, generation] = key.split(' ');
			if (members.get(name!)?.generation === generation) continue;
			this.transports.delete(key);
			void transport.close();
		}
		this.options.log.info(`members of group ${this.options.group}: ${[...members.values()].map((member) => `${member.name}${member.url ? '' : ' (not running)'}`).join(', ') || 'none'}`);
		for (const session of this.sessions) {
			session.membersChanged(members);
			for (const method of new Set(Object.values(LIST_CHANGED))) session.notify(method);
		}
	}
}
