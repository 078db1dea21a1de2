/**
 * `subscriptions/listen` for 2026-07-28 clients in front of a 2025 server, which has no such
 * method: it announces list changes to every session unasked, and resource updates to the
 * sessions that sent `resources/subscribe`. The proxy answers the listen itself: the stream
 * opens with `notifications/subscriptions/acknowledged` naming what it will carry (what the
 * client asked for and the server's capabilities offer), and the list changes and resource
 * updates the caller's 2025 sessions hear go to that caller's open streams whose filter asks
 * for them, each tagged with the listen's request id as its subscription id. The stream lasts
 * until the client closes it or the session behind it ends.
 */
import type { HttpExchange, McpHandler } from '../chain/chain.js';
import { ErrorCode, errorResponse, isRequest, isResponse, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse, type RequestId } from '../core/jsonrpc.js';
import type { ClientSession } from '../sessions/clientSession.js';
import type { ReplyStream } from '../sessions/streams.js';

/** Where 2026-07-28 names the `subscriptions/listen` request a notification belongs to. */
export const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';
/** The most listen streams one caller may hold open at once. */
export const MAX_LISTENS_PER_CALLER = 16;

/** The notifications a listen filter can ask for, by the filter field and the server capability that offers them. */
const LIST_CHANGES = {
	'notifications/tools/list_changed': { field: 'toolsListChanged', capability: 'tools' },
	'notifications/prompts/list_changed': { field: 'promptsListChanged', capability: 'prompts' },
	'notifications/resources/list_changed': { field: 'resourcesListChanged', capability: 'resources' },
} as const;
const RESOURCE_UPDATED = 'notifications/resources/updated';

/** What a listen carries: the list changes asked for, and the resources whose updates it wants. */
interface Filter {
	toolsListChanged?: true;
	promptsListChanged?: true;
	resourcesListChanged?: true;
	resourceSubscriptions?: string[];
}

interface Listener {
	readonly owner: string;
	readonly session: ClientSession;
	readonly filter: Filter;
	readonly subscriptionId: RequestId;
	readonly reply: ReplyStream;
}

export class Client2026Listens {
	private readonly listeners = new Set<Listener>();
	private nextId = 1;

	constructor(private readonly handle: McpHandler) {}

	/** A 2025 session the bridge opened for `owner`: the changes it hears are for that caller's listen streams. */
	watch(session: ClientSession, owner: string): void {
		// A server found to speak 2026-07-28 after all streams its own listens (client2026.ts forwards them).
		session.claim('listen', (message) => !session.backend.speaks2026 && this.heard(message, owner));
	}

	/**
	 * Answers a `subscriptions/listen` on `session` (the caller's 2025 session, opened with
	 * `handshake`): acknowledges it on `reply`, then resolves once the client hangs up or the
	 * session ends.
	 */
	async listen(exchange: HttpExchange, request: JsonRpcRequest, params: Record<string, unknown>, session: ClientSession, handshake: Record<string, unknown>, owner: string, reply: ReplyStream): Promise<JsonRpcResponse> {
		const asked = params.notifications;
		if (!isFilter(asked)) return errorResponse(request.id, ErrorCode.InvalidParams, 'Invalid params: notifications must be a subscription filter (toolsListChanged, promptsListChanged, resourcesListChanged booleans, resourceSubscriptions an array of URIs)');
		if ([...this.listeners].filter((listener) => listener.owner === owner).length >= MAX_LISTENS_PER_CALLER) {
			return errorResponse(request.id, ErrorCode.LimitReached, `Too many subscriptions: this caller has ${MAX_LISTENS_PER_CALLER} subscriptions/listen streams open, the most it may have`);
		}
		const filter = honored(asked, (handshake.capabilities ?? {}) as Record<string, unknown>);
		const hungUp = new AbortController();
		const onClose = () => hungUp.abort();
		exchange.response.once('close', onClose);
		const signal = AbortSignal.any([session.signal, hungUp.signal]);
		const listener: Listener = { owner, session, filter, subscriptionId: request.id, reply };
		// Tracked as a call in flight: a session with a listen open is not idle.
		const tracked = `hangar-listen-${this.nextId++}`;
		session.track(tracked, reply);
		try {
			// Updates of a resource reach only the 2025 sessions subscribed to it.
			for (const uri of filter.resourceSubscriptions ?? []) {
				if (!this.subscribed(session, uri)) await this.subscription(exchange, session, 'resources/subscribe', uri, signal);
			}
			// The client may have hung up while the resources were subscribed.
			if (exchange.response.destroyed) hungUp.abort();
			this.listeners.add(listener);
			reply.send(tagged({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: filter } }, request.id));
			if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
		} finally {
			this.listeners.delete(listener);
			session.untrack(tracked);
			exchange.response.off('close', onClose);
			for (const uri of filter.resourceSubscriptions ?? []) {
				if (!session.signal.aborted && !this.subscribed(session, uri)) void this.subscription(exchange, session, 'resources/unsubscribe', uri, session.signal);
			}
		}
		return { jsonrpc: '2.0', id: request.id, result: { _meta: { [SUBSCRIPTION_ID_KEY]: request.id } } };
	}

	/** Whether an open listen on `session` still wants the updates of `uri`. */
	private subscribed(session: ClientSession, uri: string): boolean {
		for (const listener of this.listeners) if (listener.session === session && listener.filter.resourceSubscriptions?.includes(uri)) return true;
		return false;
	}

	/** `resources/subscribe` or `resources/unsubscribe` on the caller's session, through the middleware chain like any request. */
	private async subscription(exchange: HttpExchange, session: ClientSession, method: string, uri: string, signal: AbortSignal): Promise<void> {
		await this.handle({ request: { jsonrpc: '2.0', id: `hangar-listen-${this.nextId++}`, method, params: { uri } }, session, signal, exchange });
	}

	/** A list change or resource update a session of `owner` heard: to that caller's streams that asked for it. */
	private heard(message: JsonRpcMessage, owner: string): boolean {
		if (isRequest(message) || isResponse(message)) return false;
		const { method, params } = message as JsonRpcNotification;
		const change = LIST_CHANGES[method as keyof typeof LIST_CHANGES];
		const uri = method === RESOURCE_UPDATED ? params?.uri : undefined;
		if (!change && typeof uri !== 'string') return false;
		for (const listener of this.listeners) {
			if (listener.owner !== owner || !listener.reply.open) continue;
			if (change ? listener.filter[change.field] : listener.filter.resourceSubscriptions?.includes(uri as string)) {
				listener.reply.send(tagged(message as JsonRpcNotification, listener.subscriptionId));
			}
		}
		// Nobody else hears a bridge session's announcements: with no listen open they are dropped.
		return true;
	}
}

function isFilter(value: unknown): value is Record<string, unknown> {
	if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
	const filter = value as Record<string, unknown>;
	if (Object.values(LIST_CHANGES).some(({ field }) => filter[field] !== undefined && typeof filter[field] !== 'boolean')) return false;
	const uris = filter.resourceSubscriptions;
	return uris === undefined || (Array.isArray(uris) && uris.every((uri) => typeof uri === 'string'));
}

/** The part of `asked` the server's capabilities can deliver: what the acknowledgement names. */
function honored(asked: Record<string, unknown>, capabilities: Record<string, unknown>): Filter {
	const filter: Filter = {};
	const offered = (name: string, flag: string) => (capabilities[name] as Record<string, unknown> | undefined)?.[flag] === true;
	for (const { field, capability } of Object.values(LIST_CHANGES)) if (asked[field] === true && offered(capability, 'listChanged')) filter[field] = true;
	const uris = asked.resourceSubscriptions as string[] | undefined;
	if (uris?.length && offered('resources', 'subscribe')) filter.resourceSubscriptions = [...new Set(uris)];
	return filter;
}

/** `notification` tagged with the listen it belongs to. */
function tagged(notification: JsonRpcNotification, subscriptionId: RequestId): JsonRpcNotification {
	return { ...notification, params: { ...notification.params, _meta: { ...(notification.params?._meta as Record<string, unknown> | undefined), [SUBSCRIPTION_ID_KEY]: subscriptionId } } };
}
