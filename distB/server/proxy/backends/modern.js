import { encodeHeaderValue, ErrorCode, errorResponse, mcpNameOf, MODERN_META, MODERN_REVISION, SUPPORTED_PROTOCOL_VERSIONS, } from '../jsonrpc.js';
import { TaskBridge } from './modernTasks.js';
/** Input-required rounds one call may take. */
const MAX_INPUT_ROUNDS = 10;
const RELISTEN_DELAY_MS = 1_000;
/** The server capabilities whose list changes a listen can carry, by the filter field that asks for them. */
const LIST_CHANGES = { toolsListChanged: 'tools', promptsListChanged: 'prompts', resourcesListChanged: 'resources' };
export class ModernDialect {
    wire;
    sink;
    claims;
    capabilities;
    /** The client's answers to input requests, awaited by the id they were asked under. */
    inputs = new Map();
    nextId = 1;
    /** The resources the client subscribed to, carried by the open listen with the list changes it wants. */
    subscriptions = new Set();
    /** The list changes the server announces, followed once the handshake is done and while the client has a stream to hear them on. */
    listChanges = {};
    initialized = false;
    clientStreaming = false;
    listening;
    closed = new AbortController();
    tasks;
    constructor(wire, sink, 
    /** The claims every request carries in its `_meta`. */
    claims, capabilities) {
        this.wire = wire;
        this.sink = sink;
        this.claims = claims;
        this.capabilities = capabilities;
        this.tasks = new TaskBridge({
            call: (method, params, signal, extra) => this.call(method, params, signal, extra),
            ask: (call, input, signal) => this.askClient(call, input, signal),
        });
    }
    /**
     * A server that refused `initialize` may speak only MCP 2026-07-28: asked with
     * `server/discover`, it is spoken to in that revision for this client, and the client's
     * handshake is answered from the discovery. Undefined when the server does not.
     */
    static async discover(wire, sink, initialize, signal) {
        const params = initialize.params ?? {};
        const claims = { [MODERN_META.protocolVersion]: MODERN_REVISION, [MODERN_META.clientCapabilities]: params.capabilities ?? {} };
        if (params.clientInfo)
            claims[MODERN_META.clientInfo] = params.clientInfo;
        const discovery = { jsonrpc: '2.0', id: initialize.id, method: 'server/discover', params: { _meta: claims } };
        const result = (await wire.exchange(discovery, signal, modernHeaders(discovery.method, undefined))).result;
        if (!result || !Array.isArray(result.supportedVersions) || !result.supportedVersions.includes(MODERN_REVISION))
            return undefined;
        const capabilities = (result.capabilities ?? {});
        const dialect = new ModernDialect(wire, sink, claims, capabilities);
        const requested = typeof params.protocolVersion === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(params.protocolVersion) ? params.protocolVersion : SUPPORTED_PROTOCOL_VERSIONS.at(-1);
        const serverInfo = result._meta?.[MODERN_META.serverInfo] ?? { name: 'mcp-server', version: '0' };
        const answer = { protocolVersion: requested, capabilities: TaskBridge.legacyCapabilities(capabilities), serverInfo };
        if (typeof result.instructions === 'string')
            answer.instructions = result.instructions;
        return { dialect, answer: { jsonrpc: '2.0', id: initialize.id, result: answer } };
    }
    /** The client's request, in the server's revision, and the answer in the client's. */
    async request(message, signal) {
        if (message.params?._meta?.[MODERN_META.protocolVersion] === MODERN_REVISION) {
            // A 2026-07-28 client's own request (see stateless.ts): its claims, its input rounds and its result stay its own.
            return this.wire.exchange(message, signal, modernHeaders(message.method, message.params));
        }
        switch (message.method) {
            case 'ping':
                return { jsonrpc: '2.0', id: message.id, result: {} };
            case 'logging/setLevel':
                this.claims[MODERN_META.logLevel] = message.params?.level;
                return { jsonrpc: '2.0', id: message.id, result: {} };
            case 'resources/subscribe':
            case 'resources/unsubscribe': {
                const uri = message.params?.uri;
                if (typeof uri !== 'string')
                    return errorResponse(message.id, ErrorCode.InvalidParams, 'Invalid params: uri must be a string');
                if (message.method === 'resources/subscribe')
                    this.subscriptions.add(uri);
                else
                    this.subscriptions.delete(uri);
                const refused = await this.listen();
                return refused ? { ...refused, id: message.id } : { jsonrpc: '2.0', id: message.id, result: {} };
            }
        }
        return (await this.tasks.request(message, signal)) ?? this.call(message.method, message.params, signal, { id: message.id });
    }
    /**
     * One request to the server, in as many input-required rounds as it asks for; the answer
     * is legacy again (no `resultType`). `withTasks` declares the Tasks extension for it, and
     * the answer is then returned as the server gave it, for the task bridge to read.
     */
    async call(method, params, signal, options) {
        const id = options.id ?? `hangar-${this.nextId++}`;
        const claims = options.withTasks ? TaskBridge.withTasksExtension(this.claims) : this.claims;
        let round = params;
        for (let attempt = 0; attempt < MAX_INPUT_ROUNDS; attempt++) {
            const message = { jsonrpc: '2.0', id, method, params: { ...round, _meta: { ...round?._meta, ...claims } } };
            const answer = await this.wire.exchange(message, signal, modernHeaders(method, round));
            const result = answer.result;
            if (!result)
                return answer;
            const { resultType, inputRequests, requestState, ttlMs: _ttl, cacheScope: _scope, ...legacy } = result;
            if (resultType !== 'input_required')
                return options.withTasks ? answer : { ...answer, result: legacy };
            const responses = {};
            for (const [key, input] of Object.entries((inputRequests ?? {}))) {
                const response = await this.askClient(id, input, signal);
                if (response.error)
                    return errorResponse(id, response.error.code, response.error.message, response.error.data);
                responses[key] = response.result;
            }
            round = { ...params, inputResponses: responses, ...(typeof requestState === 'string' ? { requestState } : {}) };
        }
        return errorResponse(id, ErrorCode.InternalError, `the MCP server asked for input more than ${MAX_INPUT_ROUNDS} times`);
    }
    /** The client's own notifications and its answers to input requests. */
    send(message) {
        if ('method' in message) {
            // The handshake is done: the list changes the server can announce start flowing.
            if (message.method === 'notifications/initialized') {
                this.initialized = true;
                this.followListChanges();
            }
            return;
        }
        if (message.id !== null)
            this.inputs.get(message.id)?.(message);
    }
    /**
     * The client opened or closed the stream unrequested notifications reach it on. Only then
     * are list changes followed: a session nobody listens to (an abandoned one, or the proxy's
     * own for stateless clients) holds no listen upstream for them.
     */
    streaming(open) {
        if (this.clientStreaming === open)
            return;
        this.clientStreaming = open;
        this.followListChanges();
    }
    followListChanges() {
        const following = Object.keys(this.listChanges).length > 0;
        this.listChanges = {};
        if (this.initialized && this.clientStreaming) {
            for (const [field, capability] of Object.entries(LIST_CHANGES)) {
                if (this.capabilities[capability]?.listChanged)
                    this.listChanges[field] = true;
            }
        }
        if (following !== Object.keys(this.listChanges).length > 0)
            void this.listen();
    }
    /**
     * 2026-07-28 replaced `resources/subscribe` and unsolicited list changes with
     * `subscriptions/listen`: one long-lived request whose stream carries what it names. It is
     * reopened with the new filter whenever the client subscribes or unsubscribes (and after
     * the server drops it); what it carries reaches the client as the unsolicited notifications
     * of its own revision. Resolves once the server acknowledged it, or with its refusal.
     */
    async listen() {
        this.listening?.abort();
        this.listening = undefined;
        if (this.subscriptions.size === 0 && Object.keys(this.listChanges).length === 0)
            return undefined;
        const listening = (this.listening = new AbortController());
        const signal = AbortSignal.any([this.closed.signal, listening.signal]);
        const filter = { ...this.listChanges, ...(this.subscriptions.size ? { resourceSubscriptions: [...this.subscriptions] } : {}) };
        const message = { jsonrpc: '2.0', id: `hangar-listen-${this.nextId++}`, method: 'subscriptions/listen', params: { notifications: filter, _meta: this.claims } };
        const opened = await this.wire.open(message, signal, modernHeaders(message.method, message.params));
        if (!(Symbol.asyncIterator in opened))
            return signal.aborted ? undefined : { ...opened, id: message.id };
        return new Promise((resolve) => {
            void (async () => {
                try {
                    for await (const received of opened) {
                        if ('id' in received && !('method' in received)) {
                            // The server ended the subscription: a refusal before the acknowledgement is the answer.
                            if (received.error)
                                resolve({ ...received, id: message.id });
                            break;
                        }
                        if ('method' in received && received.method === 'notifications/subscriptions/acknowledged')
                            resolve(undefined);
                        else
                            this.sink.deliver(received);
                    }
                }
                catch {
                    // dropped: reopened below while it is still wanted
                }
                resolve(errorResponse(message.id, ErrorCode.InternalError, 'the MCP server ended the subscription before acknowledging it'));
                if (this.listening !== listening || signal.aborted)
                    return;
                await new Promise((wait) => setTimeout(wait, RELISTEN_DELAY_MS));
                if (this.listening === listening && !signal.aborted)
                    void this.listen();
            })();
        });
    }
    /** Sends a server's input request to the client, as a server request related to `call`; resolves with its answer. */
    askClient(call, input, signal) {
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
    close() {
        this.closed.abort();
    }
}
/** The headers a 2026-07-28 request carries beside its body. */
export function modernHeaders(method, params) {
    const headers = { 'Mcp-Protocol-Version': MODERN_REVISION, 'Mcp-Method': method };
    const name = mcpNameOf(method, params);
    if (name !== undefined)
        headers['Mcp-Name'] = encodeHeaderValue(name);
    return headers;
}
//# sourceMappingURL=modern.js.map