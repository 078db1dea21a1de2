/**
 * A 2025-era client's session with a server that speaks only MCP 2026-07-28. The proxy keeps
 * the session the client believes in and speaks 2026-07-28 upstream: the client's
 * claims go into each request's `_meta`, input-required results become server requests to the
 * client, subscriptions and list changes arrive through one `subscriptions/listen`, and the
 * Tasks extension is offered as the 2025-11-25 tasks the client knows.
 */
import type { ClientSessionSink } from '../core/backend.js';
import { CallTable } from '../core/callTable.js';
import {
	encodeHeaderValue,
	ErrorCode,
	errorResponse,
	mcpNameOf,
	META_2026,
	REVISION_2026,
	SUPPORTED_PROTOCOL_VERSIONS,
	type JsonRpcMessage,
	type JsonRpcRequest,
	type JsonRpcResponse,
	type RequestId,
} from '../core/jsonrpc.js';
import { Server2026Tasks, type InputRequest } from './server2026Tasks.js';

/** Input-required rounds one call may take. */
const MAX_INPUT_ROUNDS = 10;
const RELISTEN_DELAY_MS = 1_000;

/** How the dialect reaches the server: the HTTP session it runs in. */
export interface Wire2026 {
	/** One request and its answer; server messages about it on the way go to the session's sink. */
	exchange(message: JsonRpcRequest, signal: AbortSignal, headers: Record<string, string>): Promise<JsonRpcResponse>;
	/** A request answered by a stream of messages (`subscriptions/listen`), or the server's refusal of it. */
	open(message: JsonRpcRequest, signal: AbortSignal, headers: Record<string, string>): Promise<AsyncIterable<JsonRpcMessage> | JsonRpcResponse>;
}

/** The server capabilities whose list changes a listen can carry, by the filter field that asks for them. */
const LIST_CHANGES = { toolsListChanged: 'tools', promptsListChanged: 'prompts', resourcesListChanged: 'resources' } as const;

export class Server2026Dialect {
	/** The client's answers to input requests, awaited by the id they were asked under. */
	private readonly inputs = new CallTable<(response: JsonRpcResponse) => void>();
	private nextId = 1;
	/** The resources the client subscribed to, carried by the open listen with the list changes it wants. */
	private readonly subscriptions = new Set<string>();
	/** The list changes the server announces, followed once the handshake is done and while the client has a stream to hear them on. */
	private listChanges: Partial<Record<keyof typeof LIST_CHANGES, true>> = {};
	private initialized = false;
	private clientStreaming = false;
	private listening: AbortController | undefined;
	private readonly closed = new AbortController();
	private readonly tasks: Server2026Tasks;

	private constructor(
		private readonly wire: Wire2026,
		private readonly sink: ClientSessionSink,
		/** The claims every request carries in its `_meta`. */
		private readonly claims: Record<string, unknown>,
		private readonly capabilities: Record<string, unknown>,
	) {
		this.tasks = new Server2026Tasks({
			call: (method, params, signal, extra) => this.call(method, params, signal, extra),
			ask: (call, input, signal) => this.askClient(call, input, signal),
		});
	}

	/**
	 * A server that refused `initialize` may speak only MCP 2026-07-28: asked with
	 * `server/discover`, it is spoken to in that revision for this client, and the client's
	 * handshake is answered from the discovery. Undefined when the server does not.
	 */
	static async discover(wire: Wire2026, sink: ClientSessionSink, initialize: JsonRpcRequest, signal: AbortSignal): Promise<{ dialect: Server2026Dialect; answer: JsonRpcResponse } | undefined> {
		const params = initialize.params ?? {};
		const claims: Record<string, unknown> = { [META_2026.protocolVersion]: REVISION_2026, [META_2026.clientCapabilities]: params.capabilities ?? {} };
		if (params.clientInfo) claims[META_2026.clientInfo] = params.clientInfo;
		const discovery = { jsonrpc: '2.0' as const, id: initialize.id, method: 'server/discover', params: { _meta: claims } };
		const result = (await wire.exchange(discovery, signal, headers2026(discovery.method, undefined))).result;
		if (!result || !Array.isArray(result.supportedVersions) || !result.supportedVersions.includes(REVISION_2026)) return undefined;
		const capabilities = (result.capabilities ?? {}) as Record<string, unknown>;
		const dialect = new Server2026Dialect(wire, sink, claims, capabilities);
		const requested = typeof params.protocolVersion === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(params.protocolVersion) ? params.protocolVersion : SUPPORTED_PROTOCOL_VERSIONS.at(-1);
		const serverInfo = (result._meta as Record<string, unknown> | undefined)?.[META_2026.serverInfo] ?? { name: 'mcp-server', version: '0' };
		const answer: Record<string, unknown> = { protocolVersion: requested, capabilities: Server2026Tasks.capabilities2025(capabilities), serverInfo };
		if (typeof result.instructions === 'string') answer.instructions = result.instructions;
		return { dialect, answer: { jsonrpc: '2.0', id: initialize.id, result: answer } };
	}

	/** The client's request, in the server's revision, and the answer in the client's. */
	async request(message: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		if ((message.params?._meta as Record<string, unknown> | undefined)?.[META_2026.protocolVersion] === REVISION_2026) {
			// A 2026-07-28 client's own request (see client2026.ts): its claims, its input rounds and its result stay its own.
			return this.wire.exchange(message, signal, headers2026(message.method, message.params));
		}
		switch (message.method) {
			case 'ping':
				return { jsonrpc: '2.0', id: message.id, result: {} };
			case 'logging/setLevel':
				this.claims[META_2026.logLevel] = message.params?.level;
				return { jsonrpc: '2.0', id: message.id, result: {} };
			case 'resources/subscribe':
			case 'resources/unsubscribe': {
				const uri = message.params?.uri;
				if (typeof uri !== 'string') return errorResponse(message.id, ErrorCode.InvalidParams, 'Invalid params: uri must be a string');
				if (message.method === 'resources/subscribe') this.subscriptions.add(uri);
				else this.subscriptions.delete(uri);
				const refused = await this.listen();
				return refused ? { ...refused, id: message.id } : { jsonrpc: '2.0', id: message.id, result: {} };
			}
		}
		return (await this.tasks.request(message, signal)) ?? this.call(message.method, message.params, signal, { id: message.id });
	}

	/**
	 * One request to the server, in as many input-required rounds as it asks for; the answer
	 * is a 2025 result again (no `resultType`). `withTasks` declares the Tasks extension for it, and
	 * the answer is then returned as the server gave it, for the task bridge to read.
	 */
	private async call(method: string, params: Record<string, unknown> | undefined, signal: AbortSignal, options: { id?: RequestId; withTasks?: boolean }): Promise<JsonRpcResponse> {
		const id = options.id ?? `hangar-${this.nextId++}`;
		const claims = options.withTasks ? Server2026Tasks.withTasksExtension(this.claims) : this.claims;
		let round = params;
		for (let attempt = 0; attempt < MAX_INPUT_ROUNDS; attempt++) {
			const message = { jsonrpc: '2.0' as const, id, method, params: { ...round, _meta: { ...(round?._meta as Record<string, unknown> | undefined), ...claims } } };
			const answer = await this.wire.exchange(message, signal, headers2026(method, round));
			const result = answer.result;
			if (!result) return answer;
			const { resultType, inputRequests, requestState, ttlMs: _ttl, cacheScope: _scope, ...result2025 } = result;
			if (resultType !== 'input_required') return options.withTasks ? answer : { ...answer, result: result2025 };
			const responses: Record<string, unknown> = {};
			for (const [key, input] of Object.entries((inputRequests ?? {}) as Record<string, InputRequest>)) {
				const response = await this.askClient(id, input, signal);
				if (response.error) return errorResponse(id, response.error.code, response.error.message, response.error.data);
				responses[key] = response.result;
			}
			round = { ...params, inputResponses: responses, ...(typeof requestState === 'string' ? { requestState } : {}) };
		}
		return errorResponse(id, ErrorCode.InternalError, `the MCP server asked for input more than ${MAX_INPUT_ROUNDS} times`);
	}

	/** The client's own notifications and its answers to input requests. */
	send(message: JsonRpcMessage): void {
		if ('method' in message) {
			// The handshake is done: the list changes the server can announce start flowing.
			if (message.method === 'notifications/initialized') {
				this.initialized = true;
				this.followListChanges();
			}
			return;
		}
		if (message.id !== null) this.inputs.get(message.id)?.(message as JsonRpcResponse);
	}

	/**
	 * The client opened or closed the stream unrequested notifications reach it on. Only then
	 * are list changes followed: a session nobody listens to (an abandoned one, or the proxy's
	 * own for 2026 clients) holds no listen upstream for them.
	 */
	streaming(open: boolean): void {
		if (this.clientStreaming === open) return;
		this.clientStreaming = open;
		this.followListChanges();
	}

	private followListChanges(): void {
		const following = Object.keys(this.listChanges).length > 0;
		this.listChanges = {};
		if (this.initialized && this.clientStreaming) {
			for (const [field, capability] of Object.entries(LIST_CHANGES) as Array<[keyof typeof LIST_CHANGES, string]>) {
				if ((this.capabilities[capability] as { listChanged?: boolean } | undefined)?.listChanged) this.listChanges[field] = true;
			}
		}
		if (following !== Object.keys(this.listChanges).length > 0) void this.listen();
	}

	/**
	 * 2026-07-28 replaced `resources/subscribe` and unsolicited list changes with
	 * `subscriptions/listen`: one long-lived request whose stream carries what it names. It is
	 * reopened with the new filter whenever the client subscribes or unsubscribes (and after
	 * the server drops it); what it carries reaches the client as the unsolicited notifications
	 * of its own revision. Resolves once the server acknowledged it, or with its refusal.
	 */
	private async listen(): Promise<JsonRpcResponse | undefined> {
		this.listening?.abort();
		this.listening = undefined;
		if (this.subscriptions.size === 0 && Object.keys(this.listChanges).length === 0) return undefined;
		const listening = (this.listening = new AbortController());
		const signal = AbortSignal.any([this.closed.signal, listening.signal]);
		const filter = { ...this.listChanges, ...(this.subscriptions.size ? { resourceSubscriptions: [...this.subscriptions] } : {}) };
		const message = { jsonrpc: '2.0' as const, id: `hangar-listen-${this.nextId++}`, method: 'subscriptions/listen', params: { notifications: filter, _meta: this.claims } };
		const opened = await this.wire.open(message, signal, headers2026(message.method, message.params));
		if (!(Symbol.asyncIterator in opened)) return signal.aborted ? undefined : { ...opened, id: message.id };
		return new Promise((resolve) => {
			void (async () => {
				try {
					for await (const received of opened) {
						if ('id' in received && !('method' in received)) {
							// The server ended the subscription: a refusal before the acknowledgement is the answer.
							if ((received as JsonRpcResponse).error) resolve({ ...(received as JsonRpcResponse), id: message.id });
							break;
						}
						if ('method' in received && received.method === 'notifications/subscriptions/acknowledged') resolve(undefined);
						else this.sink.deliver(received);
					}
				} catch {
					// dropped: reopened below while it is still wanted
				}
				resolve(errorResponse(message.id, ErrorCode.InternalError, 'the MCP server ended the subscription before acknowledging it'));
				if (this.listening !== listening || signal.aborted) return;
				await new Promise((wait) => setTimeout(wait, RELISTEN_DELAY_MS));
				if (this.listening === listening && !signal.aborted) void this.listen();
			})();
		});
	}

	/** Sends a server's input request to the client, as a server request related to `call`; resolves with its answer. */
	private askClient(call: RequestId, input: InputRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		const id = `hangar-input-${this.nextId++}`;
		return new Promise((resolve) => {
			const onAbort = () => {
				this.inputs.delete(id);
				resolve(errorResponse(id, ErrorCode.RequestTimeout, 'request cancelled'));
			};
			signal.addEventListener('abort', onAbort, { once: true });
			this.inputs.set(id, (response) => {
				this.inputs.delete(id);
				signal.removeEventListener('abort', onAbort);
				resolve(response);
			});
			this.sink.deliver({ jsonrpc: '2.0', id, method: input.method, params: input.params }, call);
		});
	}

	close(): void {
		this.closed.abort();
	}
}

/** The headers a 2026-07-28 request carries beside its body. */
export function headers2026(method: string, params: Record<string, unknown> | undefined): Record<string, string> {
	const headers: Record<string, string> = { 'Mcp-Protocol-Version': REVISION_2026, 'Mcp-Method': method };
	const name = mcpNameOf(method, params);
	if (name !== undefined) headers['Mcp-Name'] = encodeHeaderValue(name);
	return headers;
}
