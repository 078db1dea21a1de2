/**
 * Binds service functions to rows of the operation table and calls them with validated
 * params. Every door goes through `Dispatcher.call`, so validation, "not implemented" and
 * error hiding behave the same over RPC, REST and the CLI. An area's services are loaded when
 * one of its methods is first called: a command that lists groups builds neither the
 * workloads' services nor their schemas.
 *
 * Params are checked first against the row's plain JSON Schema, which the build writes
 * (protocol/plainParams.ts): those it accepts, zod would return unchanged, so the call runs
 * without loading the area's rows and zod. Anything else is checked by the row's zod schema,
 * which fills defaults, converts query strings, or refuses with a message that names the field.
 */
import type { z } from 'zod';
import { HangarError } from '../protocol/errors.js';
import type { Method, Operations } from '../protocol/methods.js';
import type { OperationDefinition, ResultOf, ValidParamsOf } from '../protocol/operation.js';
import type { OperationContext } from './context.js';
import type { Logger } from './log.js';
import { within } from './within.js';

export type Handler<O extends OperationDefinition> = (
	params: ValidParamsOf<O>,
	context: OperationContext,
) => Promise<ResultOf<O>> | ResultOf<O>;

export interface Implementation {
	readonly method: string;
	readonly handler: Handler<OperationDefinition>;
}

/** The service function of the row named by `method`. */
export function implement<M extends Method>(method: M, handler: Handler<Operations[M]>): Implementation {
	return { method, handler: handler as unknown as Handler<OperationDefinition> };
}

/** One area of the operation table (the methods `<area>/…`): how to load its rows, and its handlers. */
export interface Area {
	readonly rows: () => Promise<readonly OperationDefinition[]>;
	readonly implementations: readonly Implementation[];
}

/** Loads an area and builds its services (once per dispatcher). */
export type AreaLoader = () => Promise<Area>;

/**
 * The rows' plain params checks (protocol/plainParams.ts), by method: the params as zod would
 * return them, or undefined where zod must decide.
 */
export type PlainParamsCheck = (method: string, params: unknown) => { readonly data: unknown } | undefined;

/** A 400 whose message names the first offending field (an unknown key by its own path: `aggregation.composite_tools`). */
export function invalidParams(error: z.ZodError): HangarError {
	const [first, ...rest] = error.issues;
	const unknownKey = first?.code === 'unrecognized_keys' ? first.keys[0] : undefined;
	const path = [...(first?.path ?? []), ...(unknownKey === undefined ? [] : [unknownKey])];
	const field = path.length ? path.join('.') : 'body';
	const more = rest.length ? ` (and ${rest.length} more problem${rest.length > 1 ? 's' : ''})` : '';
	const message = unknownKey === undefined ? (first?.message ?? 'invalid value') : 'unknown field';
	// A message that already says `invalid <field>: …` is not prefixed a second time.
	const last = path.at(-1);
	const named = last !== undefined && message.toLowerCase().startsWith(`invalid ${String(last).toLowerCase()}`);
	return new HangarError(400, `${named ? '' : `invalid ${field}: `}${message}${more}`, 'invalid_params');
}

/**
 * Where `value` has a key named `__proto__`, as a field path. Schemas drop such a key without a
 * word (assigning it to a plain object sets the prototype), so a user's entry would vanish:
 * it is refused instead, whichever door the params came through.
 */
function prototypeKeyIn(value: unknown): string | undefined {
	if (typeof value !== 'object' || value === null) return undefined;
	for (const key of Object.keys(value)) {
		if (key === '__proto__') return key;
		const inner = prototypeKeyIn((value as Record<string, unknown>)[key]);
		if (inner) return `${key}.${inner}`;
	}
	return undefined;
}

/**
 * How long closing waits for work the calls started in the background (a workload's stop or
 * removal) before the process exits anyway: what is left, the next daemon's reconcile finishes.
 */
const BACKGROUND_WAIT_MS = 30_000;

/** Runs around every call (tracing). */
export interface OperationInterceptor {
	/** `run` is the call, validation included. */
	around(method: string, run: () => Promise<unknown>): Promise<unknown>;
	/** Sends what is pending. */
	close(): Promise<void>;
}

export class Dispatcher {
	private readonly handlers = new Map<string, Handler<OperationDefinition>>();
	private readonly rows = new Map<string, OperationDefinition>();
	private readonly rowsOfArea = new Map<string, readonly OperationDefinition[]>();
	private readonly loading = new Map<string, Promise<Area>>();
	private readonly loadingRows = new Map<string, Promise<void>>();
	/** Settled before the first call runs, so that none escapes it. */
	private interceptor: Promise<OperationInterceptor | undefined> = Promise.resolve(undefined);
	/** What resolves once the services' background work is done (`waitOnClose`). */
	private readonly backgroundWork: Array<() => Promise<void>> = [];

	/** `areas`: by name, in the order the table lists them (REST routes, the OpenAPI document). */
	constructor(
		private readonly areas: ReadonlyMap<string, AreaLoader>,
		private readonly log: Logger,
		private readonly plainParams?: PlainParamsCheck,
	) {}

	/** Every row of the table, every area loaded (a door that lists them all: REST). */
	async operations(): Promise<OperationDefinition[]> {
		await Promise.all([...this.areas.keys()].map((area) => this.loadRows(area)));
		return [...this.areas.keys()].flatMap((area) => this.rowsOfArea.get(area) ?? []);
	}

	/** Puts `interceptor` (once it resolves) around every call. */
	intercept(interceptor: Promise<OperationInterceptor | undefined>): void {
		this.interceptor = interceptor;
	}

	/** Validates `params` against the row and runs its service; throws only `HangarError`. */
	async call(method: string, params: unknown, context: OperationContext): Promise<unknown> {
		const interceptor = await this.interceptor;
		return interceptor ? interceptor.around(method, () => this.run(method, params, context)) : this.run(method, params, context);
	}

	/** Has `close` wait until `idle` resolves: work the calls started in the background, which answered 202 before it ended. */
	waitOnClose(idle: () => Promise<void>): void {
		this.backgroundWork.push(idle);
	}

	/**
	 * Before the process exits: the background work ends (a workload removed just before the
	 * editor closed is removed, its proxy stopped), for up to BACKGROUND_WAIT_MS; then what the
	 * interceptor holds is sent.
	 */
	async close(): Promise<void> {
		const done = await within(Promise.all(this.backgroundWork.map((idle) => idle())).then(() => true), BACKGROUND_WAIT_MS, false);
		if (!done) this.log.warn(`exiting with work still running after ${BACKGROUND_WAIT_MS / 1000} s; the next start finishes it`);
		await (await this.interceptor)?.close();
	}

	/** The area's services and handlers. */
	private load(area: string): Promise<Area> {
		let loading = this.loading.get(area);
		if (!loading) {
			loading = this.areas.get(area)!().then((loaded) => {
				for (const { method, handler } of loaded.implementations) this.handlers.set(method, handler);
				return loaded;
			});
			this.loading.set(area, loading);
		}
		return loading;
	}

	/** The area's rows (zod and its schemas), each handler checked to serve one of them. */
	private loadRows(area: string): Promise<void> {
		let loading = this.loadingRows.get(area);
		if (!loading) {
			loading = this.load(area).then(async ({ rows: loadRows, implementations }) => {
				const rows = await loadRows();
				for (const row of rows) this.rows.set(row.method, row);
				for (const { method } of implementations) if (!this.rows.has(method)) throw new Error(`${method} is not a row of the ${area} area`);
				this.rowsOfArea.set(area, rows);
			});
			this.loadingRows.set(area, loading);
		}
		return loading;
	}

	private async run(method: string, params: unknown, context: OperationContext): Promise<unknown> {
		const area = method.slice(0, method.indexOf('/'));
		const polluted = prototypeKeyIn(params);
		// The plain check knows only the table's methods, and `__proto__` is refused below.
		let checked = polluted ? undefined : this.plainParams?.(method, params ?? {});
		if (this.areas.has(area)) {
			try {
				await (checked ? this.load(area) : this.loadRows(area));
			} catch (error) {
				throw this.hide(method, error, context);
			}
		}
		if (!checked) {
			const row = this.rows.get(method);
			if (!row) throw new HangarError(404, `unknown method ${method}`, 'unknown_method');
			if (polluted) throw new HangarError(400, `invalid ${polluted}: the name "__proto__" is not allowed`, 'invalid_params');
			const parsed = row.params.safeParse(params ?? {});
			if (!parsed.success) throw invalidParams(parsed.error);
			checked = parsed;
		}
		const handler = this.handlers.get(method);
		if (!handler) throw HangarError.notImplemented(method);
		try {
			return await handler(checked.data, context);
		} catch (error) {
			throw this.hide(method, error, context);
		}
	}

	/** Keeps expected errors; turns anything else into a 500 whose detail goes to the log only. */
	private hide(method: string, error: unknown, context: OperationContext): HangarError {
		if (error instanceof HangarError) return error;
		if (context.signal.aborted) return HangarError.cancelled(method);
		const requestId = crypto.randomUUID();
		this.log.error(`${method} failed (request ${requestId}): ${(error as Error)?.stack ?? String(error)}`);
		return new HangarError(500, `internal error (request id ${requestId})`, 'internal_error');
	}
}
