/**
 * What travels with a response besides its JSON-RPC body: set by the part that made it, read
 * by a part further up. The HTTP status a refusal goes with, the server's 401 or 403, a
 * connection that failed. One WeakMap for all: a tag lives as long as its response.
 */
import type { JsonRpcResponse } from './jsonrpc.js';

/** The HTTP status (and headers) a response made by the proxy instead of the server travels with. */
export interface Refusal {
	readonly status: number;
	readonly headers?: Readonly<Record<string, string>>;
}

/** The server refused the proxy's credentials: its HTTP status and `WWW-Authenticate` challenge. */
export interface UpstreamDenial {
	readonly status: 401 | 403;
	readonly challenge: string | undefined;
}

/** A request that failed to reach the server: whether it may have reached it before the connection failed. */
export interface ConnectionFailure {
	readonly reached: boolean;
}

export interface ResponseTags {
	/** A refusal, sent with an HTTP error status (403, 429…) rather than 200. */
	readonly refusal?: Refusal;
	/** The server's 401 or 403, which chain/upstreamAuth/middleware.ts passes on as such. */
	readonly denial?: UpstreamDenial;
	/** The answer made of a failed connection, on which backends/spread.ts fails a session over. */
	readonly connectionFailure?: ConnectionFailure;
}

const tags = new WeakMap<JsonRpcResponse, ResponseTags>();

/** Adds `added` to the tags of `response`; returns the response. */
export function tag(response: JsonRpcResponse, added: ResponseTags): JsonRpcResponse {
	const current = tags.get(response);
	tags.set(response, current ? { ...current, ...added } : added);
	return response;
}

export function tagsOf(response: JsonRpcResponse): ResponseTags | undefined {
	return tags.get(response);
}
