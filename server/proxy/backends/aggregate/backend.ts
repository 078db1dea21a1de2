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
import type { Exposed, MemberList } from '../../../runspec/aggregationNames.js';
import { approvedNames, sameNames } from '../../../runspec/pins/drift.js';
import type { BackendState, WorkloadStore } from '../../../runspec/store.js';
import type { Backend, ClientSessionSink, UpstreamSession } from '../../core/backend.js';
import { HttpBackend } from '../http.js';
import { limitsOf } from './code/sandbox/limits.js';
import { SandboxPool } from './code/sandbox/pool.js';
import { cosine, Embeddings } from './embeddings.js';
import { LinkTransport } from './link.js';
import { Membership, type Member } from './members.js';
import type { MemberTransport } from './member.js';
import type { MemberContext } from './search.js';
import { AggregateSession, LIST_CHANGED, type ListKind, type SessionBackend } from './session.js';
import { ToolView, type Tool } from './toolView.js';

/** How long a member's pin writes settle before its lists are read again. */
const PINS_SETTLE_MS = 100;

export interface AggregateOptions {
	/** The aggregate workload's name. */
	readonly name: string;
	/** The group it serves. */
	readonly group: string;
	readonly config: AggregationConfig;
	readonly store: WorkloadStore;
	readonly log: Logger;
	/** A Hangar secret's value (the embeddings endpoint's API key). */
	readonly resolveSecret: (name: string) => Promise<string>;
}

export class AggregateBackend implements Backend, SessionBackend {
	state: BackendState = 'connecting';
	detail: string | undefined;
	onStateChange?: (state: BackendState, detail: string | undefined) => void;
	readonly membership: Membership;
	private readonly sessions = new Set<AggregateSession>();
	/** Each member's lists, by `member generation kind capabilities`. */
	private readonly lists = new Map<string, Promise<unknown[]>>();
	/** Counts the changes of `lists` (and late lists' arrivals): a session's tools listed at the same count are current. */
	listsVersion = 0;
	/** How each member's proxy is reached, by `member generation`. */
	private readonly transports = new Map<string, MemberTransport>();
	/** Late lists whose arrival is announced already (announceWhenDone). */
	private readonly announced = new WeakSet<Promise<unknown[]>>();
	/** The latest tool view per client capability set (toolView). */
	private readonly views = new Map<string, ToolView>();
	/** What each member says of itself at initialize, for the search index. */
	private readonly contexts = new Map<string, MemberContext>();
	/** Per `member kind`, the names its pins approve, as last read. */
	private readonly approvedByMember = new Map<string, ReadonlySet<string>>();
	/** Members whose pins changed, each read again once their writes settle. */
	private readonly pinTimers = new Map<string, NodeJS.Timeout>();
	/** The definition notes already logged, so that each is logged once. */
	private readonly logged = new Set<string>();

	/** The sandbox of `run_code`, when code mode is on (`mode: code`, or `code.enabled` beside another mode). */
	readonly sandbox: SandboxPool | undefined;
	/** The embeddings endpoint find_tool blends in, when the aggregation configures one. */
	private readonly embeddings: Embeddings | undefined;
	/** What the status says beside `connected`: per concern, a note or nothing. */
	private readonly notes: { definitions?: string; embeddings?: string } = {};

	constructor(readonly options: AggregateOptions) {
		this.membership = new Membership(options.store, options.group, options.log);
		const config = options.config.mode === 'search' ? options.config.search?.embeddings : undefined;
		const code = options.config.mode === 'code' || options.config.code?.enabled === true;
		this.sandbox = code ? new SandboxPool(limitsOf(options.config.code)) : undefined;
		this.embeddings = config && new Embeddings({ config, resolveSecret: options.resolveSecret, log: options.log, onStatus: (status) => this.note('embeddings', status) });
	}

	async start(): Promise<void> {
		this.membership.onChange = () => void this.membersChanged();
		this.membership.onPinsChanged = (workload) => this.pinsChanged(workload);
		await this.membership.start();
		// Its workers start now, so that the first script finds one warm.
		this.sandbox?.warm();
		this.state = 'connected';
		this.detail = this.noted();
		this.onStateChange?.(this.state, this.detail);
	}

	open(sink: ClientSessionSink): UpstreamSession {
		const session = new AggregateSession(this, sink, () => this.sessions.delete(session));
		this.sessions.add(session);
		return session;
	}

	async close(): Promise<void> {
		this.membership.close();
		this.sandbox?.close();
		for (const timer of this.pinTimers.values()) clearTimeout(timer);
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
			this.listsVersion++;
			list.catch(() => this.lists.get(key) === list && this.lists.delete(key) && this.listsVersion++);
		}
		return list as Promise<T[]>;
	}

	/**
	 * The tools shown to clients that declared `capabilities`, for these member lists: the view
	 * built for the same lists when there is one, else a new one (its notes logged and kept in
	 * the status).
	 */
	toolView(capabilities: string, lists: readonly MemberList<Tool>[]): ToolView {
		const known = this.views.get(capabilities);
		if (known?.isOf(lists)) return known;
		const view = new ToolView(this.options.config, lists, this.contexts);
		this.views.set(capabilities, view);
		for (const clash of view.clashes) this.noteOnce(`tool ${clash.name} is held by ${clash.members.join(' and ')}; conflict manual hides it until one is renamed (aggregation.members.*.overrides)`);
		for (const note of view.notes) this.noteOnce(`tool ${note.tool} of ${note.member} ${note.action === 'repaired' ? 'repaired' : 'left out'}: ${note.reason}`);
		const notes = [...new Set([...this.views.values()].flatMap((each) => each.notes.map((note) => `${note.member}/${note.tool} ${note.action}`)))];
		this.note('definitions', notes.length ? `member tools a validating client would reject: ${notes.join(', ')} (hangar logs ${this.options.name} says why)` : undefined);
		if (this.embeddings) this.embeddings.prepare(view.embeddingKeys(this.embeddings).texts);
		return view;
	}

	/** The tools of `view` that best do `query`: lexically, blended with the embeddings when they answer in time. */
	async find(view: ToolView, query: string, limit: number | undefined): Promise<Exposed<Tool>[]> {
		const embeddings = this.embeddings;
		const vector = embeddings && (await embeddings.query(query));
		if (!embeddings || !vector) return view.index.find(query, limit);
		const { fingerprints } = view.embeddingKeys(embeddings);
		return view.index.find(query, limit, {
			weight: embeddings.weight,
			similarity: (id) => {
				const tool = embeddings.vectorOf(fingerprints[id]!);
				return tool && cosine(tool, vector);
			},
		});
	}

	/** Sets the status note of `concern`, and tells the status when the whole changed. */
	private note(concern: keyof AggregateBackend['notes'], text: string | undefined): void {
		this.notes[concern] = text;
		const detail = this.noted();
		if (detail === this.detail || this.state !== 'connected') return;
		this.detail = detail;
		this.onStateChange?.(this.state, this.detail);
	}

	/** The status notes, as one line. */
	private noted(): string | undefined {
		return [this.notes.definitions, this.notes.embeddings].filter(Boolean).join('; ') || undefined;
	}

	/** What `member` says of itself, from its initialize answer: read by the search index. */
	memberSaid(member: string, context: MemberContext): void {
		this.contexts.set(member, context);
	}

	private noteOnce(line: string): void {
		if (this.logged.has(line)) return;
		this.logged.add(line);
		this.options.log.warn(line);
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
				this.listsVersion++;
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
		this.listsVersion++;
		const method = LIST_CHANGED[kind];
		if (method) for (const session of this.sessions) session.notify(method);
	}

	/** A member's pins changed: its lists are read again (a burst of writes settles first). */
	private pinsChanged(workload: string): void {
		clearTimeout(this.pinTimers.get(workload));
		this.pinTimers.set(
			workload,
			setTimeout(async () => {
				this.pinTimers.delete(workload);
				if (!(await this.membership.members()).has(workload)) return;
				const pins = await this.options.store.pins.get(workload).catch(() => undefined);
				for (const kind of ['tools', 'prompts'] as const) {
					// What the member's proxy serves under `block`: a write that leaves it as it was (an observation recorded) changes nothing here.
					const approved = approvedNames(pins?.[kind]) ?? new Set<string>();
					const key = `${workload} ${kind}`;
					const before = this.approvedByMember.get(key);
					this.approvedByMember.set(key, approved);
					if (!before || !sameNames(before, approved)) this.listChanged(workload, kind);
				}
			}, PINS_SETTLE_MS),
		);
	}

	private async membersChanged(): Promise<void> {
		const members = await this.membership.members();
		for (const key of this.lists.keys()) {
			const [name, generation] = key.split(' ');
			if (members.get(name!)?.generation !== generation) this.lists.delete(key);
		}
		this.listsVersion++;
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
