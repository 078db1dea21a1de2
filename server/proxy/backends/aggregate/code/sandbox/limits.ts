/** The limits of one script, as both sides of the sandbox (pool.ts, worker.ts) read them. */
import type { CodeLimits } from '../../../../../../protocol/runConfig.js';

export interface ScriptLimits {
	readonly timeoutMs: number;
	readonly memoryBytes: number;
	readonly stackBytes: number;
	readonly maxToolCalls: number;
	readonly maxCallsInFlight: number;
	readonly maxOutputBytes: number;
}

/** Each limit, configured or its default (documented in ../README.md). */
export function limitsOf(config: CodeLimits | undefined): ScriptLimits {
	return {
		timeoutMs: config?.timeout_ms ?? 30_000,
		memoryBytes: (config?.memory_mib ?? 64) * 1024 * 1024,
		// More than 256 KiB of the engine's stack can overflow the thread's own before QuickJS notices.
		stackBytes: (config?.stack_kib ?? 256) * 1024,
		maxToolCalls: config?.max_tool_calls ?? 100,
		maxCallsInFlight: config?.max_calls_in_flight ?? 8,
		maxOutputBytes: config?.max_output_bytes ?? 64 * 1024,
	};
}

/** A limit a script went over: it ends the script, whatever the script catches. */
export class ScriptLimitError extends Error {}

/** What the host answers a script's `__host(name, json)` with: a JSON value, or an Error whose message the script sees. */
export type HostFunction = (name: string, args: unknown) => Promise<unknown>;

/**
 * How a script ended. `json`: what it returned, as the engine wrote it as JSON (undefined for
 * `undefined`), passed on as text so that it is parsed once, by whoever needs the value.
 */
export type ScriptOutcome =
	| { readonly ok: true; readonly json: string | undefined; readonly logs: readonly string[] }
	| { readonly ok: false; readonly error: string; readonly logs: readonly string[] };
