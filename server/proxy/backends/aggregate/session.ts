/**
 * One client session of an aggregate: it answers the client itself (initialize, the lists, the
 * search tools) and routes each call by its exposed name to the member holding it, over a
 * session to the member's proxy (member.ts) opened when first needed and closed with it.
 *
 * Member sessions declare the client capabilities the client declared that let a server ask
 * its client things (RELAYED): a member's request to the client reaches this client, on the
 * stream of the call that caused it when it came with one, under an id of this session's own
 * (two members' ids may be equal), and the client's answer goes back to that member under its.
 * Nothing a member sends on one client's behalf reaches another: each client session has
 * member sessions of its own.
 */
import type { AggregationConfig } from '../../../../protocol/runConfig.js';
import type { Logger } from '../../../log.js';
import { VERSION } from '../../../version.js';
import type { CallOrigin, ClientSessionSink, UpstreamSession } from '../../core/backend.js';
import { CallTable } from '../../core/callTable.js';
import {
	canonicalJson,
	ErrorCode,
	errorResponse,
	isRequest,
	isResponse,
	SUPPORTED_PROTOCOL_VERSIONS,
	type JsonRpcMessage,
	type JsonRpcNotification,
	type JsonRpcRequest,
	type JsonRpcResponse,
	type RequestId,
} from '../../core/jsonrpc.js';
import { tagsOf } from '../../core/tags.js';
import { MemberSession, type ClientCall, type MemberTransport } from './member.js';
import type { Member, Membership } from './members.js';
import { resolveNames, type Exposed, type MemberList } from '../../../runspec/aggregationNames.js';
import { within } from '../../../within.js';
import { CALL_TOOL, DEFAULT_LIMIT, FIND_TOOL, foundResult, MAX_LIMIT, SEARCH_TOOLS, type MemberContext } from './search.js';
import { RUN_CODE, runCode, runCodeTool } from './code/runCode.js';
import { compositeDefinition, runComposite } from './composite.js';
import { Cancellation, type CancelSignal } from './cancellation.js';
import type { SandboxPool } from './code/sandbox/pool.js';
import type { Tool, ToolsSeen, ToolView } from './toolView.js';

/** How long a list waits for each member: one slow member costs only its own items. */
const MEMBER_WAIT_MS = Number(process.env.HANGAR_AGGREGATE_MEMBER_WAIT_MS) || 5_000;
/**
 * How long a member's list is waited for in the background after a list stopped waiting: an
 * answer within it is cached and announced; a member that never answers is asked again after it.
 */
const LATE_LIST_MS = 60_000;
/** The client capabilities a member session declares when the client did: those by which a server asks its client things. */
const RELAYED = ['sampling', 'elicitation', 'roots'];

export type ListKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** The list methods, the result field holding their items, and the notification that says they changed. */
const LISTS: Record<ListKind, { method: string; field: string }> = {
	tools: { method: 'tools/list', field: 'tools' },
	prompts: { method: 'prompts/list', field: 'prompts' },
	resources: { method: 'resources/list', field: 'resources' },
	resourceTemplates: { method: 'resources/templates/list', field: 'resourceTemplates' },
};

export const LIST_CHANGED: Partial<Record<ListKind, string>> = {
	tools: 'notifications/tools/list_changed',
	prompts: 'notifications/prompts/list_changed',
	resources: 'notifications/resources/list_changed',
};

/** A member's list_changed, and the lists it says changed. */
const CHANGED_LISTS: Record<string, ListKind[]> = {
	'notifications/tools/list_changed': ['tools'],
	'notifications/prompts/list_changed': ['prompts'],
	'notifications/resources/list_changed': ['resources', 'resourceTemplates'],
};

interface Named {
	readonly name: string;
	readonly description?: string;
}
interface Resource {
	readonly uri: string;
}

/** A member that cannot serve a request, named in the error the client gets. */
class MemberUnavailable extends Error {}

interface MemberConnection {
	readonly generation: string;
	readonly session: Promise<MemberSession>;
}

/** A member's request to the client, until answered: the member, and its id there. */
interface Asked {
	readonly member: MemberSession;
	readonly id: RequestId;
}

type Params = Record<string, unknown> | undefined;

/**
 * What a client session asks of the aggregate's backend (backend.ts), which its sessions share:
 * the settings, the members and how each is reached, their cached lists, the tool views and the
 * search.
 */
export interface SessionBackend {
	readonly options: { readonly name: string; readonly group: string; readonly config: AggregationConfig; readonly log: Logger };
	readonly membership: Pick<Membership, 'members'>;
	transportOf(member: Member): MemberTransport;
	cachedList<T>(member: Member, kind: ListKind, capabilities: string, fetch: () => Promise<T[]>): Promise<T[]>;
	/** Announces `list` to every session when it arrives after the session that asked stopped waiting. */
	announceWhenDone(list: Promise<unknown[]>, kind: ListKind): void;
	/** Changes whenever a member's list may have. */
	readonly listsVersion: number;
	listChanged(member: string, kind: ListKind): void;
	memberSaid(member: string, context: MemberContext): void;
	toolView(capabilities: string, lists: readonly MemberList<Tool>[]): ToolView;
	find(view: ToolView, query: string, limit: number | undefined): Promise<Exposed<Tool>[]>;
	/** The sandbox of `run_code` scripts, when code mode is on. */
	readonly sandbox: SandboxPool | undefined;
}

export class AggregateSession implements UpstreamSession {
	/** Scripts and composite tools call member tools back through the chain. */
	readonly reenters = true;
	private readonly connections = new Map<string, MemberConnection>();
	/** Client requests in flight, so the client's cancellation reaches the member. */
	private readonly calls = new CallTable<CallInFlight>();
	/** The tools this client was shown last, and the backend's `listsVersion` they were listed at. */
	private tools: ToolView | undefined;
	private toolsVersion = -1;
	private prompts = new Map<string, Exposed<Named>>();
	private resources = new Map<string, string>();
	private closed = false;
	/** What of RELAYED the client declared at initialize, and its canonical JSON (the list cache's key). */
	private capabilities: Record<string, unknown> = {};
	private capabilitiesKey = '{}';
	/** Members' requests the client has not answered, by the id it knows them by. */
	private readonly asked = new CallTable<Asked>();
	private nextAsked = 1;
	/** The ids of the calls this session's scripts made back through the chain, while in flight. */
	private readonly inner = new Set<RequestId>();
	private nextInner = 1;
	/** This session's own requests to the client (a composite tool's elicitation), until answered. */
	private readonly elicitations = new CallTable<{ resolve: (result: Record<string, unknown>) => void; reject: (error: Error) => void }>();

	constructor(
		private readonly backend: SessionBackend,
		private readonly sink: ClientSessionSink,
		private readonly forget: () => void,
	) {}

	private get config() {
		return this.backend.options.config;
	}

	/**
	 * Answers a client request. `signal` is the client session's, shared by its calls: one call is
	 * given up by `cancel`, which needs no signal or listener per call (see core/backend.ts).
	 */
	request(message: JsonRpcRequest, signal: AbortSignal, origin?: CallOrigin): Promise<JsonRpcResponse> {
		return new Promise((resolve) => {
			const call: CallInFlight = { id: message.id, answer: resolve };
			this.calls.set(message.id, call);
			this.answer(message, signal, call, origin).then(
				(result) => resolve(result instanceof Refusal ? { jsonrpc: '2.0', id: message.id, error: result.error } : { jsonrpc: '2.0', id: message.id, result }),
				(error: unknown) => resolve(errorResponse(message.id, error instanceof MemberUnavailable ? ErrorCode.ConnectionClosed : ErrorCode.InternalError, (error as Error).message)),
			).finally(() => {
				// What a member asked while the call was in flight stays to be answered: a request it
				// tied to the call may have another cause (a stdio server's roots/list after the
				// client's roots/list_changed), and the member waits for the answer either way.
				if (this.calls.get(message.id) === call) this.calls.delete(message.id);
			});
		});
	}

	/** Gives up the client's request `id`: the client is answered at once, the member told. */
	cancel(id: RequestId, reason: string): void {
		const call = this.calls.get(id);
		if (!call) return;
		this.calls.delete(id);
		call.sent?.session.cancel(call.sent.id, reason);
		call.abort?.abort();
		call.answer(errorResponse(id, ErrorCode.RequestTimeout, `request cancelled: ${reason}`));
	}

	send(message: JsonRpcNotification | JsonRpcResponse): void | Promise<void> {
		if (isResponse(message)) {
			const elicitation = message.id === null ? undefined : this.elicitations.get(message.id);
			if (elicitation) {
				this.elicitations.delete(message.id!);
				if (message.error) elicitation.reject(new Error(message.error.message));
				else elicitation.resolve(message.result ?? {});
				return;
			}
			// The client's answer to a member's request.
			const asked = message.id === null ? undefined : this.asked.get(message.id);
			if (!asked) return;
			this.asked.delete(message.id!);
			return asked.member.send({ ...message, id: asked.id });
		}
		if (message.method === 'notifications/cancelled') {
			const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
			if (id !== undefined) this.cancel(id, 'cancelled by the client');
		} else if (message.method === 'notifications/roots/list_changed') {
			return this.toMembers(message);
		}
	}

	/** A client notification every open member session hears. */
	private async toMembers(message: JsonRpcNotification): Promise<void> {
		const sessions = [...this.connections.values()].map((connection) => connection.session.catch(() => undefined));
		await Promise.all(sessions.map(async (session) => (await session)?.send(message)));
	}

	close(): void {
		if (this.closed) return;
		this.closed = true;
		for (const [id] of this.calls.entries()) this.cancel(id, 'the session closed');
		for (const [id, elicitation] of this.elicitations.entries()) {
			this.elicitations.delete(id);
			elicitation.reject(new Error('the session closed'));
		}
		for (const name of [...this.connections.keys()]) this.disconnect(name);
		this.forget();
	}

	/** A notification to the client, unrelated to any request. */
	notify(method: string): void {
		if (!this.closed) this.sink.deliver({ jsonrpc: '2.0', method });
	}

	/** Member sessions of members gone, stopped or restarted end. */
	membersChanged(members: ReadonlyMap<string, Member>): void {
		for (const [name, connection] of this.connections) if (members.get(name)?.generation !== connection.generation) this.disconnect(name);
	}

	private async answer(message: JsonRpcRequest, signal: AbortSignal, call: CallInFlight, origin: CallOrigin | undefined): Promise<Record<string, unknown> | Refusal> {
		const params = message.params;
		switch (message.method) {
			case 'initialize':
				return this.initialize(params);
			case 'ping':
				return {};
			case 'tools/list':
				return { tools: await this.toolsListed(signal, origin) };
			case 'tools/call':
				return this.callTool(message.id, params, signal, call, origin);
			case 'prompts/list':
				return { prompts: (await this.listPrompts(signal)).map((exposed) => exposed.item) };
			case 'prompts/get': {
				const name = String(params?.name ?? '');
				const route = this.prompts.get(name) ?? (await this.listPrompts(signal, LATE_LIST_MS), this.prompts.get(name));
				if (!route) return invalidParams(`Unknown prompt: ${name}`);
				return this.forward(route.member, 'prompts/get', { ...params, name: route.original }, signal, call);
			}
			case 'resources/list':
				return { resources: await this.listResources(signal) };
			case 'resources/templates/list':
				return { resourceTemplates: (await this.lists<Resource>('resourceTemplates', signal)).flatMap((list) => list.items) };
			case 'resources/read': {
				const uri = String(params?.uri ?? '');
				const member = this.resources.get(uri) ?? (await this.listResources(signal, LATE_LIST_MS), this.resources.get(uri));
				// SEP-2164: an unknown resource is Invalid Params, naming the URI (not the older -32002).
				if (!member) return new Refusal({ code: ErrorCode.InvalidParams, message: `Resource not found: ${uri}`, data: { uri } });
				return this.forward(member, 'resources/read', params, signal, call);
			}
			default:
				return new Refusal({ code: ErrorCode.MethodNotFound, message: `Method not found: ${message.method}` });
		}
	}

	private initialize(params: Params): Record<string, unknown> {
		const declared = (params?.capabilities ?? {}) as Record<string, unknown>;
		this.capabilities = Object.fromEntries(RELAYED.filter((name) => declared[name] !== undefined).map((name) => [name, declared[name]]));
		this.capabilitiesKey = canonicalJson(this.capabilities);
		const asked = String(params?.protocolVersion ?? '');
		return {
			protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : SUPPORTED_PROTOCOL_VERSIONS.at(-1),
			capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true } },
			serverInfo: { name: `hangar-aggregate-${this.backend.options.name}`, version: VERSION },
			instructions: `The workloads of Hangar group ${this.backend.options.group} as one server.`,
		};
	}

	/** What `tools/list` shows: the tools of the mode, and run_code (naming the tools the caller may call) when code mode is on. */
	private async toolsListed(signal: AbortSignal, origin: CallOrigin | undefined): Promise<unknown[]> {
		const { mode } = this.config;
		const view = mode === 'search' && !this.backend.sandbox ? undefined : await this.listTools(signal);
		const own = mode === 'search' ? SEARCH_TOOLS : mode === 'code' ? [] : view!.exposed.map((exposed) => exposed.item);
		const composites = this.config.composite_tools ?? [];
		const compositeView = composites.length ? (view ?? (await this.listTools(signal))) : undefined;
		return [...own, ...(view && this.backend.sandbox ? [runCodeTool(seenBy(view, origin))] : []), ...composites.map((tool) => compositeDefinition(tool, compositeView!))];
	}

	private async callTool(id: RequestId, params: Params, signal: AbortSignal, call: CallInFlight, origin: CallOrigin | undefined): Promise<Record<string, unknown> | Refusal> {
		let name = String(params?.name ?? '');
		let args = params?.arguments;
		// A script's call: by exposed name, whatever the mode, and never run_code again.
		const fromScript = this.inner.has(id);
		if (fromScript && name === RUN_CODE) return invalidParams(`${RUN_CODE} cannot be called from a script`);
		if (!fromScript && name === RUN_CODE && this.backend.sandbox) {
			if (!origin) return invalidParams(`${RUN_CODE} is not available here`);
			return this.runScript(params, signal, call, origin);
		}
		const composite = fromScript ? undefined : this.config.composite_tools?.find((tool) => tool.name === name);
		if (composite) {
			if (!origin) return invalidParams(`${name} is not available here`);
			const view = await this.currentTools(signal);
			const abort = new Cancellation();
			call.abort = abort;
			const given = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
			const report = this.progress(params, call);
			return runComposite(
				composite,
				given,
				{
					view,
					call: this.innerCaller(origin, view, signal, abort),
					elicit: (text, schema) => this.elicit(call, text, schema),
					progressed: report && ((finished, total) => report(finished, total, `${finished} of ${total} steps done`)),
				},
				abort,
			);
		}
		if (!fromScript && this.config.mode === 'code') return invalidParams(`Unknown tool: ${name} (this aggregate lists only ${RUN_CODE})`);
		if (!fromScript && this.config.mode === 'search') {
			if (name === FIND_TOOL) return this.findTool(params?.arguments as Params, signal);
			if (name !== CALL_TOOL) return invalidParams(`Unknown tool: ${name} (this aggregate lists only ${FIND_TOOL} and ${CALL_TOOL})`);
			const inner = params?.arguments as Params;
			name = String(inner?.name ?? '');
			args = inner?.arguments ?? {};
		}
		const route = this.tools?.get(name) ?? (await this.listTools(signal, LATE_LIST_MS)).get(name);
		if (!route) {
			const closest = this.tools?.closest(name) ?? [];
			return invalidParams(`Unknown tool: ${name}${closest.length ? `; the closest this aggregate has: ${closest.join(', ')}` : ''}${this.config.mode === 'search' ? ` (${FIND_TOOL} finds tools by what they do)` : ''}`);
		}
		return this.forward(route.member, 'tools/call', { ...params, name: route.original, arguments: args }, signal, call);
	}

	/**
	 * Runs a `run_code` call: each of the script's tool calls goes back through the proxy's chain
	 * as a call of its own (authorization, rate limits, audit, telemetry); the script sees, finds
	 * and describes only the tools the caller may call; the client's cancellation ends the script
	 * and gives up its calls in flight; a client that asked for progress hears of each call finished.
	 */
	private async runScript(params: Params, signal: AbortSignal, call: CallInFlight, origin: CallOrigin): Promise<Record<string, unknown>> {
		const view = await this.currentTools(signal);
		const seen = seenBy(view, origin);
		const abort = new Cancellation();
		call.abort = abort;
		const report = this.progress(params, call);
		// A search over the whole view, then only what the caller may call: as many as asked for, if there are.
		const find = async (query: string, limit: number | undefined) =>
			seen === view ? this.backend.find(view, query, limit) : (await this.backend.find(view, query, MAX_LIMIT)).flatMap((tool) => seen.seen(tool) ?? []).slice(0, limit ?? DEFAULT_LIMIT);
		return runCode(
			this.backend.sandbox!,
			(params?.arguments as Params)?.code,
			{
				view: seen,
				find,
				progressed: report && ((finished) => report(finished, undefined, `${finished} tool call${finished === 1 ? '' : 's'} done`)),
				call: this.innerCaller(origin, seen, signal, abort),
			},
			abort,
		);
	}

	/** Tells the client of `call`'s progress, when it asked with a progressToken. */
	private progress(params: Params, call: CallInFlight): ((progress: number, total: number | undefined, message: string) => void) | undefined {
		const progressToken = (params?._meta as { progressToken?: unknown } | undefined)?.progressToken;
		if (typeof progressToken !== 'string' && typeof progressToken !== 'number') return undefined;
		return (progress, total, message) =>
			this.sink.deliver({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress, ...(total === undefined ? {} : { total }), message } }, call.id);
	}

	/**
	 * How a script or composite tool calls a tool: a `tools/call` of its own back through the
	 * chain (`origin`), under an id this session knows as a script's, naming the tool's
	 * annotations in `view` for authorization; `cancelled` gives up those in flight.
	 */
	private innerCaller(origin: CallOrigin, view: ToolsSeen, signal: AbortSignal, cancelled: CancelSignal): (name: string, args: Record<string, unknown>) => Promise<JsonRpcResponse> {
		const inFlight = new Set<RequestId>();
		cancelled.addEventListener('abort', () => inFlight.forEach((id) => this.cancel(id, 'the call that made it was cancelled')));
		return async (name, args) => {
			const id = `hangar-script-${this.nextInner++}`;
			this.inner.add(id);
			inFlight.add(id);
			try {
				return await origin.reenter({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, signal, { annotations: view.get(name)?.item.annotations });
			} finally {
				this.inner.delete(id);
				inFlight.delete(id);
			}
		};
	}

	/** Asks the client through MCP elicitation, for the call `call` (a composite tool's elicitation step). */
	private elicit(call: CallInFlight, message: string, requestedSchema: Record<string, unknown>): Promise<{ action: string; content?: Record<string, unknown> }> {
		if (this.capabilities.elicitation === undefined) return Promise.reject(new Error('the client cannot be asked: it declared no elicitation capability'));
		const id = `hangar-elicit-${this.nextAsked++}`;
		return new Promise((resolve, reject) => {
			this.elicitations.set(id, { resolve: (result) => resolve({ action: String(result.action ?? 'cancel'), content: result.content as Record<string, unknown> | undefined }), reject });
			this.sink.deliver({ jsonrpc: '2.0', id, method: 'elicitation/create', params: { message, requestedSchema } }, call.id);
		});
	}

	private async findTool(args: Params, signal: AbortSignal): Promise<Record<string, unknown> | Refusal> {
		const query = args?.query;
		if (typeof query !== 'string' || !query.trim()) return invalidParams(`${FIND_TOOL} needs a query: the task, in a few words`);
		const limit = args?.limit;
		if (limit !== undefined && !(typeof limit === 'number' && Number.isInteger(limit) && limit >= 1)) return invalidParams(`${FIND_TOOL}'s limit must be a whole number from 1 to ${MAX_LIMIT}`);
		const view = await this.listTools(signal);
		const found = (await this.backend.find(view, query, limit)).map(({ name, member, item }) => ({ name, member, ...(item.title ? { title: item.title } : {}), description: item.description, inputSchema: item.inputSchema, ...(item.annotations ? { annotations: item.annotations } : {}) }));
		return foundResult(found);
	}

	private async listTools(signal: AbortSignal, wait?: number): Promise<ToolView> {
		const version = this.backend.listsVersion;
		this.tools = this.backend.toolView(this.capabilitiesKey, await this.lists<Tool>('tools', signal, wait));
		this.toolsVersion = version;
		return this.tools;
	}

	/** The tools as listed last while no member's list changed since (what a script sees, without listing on every call); else listed again. */
	private currentTools(signal: AbortSignal): Promise<ToolView> {
		return this.tools && this.toolsVersion === this.backend.listsVersion ? Promise.resolve(this.tools) : this.listTools(signal);
	}

	private async listPrompts(signal: AbortSignal, wait?: number): Promise<readonly Exposed<Named>[]> {
		const { exposed } = resolveNames(this.config, await this.lists<Named>('prompts', signal, wait), false);
		this.prompts = new Map(exposed.map((prompt) => [prompt.name, prompt]));
		return exposed;
	}

	/** Resources keep their URIs: one two members serve is read from the first in priority order, then by name. */
	private async listResources(signal: AbortSignal, wait?: number): Promise<Resource[]> {
		const priority = this.config.priority ?? [];
		const rank = (member: string) => (priority.includes(member) ? priority.indexOf(member) : priority.length);
		const lists = (await this.lists<Resource>('resources', signal, wait)).sort((a, b) => rank(a.member) - rank(b.member) || (a.member < b.member ? -1 : 1));
		const owners = new Map<string, string>();
		const resources: Resource[] = [];
		for (const { member, items } of lists) {
			for (const resource of items) {
				const owner = owners.get(resource.uri);
				if (owner) {
					this.backend.options.log.warn(`resource ${resource.uri} is served by ${owner} and ${member}: ${owner}'s is shown`);
					continue;
				}
				owners.set(resource.uri, member);
				resources.push(resource);
			}
		}
		this.resources = owners;
		return resources;
	}

	/**
	 * Every running member's list of `kind`, in parallel, each waited for at most `wait` ms.
	 * A member slower than that is left out, not cut off: its list is still fetched (shared by the
	 * sessions, so no one client's cancellation ends it), and its answer announced with list_changed.
	 * A name the lists so far do not hold is looked up waiting up to LATE_LIST_MS: a call to a tool
	 * of a member whose session is still starting (a stdio member starts a process for a client
	 * of new capabilities) waits for it rather than failing.
	 */
	private async lists<T>(kind: ListKind, signal: AbortSignal, wait = MEMBER_WAIT_MS): Promise<MemberList<T & { name: string }>[]> {
		const members = [...(await this.backend.membership.members()).values()].filter((member) => member.url);
		const lists = await Promise.all(
			members.map(async (member) => {
				try {
					const list = this.backend.cachedList(member, kind, this.capabilitiesKey, () => this.fetchList<T>(member, kind, AbortSignal.timeout(LATE_LIST_MS)));
					const items = await within(list, wait, undefined, signal);
					if (items === undefined) {
						this.backend.options.log.warn(`${LISTS[kind].method} of ${member.name}: no answer within ${wait} ms; its items are left out until it answers`);
						this.backend.announceWhenDone(list, kind);
						return undefined;
					}
					return { member: member.name, items: items as Array<T & { name: string }> };
				} catch (error) {
					this.backend.options.log.warn(`${LISTS[kind].method} of ${member.name}: ${(error as Error).message}`);
					return undefined;
				}
			}),
		);
		return lists.filter((list) => list !== undefined);
	}

	private async fetchList<T>(member: Member, kind: ListKind, signal: AbortSignal): Promise<T[]> {
		const session = await this.sessionOf(member.name, signal);
		const capability = kind === 'resourceTemplates' ? 'resources' : kind;
		if (!session.capabilities[capability]) return [];
		const { method, field } = LISTS[kind];
		const items: T[] = [];
		let cursor: string | undefined;
		do {
			const page = await this.forward(member.name, method, cursor ? { cursor } : {}, signal);
			if (page instanceof Refusal) throw new Error(page.error.message);
			items.push(...((page[field] as T[] | undefined) ?? []));
			cursor = typeof page.nextCursor === 'string' ? page.nextCursor : undefined;
		} while (cursor);
		return items;
	}

	/**
	 * Sends a request on to `memberName`, on behalf of the client's request `call` when it is one:
	 * what the member sends about it (progress, its requests to the client) reaches the client tied
	 * to that call. The member's own error is the client's; a member that cannot be reached is named.
	 */
	private async forward(memberName: string, method: string, params: Params, signal: AbortSignal, call?: ClientCall): Promise<Record<string, unknown> | Refusal> {
		const session = await this.sessionOf(memberName, signal);
		// Given up while the member session opened: it never goes out.
		if (call && this.calls.get(call.id) !== call) return new Refusal({ code: ErrorCode.RequestTimeout, message: 'request cancelled' });
		const answer = await session.request(method, params, signal, call);
		if (answer.result) return answer.result;
		const error = answer.error ?? { code: ErrorCode.InternalError, message: 'the member answered neither a result nor an error' };
		if (signal.aborted || (error.code !== ErrorCode.ConnectionClosed && !tagsOf(answer)?.connectionFailure)) return new Refusal(error);
		this.disconnect(memberName);
		throw new MemberUnavailable(`workload ${memberName} (a member of group ${this.backend.options.group}) did not answer: ${error.message}`);
	}

	/** The session to `name`'s proxy, opened when first needed. */
	private async sessionOf(name: string, signal: AbortSignal): Promise<MemberSession> {
		const member = (await this.backend.membership.members()).get(name);
		if (!member?.url) {
			throw new MemberUnavailable(
				member ? `workload ${name} (a member of group ${this.backend.options.group}) is not running: start it with hangar start ${name}` : `workload ${name} is no longer a member of group ${this.backend.options.group}`,
			);
		}
		const known = this.connections.get(name);
		if (known && known.generation === member.generation) return known.session;
		if (known) this.disconnect(name);
		const session = this.connect(member, signal);
		this.connections.set(name, { generation: member.generation, session });
		session.catch(() => this.connections.get(name)?.session === session && this.connections.delete(name));
		return session.catch((error: Error) => {
			throw new MemberUnavailable(`cannot reach workload ${name} (a member of group ${this.backend.options.group}): ${error.message}`);
		});
	}

	private async connect(member: Member, signal: AbortSignal): Promise<MemberSession> {
		const session: MemberSession = new MemberSession(this.backend.transportOf(member), {
			message: (message, call) => this.fromMember(member.name, session, message, call),
			// The member's proxy ended it (it restarted, say): the next request opens another.
			ended: () => void this.connections.get(member.name)?.session.then((current) => current === session && this.disconnect(member.name), () => undefined),
		});
		try {
			// Not bounded by MEMBER_WAIT_MS: a stdio member may start a process for this client's capabilities first, and lists wait for it in the background.
			await session.initialize(this.capabilities, signal);
			this.backend.memberSaid(member.name, session.context);
		} catch (error) {
			session.close();
			throw error;
		}
		if (this.closed) {
			session.close();
			throw new Error('the session closed');
		}
		return session;
	}

	/**
	 * What a member sent: its list changes forget its cached lists (every client is told), its
	 * requests reach the client under an id of this session's, the rest (progress, logs) as sent;
	 * each tied to the client's call it is about, if any.
	 */
	private fromMember(memberName: string, session: MemberSession, message: JsonRpcMessage, call: RequestId | undefined): void {
		if (this.closed || isResponse(message)) return;
		if (isRequest(message)) {
			const id = `${memberName}-${this.nextAsked++}`;
			this.asked.set(id, { member: session, id: message.id });
			this.sink.deliver({ ...message, id }, call);
			return;
		}
		const changed = CHANGED_LISTS[message.method];
		if (changed) for (const kind of changed) this.backend.listChanged(memberName, kind);
		else this.sink.deliver(message, call);
	}

	private disconnect(name: string): void {
		const connection = this.connections.get(name);
		if (!connection) return;
		this.connections.delete(name);
		void connection.session.then(
			(session) => {
				for (const [id, asked] of this.asked.entries()) if (asked.member === session) this.asked.delete(id);
				session.close();
			},
			() => undefined,
		);
	}
}

/** A client request in flight: `answer` answers the client (at once, when it is given up); `abort` ends a script it runs. */
interface CallInFlight extends ClientCall {
	readonly answer: (response: JsonRpcResponse) => void;
	abort?: Cancellation;
}

/**
 * The part of `view` the caller of `origin`'s call sees as a `tools/list` of the chain would show
 * it (the tool filter's names and descriptions) and may call (authorization decides); all of it
 * without an origin.
 */
function seenBy(view: ToolView, origin: CallOrigin | undefined): ToolsSeen {
	if (!origin) return view;
	return view.seenBy((tool) => {
		const shown = origin.showTool(tool.item);
		if (!shown || !origin.mayCall(shown.name, tool.item.annotations)) return undefined;
		if (shown.name === tool.name && shown.description === tool.item.description) return tool;
		return { ...tool, name: shown.name, item: { ...tool.item, name: shown.name, description: shown.description } };
	});
}

/** An error the aggregate itself answers with. */
class Refusal {
	constructor(readonly error: { code: number; message: string; data?: unknown }) {}
}

function invalidParams(message: string): Refusal {
	return new Refusal({ code: ErrorCode.InvalidParams, message });
}
