/**
 * Audit events in ToolHive's shape (toolhive-facts §9.2): who (`subjects`, from the verified
 * identity and the client's `initialize`), from where (`source`), what (`type`, `target`),
 * how it ended (`outcome`), and, when enabled, the request and response data, each cut to
 * `maxDataSize` bytes. Never a header: the caller's token is nowhere in an event.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Identity } from '../chain.js';

export type AuditOutcome = 'success' | 'failure' | 'error' | 'denied' | 'application_error';

export interface AuditTarget {
	readonly type: 'tool' | 'prompt' | 'resource' | 'server';
	readonly name?: string;
	readonly uri?: string;
	readonly method?: string;
	readonly endpoint: string;
}

export interface ClientInfo {
	readonly name?: string;
	readonly version?: string;
}

const METHOD_EVENTS: Readonly<Record<string, string>> = {
	initialize: 'mcp_initialize',
	'tools/call': 'mcp_tool_call',
	'tools/list': 'mcp_tools_list',
	'resources/read': 'mcp_resource_read',
	'resources/list': 'mcp_resources_list',
	'prompts/get': 'mcp_prompt_get',
	'prompts/list': 'mcp_prompts_list',
	ping: 'mcp_ping',
	'logging/setLevel': 'mcp_logging',
	'completion/complete': 'mcp_completion',
	'notifications/roots/list_changed': 'mcp_roots_list_changed',
};

/** The event type of a JSON-RPC method. */
export function eventTypeOf(method: string): string {
	return METHOD_EVENTS[method] ?? (method.startsWith('notifications/') ? 'mcp_notification' : 'mcp_request');
}

/** What a method acts on: the tool, prompt or resource it names, else the server. */
export function targetOf(method: string, params: Record<string, unknown> | undefined, endpoint: string): AuditTarget {
	const name = typeof params?.name === 'string' ? params.name : undefined;
	if (method === 'tools/call') return { type: 'tool', name, method, endpoint };
	if (method === 'prompts/get') return { type: 'prompt', name, method, endpoint };
	if (method.startsWith('resources/') && typeof params?.uri === 'string') return { type: 'resource', name: params.uri, uri: params.uri, method, endpoint };
	return { type: 'server', method, endpoint };
}

/** ToolHive's mapping of HTTP statuses to outcomes. */
export function outcomeOf(status: number): AuditOutcome {
	if (status === 401 || status === 403) return 'denied';
	if (status >= 500) return 'error';
	if (status >= 400) return 'failure';
	return 'success';
}

/** `value` as JSON when it fits in `maxBytes`, else its JSON text cut to that size. */
export function capture(value: unknown, maxBytes: number): { value: unknown; bytes: number; truncated: boolean } {
	const text = JSON.stringify(value) ?? 'null';
	const bytes = Buffer.byteLength(text);
	if (bytes <= maxBytes) return { value, bytes, truncated: false };
	return { value: Buffer.from(text).subarray(0, maxBytes).toString('utf8'), bytes, truncated: true };
}

export interface EventFields {
	readonly type: string;
	readonly component: string;
	/** The client's HTTP request the event is about; none for a message the server sent on its own. */
	readonly request: IncomingMessage | undefined;
	readonly identity: Identity | undefined;
	readonly client: ClientInfo | undefined;
	readonly sessionId: string | undefined;
	readonly transport: 'streamable-http' | 'sse' | 'http';
	readonly target: AuditTarget;
	readonly outcome: AuditOutcome;
	readonly durationMs: number;
	readonly extra?: Readonly<Record<string, unknown>>;
	readonly data?: Readonly<Record<string, unknown>>;
}

function isLocal(address: string | undefined): boolean {
	return !!address && (address === 'unix' || address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.'));
}

function nameOf(claims: Readonly<Record<string, unknown>>): string | undefined {
	for (const claim of ['name', 'preferred_username', 'email']) if (typeof claims[claim] === 'string') return claims[claim] as string;
	return undefined;
}

/** The caller's address; `unix` over the proxy's Unix socket (an aggregate of its group), which has none. */
function sourceOf({ socket }: IncomingMessage): string | undefined {
	return socket.remoteAddress ?? (socket.localAddress === undefined && !socket.destroyed ? 'unix' : undefined);
}

export function auditEvent(fields: EventFields): Record<string, unknown> {
	const { request, identity, client } = fields;
	const address = request ? sourceOf(request) : undefined;
	const version = request?.headers['mcp-protocol-version'];
	const requestId = request?.headers['x-request-id'];
	return {
		metadata: {
			auditId: randomUUID(),
			extra: {
				duration_ms: Math.round(fields.durationMs * 1000) / 1000,
				transport: fields.transport,
				...(typeof version === 'string' ? { mcp_version: version } : {}),
				...fields.extra,
			},
		},
		type: fields.type,
		loggedAt: new Date().toISOString(),
		source: {
			// A message the server sent on its own is the proxy's to relay.
			type: !request || isLocal(address) ? 'local' : 'network',
			value: address ?? '',
			extra: {
				...(request?.headers['user-agent'] ? { user_agent: request.headers['user-agent'] } : {}),
				...(typeof requestId === 'string' ? { request_id: requestId } : {}),
				...(fields.sessionId ? { session_id: fields.sessionId } : {}),
			},
		},
		outcome: fields.outcome,
		subjects: {
			...(identity ? { user: nameOf(identity.claims) ?? identity.subject, user_id: identity.subject } : {}),
			...(client?.name ? { client_name: client.name } : {}),
			...(client?.version ? { client_version: client.version } : {}),
		},
		component: fields.component,
		target: fields.target,
		...(fields.data ? { data: fields.data } : {}),
	};
}
