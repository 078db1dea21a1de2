/**
 * The engine of an aggregate's scripts (`run_code`), run in a sandbox worker (worker.ts):
 * QuickJS compiled to WebAssembly, never Node's `vm`. A script sees only the engine's own
 * globals (no file system, network, environment, process or timers; the engine's `Date` reads
 * its thread's `Date.now`, which a sandbox worker makes coarse to the second: worker.ts) and
 * those of the caller's prelude: an aggregate's tools, built by the host (globals.ts), or what
 * source builds on two functions, `__host(name, json)` and `__log(text)`; only strings cross
 * the boundary, JSON in both directions, so no host object is ever reachable.
 *
 * A script is JavaScript; one the engine cannot parse is tried again with its TypeScript types
 * stripped (typeStrip.ts), which leaves its lines and columns where they were.
 *
 * The WebAssembly module is loaded once per worker; each script gets a runtime and context of
 * its own, taken from a few made ahead and disposed after it, so a script never sees another's
 * state. A context is made ahead with the last script's prelude (a quarter to half a
 * millisecond of the engine's time, and the same for each script of an aggregate's tools), its
 * limits set and its host functions serving whichever script takes it; it is freed, and the next
 * one made, by `recycle` once the script's answer is on its way.
 *
 * A script runs synchronously but for the TypeScript stripper: a host call is sent as the script
 * makes it, and while the script waits, the engine waits for the answers (`nextAnswer`, which
 * blocks the worker's thread) and runs the script on as each comes.
 *
 * The limits: wall time (an interrupt while the script runs, the wait's timeout while it waits),
 * memory (the WebAssembly memory's maximum), stack (the engine's own check), output bytes; going
 * over one ends the script with an error naming it. The host may end the script the same way by
 * answering a call with a limit.
 */
import type { JSPromiseState, QuickJSContext, QuickJSDeferredPromise, QuickJSHandle, QuickJSRuntime, QuickJSSyncVariant, QuickJSWASMModule } from 'quickjs-emscripten-core';
import { catalogOf, installTools, type ToolHost } from './globals.js';
import { ScriptLimitError, type ScriptLimits, type ScriptOutcome } from './limits.js';
import { stripTypes } from './typeStrip.js';

/** The host's answer to the script's call `call`: a JSON value, an error the script sees, or a limit that ends the script. */
export interface HostAnswer {
	readonly call: number;
	readonly json?: string;
	readonly error?: string;
	readonly limit?: string;
}

export interface ScriptRun {
	/** The script: an async function body. */
	readonly code: string;
	/**
	 * What builds the globals the script uses: an aggregate's catalog of tools (globals.ts, the
	 * globals built by the host), or source run before it in the same context, on `__host` and `__log`.
	 */
	readonly prelude: string;
	/** Whether the call was cancelled: read while the script runs, so a busy script ends too, and after each wait. */
	readonly cancelled: () => boolean;
	/** Sends a host call, its name and its arguments as JSON text; returns the number its answer carries. */
	readonly send: (name: string, args: string) => number;
	/** The next answer to a host call, waiting at most `timeoutMs`: undefined when none came (the script's time may be up, or it was cancelled). */
	readonly nextAnswer: (timeoutMs: number) => HostAnswer | undefined;
}

/** The script's first line in the text evaluated: the line after the wrapper's opening. */
const WRAPPER_LINES = 1;
const SCRIPT_FILE = 'script.js';
/** Contexts kept ready, so that a script's start costs no engine set-up. */
const WARM = 2;
const CANCELLED = 'the call was cancelled';

/** The engine's own memory, before any script: what the WebAssembly module starts with. */
const BASE_MEMORY_BYTES = 16 * 1024 * 1024;
const PAGE_BYTES = 64 * 1024;

/** `WebAssembly.Memory`, which the project's TypeScript libraries leave undeclared. */
interface WasmMemory {
	grow(pages: number): number;
}
const { Memory } = (globalThis as unknown as { WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory } }).WebAssembly;

let engine: Promise<QuickJSWASMModule> | undefined;
/** The engine, once loaded. */
let loaded: QuickJSWASMModule | undefined;
/** The limits of every script, given when the engine loads. */
let limits: ScriptLimits;
/** Whether the engine asked for more memory than its maximum: a script went over its limit. */
let memoryRefused = false;
/** The engine failed inside (a WebAssembly trap, a runtime it could not free): the worker is to be replaced. */
let broken = false;

/**
 * A context made ahead of its script, with `prelude`, its host functions and interrupt handler
 * calling `slot.script`. `stringify` is the context's own JSON.stringify, taken
 * before any script could replace it: a script's result is JSON whatever the script changed.
 */
interface Prepared {
	readonly runtime: QuickJSRuntime;
	readonly context: QuickJSContext;
	readonly prelude: string;
	readonly slot: { script?: Script };
	/** Freed with the context. */
	readonly handles: QuickJSHandle[];
	readonly json: QuickJSHandle;
	readonly stringify: QuickJSHandle;
	/** The host functions a prelude of source builds on, set as `__host` and `__log` when one is evaluated. */
	readonly host: QuickJSHandle;
	readonly log: QuickJSHandle;
	/** JSON.parse, for the answers of a catalog's globals (globals.ts), which parse them on the host's side. */
	parse?: QuickJSHandle;
}
const warm: Prepared[] = [];
/** The prelude of the last script: the one the contexts made ahead get. */
let lastPrelude = '';
/** The last script, when it ended well: its context is freed by `recycle`, after its answer is sent. */
let lastScript: Script | undefined;

/**
 * Loads the engine for scripts of `scriptLimits`, and warms its contexts. The memory limit is
 * the WebAssembly memory's maximum: QuickJS's own limit counts nothing in these builds (they lack
 * malloc_usable_size), a memory that cannot grow it cannot miss.
 */
export async function warmUp(scriptLimits: ScriptLimits): Promise<void> {
	limits = scriptLimits;
	const scriptMemoryBytes = limits.memoryBytes;
	engine ??= (async () => {
		const [{ newQuickJSWASMModuleFromVariant, newVariant }, variant] = await Promise.all([import('quickjs-emscripten-core'), import('@jitl/quickjs-wasmfile-release-sync')]);
		const maximumBytes = BASE_MEMORY_BYTES + Math.ceil(scriptMemoryBytes / PAGE_BYTES) * PAGE_BYTES;
		const wasm = new Memory({ initial: BASE_MEMORY_BYTES / PAGE_BYTES, maximum: maximumBytes / PAGE_BYTES });
		// The engine grows its memory through this method: a refusal is the sign of a script over its limit.
		const grow = wasm.grow.bind(wasm);
		wasm.grow = (pages) => {
			try {
				return grow(pages);
			} catch (error) {
				memoryRefused = true;
				throw error;
			}
		};
		// Its types see the CommonJS build; the ES module's namespace holds the variant as `default`.
		const base = (variant as unknown as { default: QuickJSSyncVariant }).default;
		return newQuickJSWASMModuleFromVariant(newVariant(base, { wasmMemory: wasm as never }) as QuickJSSyncVariant);
	})();
	loaded = await engine;
	refill(loaded);
}

/** A runtime and context with `prelude`; throws when the engine fails. */
function prepare(module: QuickJSWASMModule, prelude: string): Prepared {
	const runtime = module.newRuntime();
	runtime.setMaxStackSize(limits.stackBytes);
	const context = runtime.newContext();
	const slot: { script?: Script } = {};
	runtime.setInterruptHandler(() => slot.script?.interrupted() ?? false);
	const host = context.newFunction('__host', (name, args) => slot.script!.hostCall(name, args));
	const log = context.newFunction('__log', (text) => slot.script!.log(text));
	const json = context.getProp(context.global, 'JSON');
	const stringify = context.getProp(json, 'stringify');
	const prepared: Prepared = { runtime, context, prelude: '', slot, handles: [host, log, json, stringify], json, stringify, host, log };
	try {
		return withPrelude(prepared, prelude, true);
	} catch (error) {
		release(prepared);
		throw error;
	}
}

/**
 * `prepared` with `prelude` (it has none yet, or the empty one): a catalog's globals built, or
 * source evaluated with `__host` and `__log` set (the source may take them away).
 */
function withPrelude(prepared: Prepared, prelude: string, fresh = false): Prepared {
	const { context, slot, handles } = prepared;
	const catalog = catalogOf(prelude);
	if (catalog) {
		// A context made ahead with the empty prelude (before any script) has the functions a prelude of source builds on.
		if (!fresh) evaluate(context, 'delete globalThis.__host; delete globalThis.__log;', 'prelude.js');
		const error = context.getProp(context.global, 'Error');
		const parse = context.getProp(prepared.json, 'parse');
		handles.push(error, parse);
		handles.push(...installTools(context, catalog, () => slot.script!, { json: prepared.json, error }));
		return { ...prepared, prelude, parse };
	}
	context.setProp(context.global, '__host', prepared.host);
	context.setProp(context.global, '__log', prepared.log);
	if (prelude) evaluate(context, prelude, 'prelude.js');
	return { ...prepared, prelude };
}

function evaluate(context: QuickJSContext, source: string, file: string): void {
	const result = context.evalCode(source, file);
	if (result.error) {
		const error = result.error.consume((handle) => context.dump(handle)) as { message?: unknown };
		throw new Error(`the sandbox could not start: ${typeof error?.message === 'string' ? error.message : JSON.stringify(error)}`);
	}
	result.value.dispose();
}

function release({ runtime, context, handles }: Prepared): void {
	for (const handle of handles) if (handle.alive) handle.dispose();
	context.dispose();
	runtime.dispose();
}

/**
 * Whether the engine's memory was refused growth: the script went over its memory limit, even
 * if it caught the error the failed allocation threw.
 */
function memoryFull(): boolean {
	return memoryRefused;
}

/** Whether the engine failed and its worker should end. */
export function isBroken(): boolean {
	return broken;
}

/**
 * A context for a script of `prelude`: one made ahead for it (the one made last, whose memory is
 * the likeliest still in the processor's caches), else one with the empty prelude, else a new one.
 */
function contextFor(module: QuickJSWASMModule, prelude: string): Prepared {
	const at = warm.findLastIndex((each) => each.prelude === prelude);
	if (at >= 0) return warm.splice(at, 1)[0]!;
	const bare = warm.findIndex((each) => each.prelude === '');
	if (bare < 0) return prepare(module, prelude);
	const taken = warm.splice(bare, 1)[0]!;
	try {
		return withPrelude(taken, prelude);
	} catch (error) {
		release(taken);
		throw error;
	}
}

/** Makes contexts ahead for scripts of the last prelude; those of another are freed. */
function refill(module: QuickJSWASMModule): void {
	try {
		for (const stale of warm.filter((each) => each.prelude !== lastPrelude && each.prelude !== '')) {
			warm.splice(warm.indexOf(stale), 1);
			release(stale);
		}
		while (!broken && warm.length < WARM) warm.push(prepare(module, lastPrelude));
	} catch {
		broken = true;
	}
}

/**
 * Runs one script; never rejects: a failure, a limit or a cancellation is an outcome with an
 * error. Call `recycle` after each, once its answer is on its way.
 */
export async function runScript(run: ScriptRun): Promise<ScriptOutcome> {
	// A script that comes before the last one's `recycle` frees that one's memory first; the contexts made ahead wait for the `recycle`.
	freeLastScript();
	if (!loaded) return { ok: false, error: 'the sandbox failed: the engine is not loaded', logs: [] };
	let prepared: Prepared;
	try {
		prepared = contextFor(loaded, run.prelude);
	} catch (error) {
		broken = true;
		return { ok: false, error: (error as Error).message, logs: [] };
	}
	lastPrelude = run.prelude;
	const script = new Script(run, prepared);
	const outcome = await script.run();
	// A script that ended well leaves a sound engine: its context is freed after its answer is on its way.
	if (outcome.ok && !memoryFull()) lastScript = script;
	else script.dispose();
	return outcome;
}

/** Frees the last script's context, if it is not yet, and makes contexts ahead for the next scripts. */
export function recycle(): void {
	freeLastScript();
	if (loaded) refill(loaded);
}

function freeLastScript(): void {
	lastScript?.dispose();
	lastScript = undefined;
}

class Script implements ToolHost {
	private readonly logs: string[] = [];
	private outputBytes = 0;
	private readonly deadline: number;
	/** Why the script ended before it settled: a limit, the engine's failure or the cancellation. */
	private ended: Error | undefined;
	/** The host calls not yet answered, by number; `failure`: the Error a call of a catalog's globals rejects with. */
	private readonly pending = new Map<number, { readonly deferred: QuickJSDeferredPromise; readonly failure?: QuickJSHandle }>();
	private readonly runtime: QuickJSRuntime;
	private readonly context: QuickJSContext;

	constructor(
		private readonly options: ScriptRun,
		private readonly prepared: Prepared,
	) {
		this.deadline = performance.now() + limits.timeoutMs;
		({ runtime: this.runtime, context: this.context } = prepared);
		prepared.slot.script = this;
	}

	/** The engine's interrupt handler while the script runs: whether to stop it. */
	interrupted(): boolean {
		if (this.ended === undefined && this.options.cancelled()) this.end(new Error(CANCELLED));
		if (this.ended === undefined && memoryFull()) this.end(this.memoryLimit());
		return this.ended !== undefined || performance.now() > this.deadline;
	}

	async run(): Promise<ScriptOutcome> {
		const { context } = this;
		try {
			const source = `(async () => {\n${this.options.code}\n})()`;
			let evaluated = context.evalCode(source, SCRIPT_FILE);
			if (evaluated.error && this.isSyntaxError(evaluated.error)) {
				// Not JavaScript: TypeScript, perhaps, whose stripped types leave every position where it was.
				evaluated.error.dispose();
				const stripped = await stripTypes(source);
				if ('error' in stripped) return this.failed(`${stripped.error} (line ${stripped.line - WRAPPER_LINES}, column ${stripped.column})`);
				const stopped = this.stopped();
				if (stopped) return this.failed(stopped.message);
				evaluated = context.evalCode(stripped.code, SCRIPT_FILE);
			}
			if (evaluated.error) return this.failed(this.describe(evaluated.error));
			const settled = evaluated.value.consume((promise) => {
				this.pump();
				return this.settled(promise);
			});
			if (!settled) return this.failed(this.ended?.message ?? 'the script ended');
			if (settled.type === 'rejected') return this.failed(this.describe(settled.error));
			const json = settled.value.consume((value) => this.json(value));
			if (json !== undefined) this.count(json);
			if (memoryFull()) this.end(this.memoryLimit());
			const stopped = this.stopped();
			if (stopped) return this.failed(stopped.message);
			return { ok: true, json, logs: this.logs };
		} catch (error) {
			// A limit hit inside the engine's own calls (a trap), or an error of the host's.
			return this.failed(this.ended?.message ?? this.engineFailure(error));
		}
	}

	/**
	 * The script's promise once settled, its host calls answered meanwhile as the answers come;
	 * undefined when the script was ended first (a limit, a cancellation).
	 */
	private settled(promise: QuickJSHandle): Exclude<JSPromiseState, { type: 'pending' }> | undefined {
		for (;;) {
			// Looked at before each wait: a cancellation may have come before the script started.
			if (this.options.cancelled()) this.end(new Error(CANCELLED));
			else if (performance.now() >= this.deadline) this.end(this.timeLimit());
			if (this.ended) return undefined;
			const state = this.context.getPromiseState(promise);
			if (state.type !== 'pending') return state;
			const answer = this.options.nextAnswer(this.deadline - performance.now());
			if (answer) this.answer(answer);
		}
	}

	/** Frees what the script held; a runtime that cannot be freed marks the engine broken (its worker is then ended). */
	dispose(): void {
		try {
			for (const { deferred, failure } of this.pending.values()) {
				if (deferred.alive) deferred.dispose();
				if (failure?.alive) failure.dispose();
			}
			release(this.prepared);
		} catch {
			broken = true;
		}
		// A memory filled to its limit may be too fragmented for the next script.
		if (memoryFull()) broken = true;
	}

	/** Why the script was ended, if it was (read again after each step that may end it). */
	private stopped(): Error | undefined {
		return this.ended;
	}

	private end(reason: Error): void {
		this.ended ??= reason;
	}

	private timeLimit(): ScriptLimitError {
		return new ScriptLimitError(`time limit: the script ran past ${limits.timeoutMs} ms`);
	}

	private memoryLimit(): ScriptLimitError {
		return new ScriptLimitError(`memory limit: the script used more than ${limits.memoryBytes / 1024 / 1024} MiB`);
	}

	private failed(error: string): ScriptOutcome {
		return { ok: false, error, logs: this.logs };
	}

	/** Runs the engine's pending jobs (the script's continuations), under its limits. */
	private pump(): void {
		if (this.ended) return;
		const outcome = this.runtime.executePendingJobs();
		if (outcome.error) {
			// A job's error rejects the script's promise too, but an interrupt or a bomb may have left no promise to reject.
			const message = this.describe(outcome.error);
			if (this.limitOf(message)) this.end(new ScriptLimitError(this.limitOf(message)!));
		}
	}

	hostCall(nameHandle: QuickJSHandle, argsHandle: QuickJSHandle): QuickJSHandle {
		const { context } = this;
		const deferred = context.newPromise();
		const name = context.typeof(nameHandle) === 'string' ? context.getString(nameHandle) : '';
		const args = context.typeof(argsHandle) === 'string' ? context.getString(argsHandle) : 'null';
		this.pending.set(this.options.send(name, args), { deferred });
		return deferred.handle;
	}

	/** A host call of a catalog's globals (globals.ts): its promise resolves with the answer parsed, or rejects with `failure`. */
	ask(fn: string, args: string, failure: QuickJSHandle): QuickJSHandle {
		const deferred = this.context.newPromise();
		this.pending.set(this.options.send(fn, args), { deferred, failure });
		return deferred.handle;
	}

	/** Settles the host call an answer is for (one of an earlier script is not in `pending`), and runs the script on. */
	private answer({ call, json, error, limit }: HostAnswer): void {
		const pending = this.pending.get(call);
		if (!pending) return;
		// The script ends; its calls' promises are freed with it.
		if (limit !== undefined) return this.end(new ScriptLimitError(limit));
		const { deferred, failure } = pending;
		const { context } = this;
		try {
			if (!failure) {
				if (error !== undefined) context.newError(error).consume((handle) => deferred.reject(handle));
				else context.newString(json ?? 'null').consume((handle) => deferred.resolve(handle));
			} else {
				const parsed = error === undefined ? context.newString(json ?? 'null').consume((text) => context.callFunction(this.prepared.parse!, context.undefined, text)) : undefined;
				if (parsed && !parsed.error) parsed.value.consume((value) => deferred.resolve(value));
				else {
					// The host's message, or what JSON.parse threw: the failure made at the call takes it.
					const message = parsed?.error ? parsed.error.consume((thrown) => context.getProp(thrown, 'message')) : context.newString(error!);
					message.consume((text) => context.setProp(failure, 'message', text));
					deferred.reject(failure);
				}
				failure.dispose();
			}
		} catch (thrown) {
			this.end(new Error(this.engineFailure(thrown)));
			return;
		}
		this.pending.delete(call);
		this.pump();
	}

	log(textHandle: QuickJSHandle | string): void {
		const text = typeof textHandle === 'string' ? textHandle : this.context.typeof(textHandle) === 'string' ? this.context.getString(textHandle) : String(this.context.dump(textHandle));
		this.count(text);
		if (!this.ended) this.logs.push(text);
	}

	/** Counts bytes toward the output limit (what was logged and what is returned). */
	private count(text: string): void {
		this.outputBytes += Buffer.byteLength(text);
		if (this.outputBytes > limits.maxOutputBytes) this.end(new ScriptLimitError(`output limit: the script's logs and result passed ${limits.maxOutputBytes} bytes`));
	}

	/** A value of the script as JSON text (undefined for what JSON leaves out), made inside the engine: no host object is ever built from it. */
	private json(handle: QuickJSHandle): string | undefined {
		const result = this.context.callFunction(this.prepared.stringify, this.context.undefined, handle);
		if (result.error) throw new Error(`the result cannot be made JSON: ${this.describe(result.error)}`);
		return result.value.consume((text) => (this.context.typeof(text) === 'string' ? this.context.getString(text) : undefined));
	}

	private isSyntaxError(handle: QuickJSHandle): boolean {
		return this.context.getProp(handle, 'name').consume((name) => this.context.typeof(name) === 'string' && this.context.getString(name) === 'SyntaxError');
	}

	/** An error of the script as one line: its name, message and where in the script, or the limit it names. */
	private describe(handle: QuickJSHandle): string {
		const dumped = handle.consume((error) => this.context.dump(error)) as { name?: unknown; message?: unknown; stack?: unknown } | unknown;
		if (typeof dumped !== 'object' || dumped === null) return `the script threw ${JSON.stringify(dumped) ?? String(dumped)}`;
		const { name, message, stack } = dumped as { name?: unknown; message?: unknown; stack?: unknown };
		const text = `${typeof name === 'string' ? name : 'Error'}: ${typeof message === 'string' ? message : JSON.stringify(message)}`;
		const limit = this.limitOf(text);
		if (limit) {
			this.end(new ScriptLimitError(limit));
			return limit;
		}
		const place = typeof stack === 'string' ? stack.match(new RegExp(`${SCRIPT_FILE}:(\\d+)(?::(\\d+))?`)) : null;
		if (!place) return text;
		const line = Number(place[1]) - WRAPPER_LINES;
		return `${text} (line ${line}${place[2] ? `, column ${place[2]}` : ''})`;
	}

	/** The limit an engine error means, if it means one. */
	private limitOf(text: string): string | undefined {
		if (this.ended instanceof ScriptLimitError) return this.ended.message;
		if (/InternalError: (out of memory|string too long)|RangeError: invalid array length/.test(text)) return this.memoryLimit().message;
		if (/stack overflow/.test(text)) return `stack limit: the script recursed deeper than ${limits.stackBytes / 1024} KiB of stack allows`;
		if (/InternalError: interrupted/.test(text)) return this.ended?.message ?? this.timeLimit().message;
		return undefined;
	}

	private engineFailure(error: unknown): string {
		if (error instanceof RangeError) {
			broken = true;
			return 'stack limit: the script recursed too deep';
		}
		return `the sandbox failed: ${(error as Error).message}`;
	}
}
