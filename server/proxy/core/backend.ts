/**
 * What the proxy's client-facing side (Streamable HTTP, legacy SSE) needs from the server
 * side, whatever the server is: a container's stdio, an HTTP server in a container, or a
 * remote URL. Each client session opens its own backend session.
 */
import { isSignInState, type BackendState } from '../../runspec/store.js';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, RequestId } from './jsonrpc.js';

export { isSignInState, type BackendState };

/** Where a backend delivers server messages for one client session. */
export interface ClientSessionSink {
	/** A server message; `relatedTo` is the client request it belongs to, when known. */
	deliver(message: JsonRpcMessage, relatedTo?: RequestId): void;
	/** The server ended the session (for example an upstream session expired). */
	ended(reason: string): void;
}

/**
 * How the calls a backend makes for a client's call (an aggregate's script or composite tool
 * calling member tools) go through the proxy's MCP chain again, as that call's caller: audit,
 * authorization, rate limits and telemetry see each as a call of its own.
 */
export interface CallOrigin {
	/** `tool`: the tool a `tools/call` calls, as the backend lists it (its annotations, for authorization). */
	reenter(request: JsonRpcRequest, signal: AbortSignal, tool?: { readonly annotations?: unknown }): Promise<JsonRpcResponse>;
	/** Whether the caller may call tool `name` (authorization): a backend shows its caller only those. */
	mayCall(name: string, annotations: unknown): boolean;
	/** How the chain shows the caller a tool the backend lists (renamed, described anew), or undefined when it hides it. */
	showTool(tool: ShownTool): ShownTool | undefined;
}

/** A tool as a list shows it: its name and description. */
export interface ShownTool {
	readonly name: string;
	readonly description?: string;
}

export interface UpstreamSession {
	/** Sends a client request; resolves with the server's response, never rejects. `origin` re-enters the chain for it. */
	request(message: JsonRpcRequest, signal: AbortSignal, origin?: CallOrigin): Promise<JsonRpcResponse>;
	/** The session makes calls of its own for its client's (an aggregate's): its requests come with a `CallOrigin`. */
	readonly reenters?: boolean;
	/**
	 * Sends a notification, or the client's response to a server request; a promise when it
	 * takes a round trip, settled once the server has it (so no later request overtakes it).
	 */
	send(message: JsonRpcNotification | JsonRpcResponse): void | Promise<void>;
	close(): void;
	/**
	 * Gives up the request `id` in flight, as its signal aborting would: its caller is answered
	 * with an error and the server told. A backend with it needs no signal of its own per call.
	 */
	cancel?(id: RequestId, reason: string): void;
	/**
	 * This replica stops serving the session, which lives on upstream for the replicas that
	 * still serve it (see sessions/store.ts); without it, `close`.
	 */
	release?(): void;
	/**
	 * What another replica needs to take this session over upstream (`OpenOptions.adopt`),
	 * once initialised; undefined when it cannot, and must initialise a session of its own.
	 */
	snapshot?(): unknown;
	/**
	 * The client has (or no longer has) a stream open for the server's unrequested messages:
	 * what only such a stream can carry need not be followed upstream while it has none.
	 */
	streaming?(open: boolean): void;
	/** The server speaks MCP 2026-07-28: a 2026-07-28 client's requests reach it as they are. */
	readonly speaks2026?: boolean;
}

export interface OpenOptions {
	/**
	 * Other replicas may serve the session too: the server's own stream is followed only while
	 * this replica's client has a stream to hear it on.
	 */
	readonly replicated?: boolean;
	/** A snapshot another replica took (`UpstreamSession.snapshot`): the upstream session to take over. */
	readonly adopt?: unknown;
	/** No handshake: the session carries a 2026-07-28 client's requests as they are (`Backend.speaks2026`). */
	readonly stateless2026?: boolean;
	/**
	 * The session gets a server process of its own, shared with no other (stdio): a call on it
	 * that waits for its client makes no other client wait its turn.
	 */
	readonly ownProcess?: boolean;
	/**
	 * Who opened the session (the identity's subject; undefined when callers do not
	 * authenticate, all one caller then): per-caller limits count by it.
	 */
	readonly caller?: string;
}

export interface Backend {
	readonly state: BackendState;
	/** Why the backend is not connected, when it is not. */
	readonly detail: string | undefined;
	/** Connects; resolves once the server answers (or rejects when it cannot be reached at all). */
	start(): Promise<void>;
	open(sink: ClientSessionSink, options?: OpenOptions): UpstreamSession;
	/**
	 * Whether the server speaks MCP 2026-07-28, asked without a handshake (`server/discover`
	 * with `claims` in its `_meta`) and remembered: then a 2026-07-28 client's requests reach it
	 * on a session opened with `stateless2026`. Absent where a backend cannot carry them so.
	 */
	speaks2026?(claims: Record<string, unknown>): Promise<boolean>;
	close(): Promise<void>;
	/** Called on every change of `state`. */
	onStateChange?: (state: BackendState, detail: string | undefined) => void;
	/** The server processes it runs, for the workload's statistics; absent where it runs none (a stdio server has them). */
	serverProcesses?(): ServerProcessCounts;
}

/** A stdio server's processes, as the workload's statistics report them (`server_processes`). */
export interface ServerProcessCounts {
	readonly running: number;
	readonly in_use: number;
	readonly max: number;
}

/** Where the proxy's sign-in to a remote server stands (chain/upstreamAuth/authenticator.ts). */
export type AuthState = 'none' | 'authenticated' | 'unauthenticated' | 'auth_retrying';

/**
 * What the HTTP backend asks of the OAuth client of a remote server: its token on every
 * request, its answer to a 401 or 403, its state while it cannot authenticate (an
 * UpstreamAuthError then, core/upstreamAuthError.ts).
 */
export interface UpstreamCredentials {
	readonly state: AuthState;
	readonly detail: string | undefined;
	onStateChange?: (state: AuthState, detail: string | undefined) => void;
	/** The `Authorization` header to send, if any. */
	authorization(): Promise<string | undefined>;
	/** The server answered `status` to `sent`: whether a retry may now succeed. */
	denied(status: 401 | 403, header: string | undefined, sent: string | undefined): Promise<boolean>;
	/** Why calls are refused while signed out. */
	refusal(): string;
	close(): void;
}
