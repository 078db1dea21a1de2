/**
 * The shape of one row of the operation table.
 *
 * A row is the whole contract of one management operation: the JSON-RPC method the daemon
 * serves, the schemas of its params and result, and the REST binding on ToolHive's paths.
 * Every door (daemon, REST adapter, CLI, VS Code client) is built from these rows, so an
 * operation that exists in one door exists in all of them.
 */
import type { z } from 'zod';

export type HttpVerb = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * HTTP statuses an operation may fail with, as the spec lists them per operation. 499 is the
 * "client closed request" convention for cancelled work: over RPC it becomes JSON-RPC's
 * RequestCancelled, and over HTTP nobody is left to receive it.
 */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 429 | 499 | 500 | 501 | 502 | 503 | 504;

export interface RestBinding {
	readonly verb: HttpVerb;
	/** Path with `{param}` placeholders, e.g. `/api/v1beta/skills/{name}`. */
	readonly path: string;
	/** Status of a successful response. */
	readonly status: 200 | 201 | 202 | 204;
	/** Params read from the query string (the rest come from the path and the JSON body). */
	readonly query?: readonly string[];
	/** How the result is written: JSON (default), plain text, or no body at all. */
	readonly response?: 'json' | 'text' | 'empty';
	/** Builds a `Location` header from the params and result of a created resource. */
	readonly location?: (params: any, result: any) => string;
}

export interface OperationDefinition<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType, M extends string = string> {
	/** JSON-RPC method, `area/verb`. */
	readonly method: M;
	/** One line for help texts and the OpenAPI summary. */
	readonly summary: string;
	readonly params: P;
	readonly result: R;
	readonly rest: RestBinding;
	/** Statuses other than success that the operation may return. */
	readonly errors: readonly ErrorStatus[];
	/**
	 * Params that succeed against a fresh state directory (or fail with one of `errors`).
	 * The contract test calls every row with them; the OpenAPI document shows them.
	 */
	readonly example: z.input<P>;
}

export interface NotificationDefinition<P extends z.ZodType = z.ZodType, M extends string = string> {
	readonly method: M;
	readonly summary: string;
	readonly params: P;
}

/** Declares a row; the identity function keeps the literal types of schemas and method. */
export function operation<P extends z.ZodType, R extends z.ZodType, M extends string>(
	definition: OperationDefinition<P, R, M>,
): OperationDefinition<P, R, M> {
	return definition;
}

export function notification<P extends z.ZodType, M extends string>(definition: NotificationDefinition<P, M>): NotificationDefinition<P, M> {
	return definition;
}

export type ParamsOf<O extends OperationDefinition> = z.input<O['params']>;
export type ValidParamsOf<O extends OperationDefinition> = z.output<O['params']>;
export type ResultOf<O extends OperationDefinition> = z.output<O['result']>;

/** Names of the `{param}` placeholders of a REST path. */
export function pathParams(path: string): string[] {
	return [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
}

/** The rows an area's module (`protocol.<area>.ts`) exports, in its order. */
export function rowsOf(area: Record<string, unknown>): OperationDefinition[] {
	return Object.values(area).filter(isOperation);
}

function isOperation(value: unknown): value is OperationDefinition {
	return typeof value === 'object' && value !== null && 'method' in value && 'rest' in value;
}
