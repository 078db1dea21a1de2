/** Calls a row of the operation table over HTTP, the way a ToolHive client would. */
import { pathParams, type OperationDefinition } from '../../protocol/operation.js';

export interface RestOutcome {
	readonly status: number;
	readonly headers: Headers;
	/** Parsed JSON, text, or undefined for an empty body. */
	readonly body: unknown;
}

export function restRequestOf(row: OperationDefinition, params: Record<string, unknown>): { path: string; init: RequestInit } {
	const fromPath = new Set(pathParams(row.rest.path));
	const fromQuery = new Set(row.rest.query ?? []);
	const path = row.rest.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String(params[name])));
	const query = new URLSearchParams();
	const body: Record<string, unknown> = {};
	for (const [name, value] of Object.entries(params)) {
		if (fromPath.has(name)) continue;
		if (fromQuery.has(name)) query.set(name, String(value));
		else body[name] = value;
	}
	const search = query.size ? `?${query}` : '';
	const init: RequestInit = { method: row.rest.verb };
	if (row.rest.verb !== 'GET') {
		init.headers = { 'Content-Type': 'application/json' };
		init.body = JSON.stringify(body);
	}
	return { path: `${path}${search}`, init };
}

export async function callRest(baseUrl: string, row: OperationDefinition, params: Record<string, unknown>): Promise<RestOutcome> {
	const { path, init } = restRequestOf(row, params);
	const response = await fetch(`${baseUrl}${path}`, init);
	const text = await response.text();
	const type = response.headers.get('content-type') ?? '';
	const body = text === '' ? undefined : type.includes('application/json') ? JSON.parse(text) : text;
	return { status: response.status, headers: response.headers, body };
}
