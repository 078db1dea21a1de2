/**
 * JSON-RPC 2.0 messages as MCP carries them, with the few helpers the proxy needs to tell
 * requests, notifications and responses apart and to answer with errors.
 */
import { parseJsonBounded } from '../../json.js';

export type RequestId = string | number;

export interface JsonRpcRequest {
	jsonrpc: '2.0';
	id: RequestId;
	method: string;
	params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
	jsonrpc: '2.0';
	method: string;
	params?: Record<string, unknown>;
}

export interface JsonRpcResponse {
	jsonrpc: '2.0';
	id: RequestId | null;
	result?: Record<string, unknown>;
	error?: { code: number; message: string; data?: unknown };
}

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export const ErrorCode = {
	ParseError: -32700,
	InvalidRequest: -32600,
	MethodNotFound: -32601,
	InvalidParams: -32602,
	InternalError: -32603,
	/** The MCP SDK's code for a request that took too long. */
	RequestTimeout: -32001,
	/** The server behind the proxy cannot be reached. */
	ConnectionClosed: -32000,
	/** 2026-07-28: a request's `Mcp-Method`/`Mcp-Name`/`MCP-Protocol-Version` header disagrees with its body. */
	HeaderMismatch: -32020,
	/** 2026-07-28: the request's revision is not one the server speaks (its data names those it does). */
	UnsupportedProtocolVersion: -32022,
	/** Hangar: the proxy cannot authenticate to its remote server; the workload needs a sign-in (`hangar signin`). */
	Unauthenticated: -32041,
	/** Hangar: a limit on the sessions, server processes or held calls a caller or workload may have is reached. */
	LimitReached: -32050,
	/** Hangar: a guardrail blocked the request, or the server's answer to it (its data names the rules, never what matched). */
	GuardrailBlocked: -32060,
} as const;

export function isRequest(message: JsonRpcMessage): message is JsonRpcRequest {
	return 'method' in message && 'id' in message && message.id !== undefined && message.id !== null;
}

export function isResponse(message: JsonRpcMessage): message is JsonRpcResponse {
	return !('method' in message) && 'id' in message;
}

export function errorResponse(id: RequestId | null, code: number, message: string, data?: unknown): JsonRpcResponse {
	return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

/** What tells the server the call `id` was given up, and why (a timeout, the client's cancellation, the session's end). */
export function cancellationOf(id: RequestId, reason: unknown): JsonRpcNotification {
	return { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(reason ?? 'cancelled') } };
}

/** A parsed message, or undefined when `value` is not a JSON-RPC 2.0 message. */
export function asMessage(value: unknown): JsonRpcMessage | undefined {
	if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
	const message = value as Record<string, unknown>;
	if (message.jsonrpc !== '2.0') return undefined;
	if ('method' in message) {
		if (typeof message.method !== 'string') return undefined;
		if ('id' in message && message.id !== undefined && typeof message.id !== 'string' && typeof message.id !== 'number') return undefined;
		return message as unknown as JsonRpcMessage;
	}
	return 'id' in message && ('result' in message || 'error' in message) ? (message as unknown as JsonRpcResponse) : undefined;
}

/** A message parsed from `text`, or undefined when it is not JSON (or nested too deep) or not JSON-RPC 2.0. */
export function parseMessage(text: string): JsonRpcMessage | undefined {
	try {
		return asMessage(parseJsonBounded(text));
	} catch {
		return undefined;
	}
}

/** Protocol revisions the proxy speaks (the `MCP-Protocol-Version` header is checked against them). */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
/** MCP 2026-07-28: no handshake, the client's claims in every request's `_meta`. */
export const REVISION_2026 = '2026-07-28';
/** `_meta` keys of MCP 2026-07-28. */
export const META_2026 = {
	protocolVersion: 'io.modelcontextprotocol/protocolVersion',
	clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
	clientInfo: 'io.modelcontextprotocol/clientInfo',
	serverInfo: 'io.modelcontextprotocol/serverInfo',
	logLevel: 'io.modelcontextprotocol/logLevel',
} as const;

/** The Tasks extension of 2026-07-28, as declared among capabilities' `extensions`. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** Where a message about a task names it, in `_meta` (2025-11-25). */
export const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** 2026-07-28: the body field each method's `Mcp-Name` header mirrors. */
const MCP_NAME_FIELDS: Readonly<Record<string, string>> = {
	'tools/call': 'name',
	'prompts/get': 'name',
	'resources/read': 'uri',
	'tasks/get': 'taskId',
	'tasks/update': 'taskId',
	'tasks/cancel': 'taskId',
};

/** The value a 2026-07-28 request's `Mcp-Name` header must carry, when its method has one. */
export function mcpNameOf(method: string, params: Record<string, unknown> | undefined): string | undefined {
	const field = Object.hasOwn(MCP_NAME_FIELDS, method) ? MCP_NAME_FIELDS[method]! : undefined;
	const value = field === undefined ? undefined : params?.[field];
	return typeof value === 'string' ? value : undefined;
}

const BASE64_VALUE = /^=\?base64\?(.*)\?=$/;

/** An `Mcp-*` header value as 2026-07-28 writes it: plain printable ASCII, else `=?base64?…?=` of its UTF-8. */
export function encodeHeaderValue(value: string): string {
	return /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value) ? value : `=?base64?${Buffer.from(value).toString('base64')}?=`;
}

/** What an `Mcp-*` header value says, without the whitespace around it; undefined when its base64 is malformed. */
export function decodeHeaderValue(raw: string): string | undefined {
	const value = raw.trim();
	const encoded = BASE64_VALUE.exec(value)?.[1];
	if (encoded === undefined) return value;
	if (encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) return undefined;
	return Buffer.from(encoded, 'base64').toString('utf8');
}

/** JSON with object keys sorted, so that equal capability sets compare equal. */
export function canonicalJson(value: unknown): string {
	if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
	if (value && typeof value === 'object') {
		const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
		return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
	}
	return JSON.stringify(value) ?? 'null';
}
