/**
 * What the fronts read and write over HTTP: the JSON body of a client's POST (through the one
 * body reader, net/body.ts), the JSON-RPC message in it, and the errors the transport answers
 * with, a malformed request's (`sendError`) or a call the proxy refused (`sendRefusal`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { JsonTooDeep, parseJsonBounded } from '../../json.js';
import { readBody, sendJson } from '../../net/body.js';
import { asMessage, ErrorCode, errorResponse, type JsonRpcMessage, type JsonRpcResponse } from '../core/jsonrpc.js';

export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

export class HttpError extends Error {
	constructor(
		readonly status: number,
		message: string,
		readonly code: number = ErrorCode.InvalidRequest,
	) {
		super(message);
	}
}

/** Reads a JSON body (at most 4 MiB). */
export function readJson(request: IncomingMessage): Promise<unknown> {
	return readBody(request, MAX_MESSAGE_BYTES, parseJson, tooLarge);
}

function parseJson(body: Buffer): unknown {
	try {
		return parseJsonBounded(body.toString('utf8'));
	} catch (error) {
		throw new HttpError(400, error instanceof JsonTooDeep ? `Parse error: ${error.message}` : 'Parse error: the body is not JSON', ErrorCode.ParseError);
	}
}

function tooLarge(): HttpError {
	return new HttpError(413, 'message over 4 MiB');
}

/** The JSON-RPC message a body holds, else a 400. */
export function messageOf(item: unknown): JsonRpcMessage {
	const message = asMessage(item);
	if (!message) throw new HttpError(400, 'Invalid Request: not a JSON-RPC 2.0 message');
	return message;
}

/** Writes a JSON-RPC error without an id, as the transport answers malformed requests. */
export function sendError(response: ServerResponse, error: HttpError, headers: Record<string, string> = {}): void {
	if (response.headersSent) return;
	sendJson(response, error.status, errorResponse(null, error.code, error.message), headers);
}

/** A message the proxy refused, with its HTTP status. */
export function sendRefusal(response: ServerResponse, answer: JsonRpcResponse, status: number, headers: Readonly<Record<string, string>> = {}): void {
	sendJson(response, status, answer, headers);
}
