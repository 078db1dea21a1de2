/**
 * The sandbox of run_code (server/proxy/backends/aggregate/code/sandbox/), its pool in process and
 * its workers as built (`npm run build`): each attack a script may try ends with an error
 * naming what held it, and the scripts around it run on unharmed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { toolsPrelude } from '../server/proxy/backends/aggregate/code/sandbox/globals.js';
import { limitsOf, ScriptLimitError, type HostFunction, type ScriptLimits, type ScriptOutcome } from '../server/proxy/backends/aggregate/code/sandbox/limits.js';
import { SandboxPool } from '../server/proxy/backends/aggregate/code/sandbox/pool.js';

const WORKER = new URL('../dist/server/proxy/backends/aggregate/code/sandbox/worker.js', import.meta.url);
/** A pool per set of limits, as each aggregate has. */
const pools = new Map<string, SandboxPool>();
afterAll(() => pools.forEach((pool) => pool.close()));

function poolOf(limits: ScriptLimits): SandboxPool {
	const key = JSON.stringify(limits);
	let pool = pools.get(key);
	if (!pool) pools.set(key, (pool = new SandboxPool(limits, WORKER)));
	return pool;
}

const PRELUDE = `globalThis.host = async (name, args) => JSON.parse(await __host(name, JSON.stringify(args)));
globalThis.console = { log: (...parts) => __log(parts.map((part) => typeof part === 'string' ? part : JSON.stringify(part)).join(' ')) };`;

const echo: HostFunction = async (name, args) => ({ name, args });

/** A script's outcome, its returned JSON parsed. */
type Outcome = { readonly ok: true; readonly value: unknown; readonly logs: readonly string[] } | Extract<ScriptOutcome, { ok: false }>;

async function run(code: string, options: { host?: HostFunction; limits?: Parameters<typeof limitsOf>[0]; signal?: AbortSignal; prelude?: string } = {}): Promise<Outcome> {
	const outcome = await poolOf(limitsOf({ timeout_ms: 2_000, ...options.limits })).run({ code, prelude: options.prelude ?? PRELUDE, host: options.host ?? echo, signal: options.signal ?? new AbortController().signal });
	return outcome.ok ? { ok: true, value: outcome.json === undefined ? undefined : (JSON.parse(outcome.json) as unknown), logs: outcome.logs } : outcome;
}

function errorOf(outcome: Outcome): string {
	expect(outcome.ok, JSON.stringify(outcome)).toBe(false);
	return (outcome as { error: string }).error;
}

describe('a script', { timeout: 30_000 }, () => {
	it('returns what it returns and logs what it logs, calling the host with JSON only', async () => {
		const outcome = await run(`console.log('hi', {a: 1}); const answer = await host('echo', {n: 2}); return { answer, sum: 1 + 2 };`);
		expect(outcome).toEqual({ ok: true, value: { answer: { name: 'echo', args: { n: 2 } }, sum: 3 }, logs: ['hi {"a":1}'] });
	});

	it("fails with its error and the script's own line and column", async () => {
		expect(errorOf(await run('const a = 1;\n  null.x;'))).toBe("TypeError: cannot read property 'x' of null (line 2, column 7)");
		expect(errorOf(await run('let x = ;'))).toMatch(/^SyntaxError: .*line 1/);
	});

	it("runs TypeScript with its types stripped, its errors at the script's own line and column", async () => {
		expect(await run('const n: number = 2;\nreturn n satisfies number;')).toMatchObject({ ok: true, value: 2 });
		expect(errorOf(await run('const a: number = 1;\n  const b: null = null; b!.x;'))).toBe("TypeError: cannot read property 'x' of null (line 2, column 27)");
		expect(errorOf(await run('enum E { A }'))).toMatch(/^SyntaxError: TypeScript enum is not supported: .* plain JavaScript \(line 1, column 1\)$/);
	});

	it('sees a host error as an exception it may catch', async () => {
		const outcome = await run(`try { await host('x', {}); } catch (error) { return 'caught ' + error.message; }`, { host: async () => { throw new Error('denied'); } });
		expect(outcome).toMatchObject({ ok: true, value: 'caught denied' });
	});

	it('cannot catch a limit the host says it went over', async () => {
		const outcome = await run(`try { await host('x', {}); } catch (error) { return 'caught'; }`, { host: async () => { throw new ScriptLimitError('tool call limit: 100'); } });
		expect(errorOf(outcome)).toBe('tool call limit: 100');
	});

	it('sees no host: no process, require, fetch, timers, or a host object behind its functions', async () => {
		const outcome = await run(`return [typeof process, typeof require, typeof fetch, typeof setTimeout, typeof globalThis.__host.constructor.constructor('return this')().process, typeof std, typeof os, Object.getOwnPropertyNames(globalThis).filter((name) => !/^[A-Z]/.test(name)).sort().join()];`);
		expect(outcome).toMatchObject({ ok: true, value: ['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', expect.any(String)] });
		const globals = ((outcome as { value: string[] }).value[7] ?? '').split(',');
		for (const name of ['process', 'require', 'fetch', 'setTimeout', 'module', 'Buffer']) expect(globals).not.toContain(name);
	});

	it('returns its result as JSON even when it replaced JSON.stringify', async () => {
		expect(await run(`JSON.stringify = () => '{not json'; return { sum: 1 + 2 };`)).toEqual({ ok: true, value: { sum: 3 }, logs: [] });
	});

	it('has a clock coarse to the second, with no finer one behind its Date', async () => {
		const outcome = await run('return [Date.now() % 1000, new Date().getMilliseconds()];');
		expect(outcome).toMatchObject({ ok: true, value: [0, 0] });
		// Each constructor up Date's chain, read at three moments a millisecond or more apart.
		const behind = await run(`const read = [];
for (let round = 0; round < 3; round++) {
	for (let D = Date; typeof D === 'function' && D !== Function.prototype; D = Object.getPrototypeOf(D)) read.push(new D().getMilliseconds(), D.now() % 1000);
	for (let spin = 0; spin < 2e5; spin++);
}
return read;`);
		expect(behind.ok).toBe(true);
		expect((behind as { value: number[] }).value.every((ms) => ms === 0)).toBe(true);
	});

	it('cannot pollute what the host passes in nor reach it: results cross as JSON', async () => {
		const shared = { ok: true };
		const outcome = await run(`const value = await host('x', {}); value.__proto__.polluted = 1; Object.prototype.polluted = 2; value.constructor.constructor('return 1')(); return value;`, { host: async () => shared });
		expect(outcome.ok).toBe(true);
		expect(({} as Record<string, unknown>).polluted).toBeUndefined();
		expect(shared).toEqual({ ok: true });
	});
});

describe('each limit ends the script with an error naming it', { timeout: 60_000 }, () => {
	it('an infinite loop: the time limit', async () => {
		expect(errorOf(await run('for (;;) {}', { limits: { timeout_ms: 300 } }))).toMatch(/^time limit/);
	});

	it('an infinite loop after an await: the time limit', async () => {
		expect(errorOf(await run(`await host('x', {}); while (true) {}`, { limits: { timeout_ms: 300 } }))).toMatch(/^time limit/);
	});

	it('a wait on a host call that never answers: the time limit', async () => {
		expect(errorOf(await run(`await host('x', {});`, { host: () => new Promise(() => undefined), limits: { timeout_ms: 300 } }))).toMatch(/^time limit/);
	});

	it('catastrophic regex backtracking: the time limit', async () => {
		expect(errorOf(await run(`return /^(a+)+$/.test('a'.repeat(40) + 'b');`, { limits: { timeout_ms: 300 } }))).toMatch(/^time limit/);
	});

	it('an array bomb and a string bomb: the memory limit', async () => {
		expect(errorOf(await run('const all = []; for (;;) all.push(new Array(100000).fill(7));', { limits: { memory_mib: 8 } }))).toMatch(/^memory limit/);
		expect(errorOf(await run('let text = "x"; for (;;) text += text;', { limits: { memory_mib: 8 } }))).toMatch(/^memory limit/);
	});

	it('a bomb the script tries to catch still ends it', async () => {
		expect(errorOf(await run('try { const all = []; for (;;) all.push(new Array(100000).fill(7)); } catch (e) { return "survived"; }', { limits: { memory_mib: 8 } }))).toMatch(/^memory limit/);
	});

	it('deep recursion: the stack limit', async () => {
		expect(errorOf(await run('function down(n) { return down(n + 1) + 1; } return down(0);'))).toMatch(/^stack limit/);
		expect(errorOf(await run('const deep = (n) => JSON.stringify({ n: [deep] }) + deep(n + 1); return deep(0);'))).toMatch(/^stack limit/);
	});

	it('a promise flood: the time or memory limit', async () => {
		expect(errorOf(await run('const flood = () => Promise.resolve().then(flood); flood(); await new Promise(() => {});', { limits: { timeout_ms: 300, memory_mib: 8 } }))).toMatch(/^(time|memory) limit/);
	});

	it('huge logs and a huge result: the output limit', async () => {
		expect(errorOf(await run('for (let i = 0; i < 1000; i++) console.log("x".repeat(1000));', { limits: { max_output_bytes: 4096 } }))).toMatch(/^output limit/);
		expect(errorOf(await run('return "x".repeat(10000);', { limits: { max_output_bytes: 4096 } }))).toMatch(/^output limit/);
	});

	it('a cancellation ends a running script', async () => {
		const controller = new AbortController();
		const busy = run('for (;;) {}', { signal: controller.signal, limits: { timeout_ms: 10_000 } });
		const waiting = run('await host("x", {});', { host: () => new Promise(() => undefined), signal: controller.signal, limits: { timeout_ms: 10_000 } });
		// The proxy's event loop is free while a script spins: this timer fires.
		setTimeout(() => controller.abort(), 100);
		expect(errorOf(await busy)).toBe('the call was cancelled');
		expect(errorOf(await waiting)).toBe('the call was cancelled');
	});

	it('a cancellation wakes a script waiting on the host at once, even one cancelled while its worker started', async () => {
		// Limits of their own: a pool with no worker started yet.
		const limits = { timeout_ms: 20_000, max_output_bytes: 12_345 };
		const never: HostFunction = () => new Promise(() => undefined);
		const early = new AbortController();
		const cancelledEarly = run('await host("x", {});', { host: never, signal: early.signal, limits });
		early.abort();
		const late = new AbortController();
		const started = performance.now();
		const cancelledLate = run('await host("x", {});', { host: never, signal: late.signal, limits });
		setTimeout(() => late.abort(), 1_000);
		expect(errorOf(await cancelledEarly)).toBe('the call was cancelled');
		expect(errorOf(await cancelledLate)).toBe('the call was cancelled');
		// Long before the time limit: the worker sleeping on its host call was woken.
		expect(performance.now() - started).toBeLessThan(10_000);
	});
});

describe('host calls', { timeout: 30_000 }, () => {
	it('many at once are answered each to its own call, in whatever order the answers come', async () => {
		const host: HostFunction = async (_, args) => {
			const { index } = args as { index: number };
			await new Promise((resolve) => setTimeout(resolve, (index * 7) % 13));
			return index * 2;
		};
		const outcome = await run('return await Promise.all(Array.from({ length: 50 }, (_, index) => host("double", { index })));', { host });
		expect(outcome).toMatchObject({ ok: true, value: Array.from({ length: 50 }, (_, index) => index * 2) });
	});
});

describe('scripts side by side', { timeout: 60_000 }, () => {
	it('never see each other, while bombs go off around them', async () => {
		const outcomes = await Promise.all([
			run('globalThis.secret = 42; Object.prototype.leak = 1; await host("x", {}); return "set";'),
			run('for (;;) {}', { limits: { timeout_ms: 300 } }),
			run('let text = "x"; for (;;) text += text;', { limits: { memory_mib: 8 } }),
			run('await host("x", {}); return [typeof globalThis.secret, ({}).leak];'),
		]);
		expect(outcomes[0]).toMatchObject({ ok: true, value: 'set' });
		expect(outcomes[1]!.ok).toBe(false);
		expect(outcomes[2]!.ok).toBe(false);
		expect(outcomes[3]).toMatchObject({ ok: true, value: ['undefined', null] });
		expect(await run('return typeof globalThis.secret')).toMatchObject({ ok: true, value: 'undefined' });
	});
});

describe("an aggregate's globals, built by the host from its catalog of tools", { timeout: 30_000 }, () => {
	// Parsed: `__proto__` is a tool's name here, not an object's prototype.
	const prelude = toolsPrelude(JSON.parse('{"tracker":{"get_issue":"tracker_get_issue","__proto__":"tracker___proto__"},"notes":{"add_note":"notes_add_note"}}') as Record<string, Record<string, string>>);
	const tools = (code: string, options: { host?: HostFunction } = {}) => run(code, { ...options, prelude });
	const denied: HostFunction = async () => {
		throw new Error('denied');
	};

	it('call the host with JSON: a tool by its exposed name, call_tool, find_tools and describe', async () => {
		expect(await tools('return await tools.tracker.get_issue({ id: 1 });')).toMatchObject({ ok: true, value: { name: 'call', args: { name: 'tracker_get_issue', arguments: { id: 1 } } } });
		expect(await tools('return await tools.tracker.__proto__();')).toMatchObject({ ok: true, value: { name: 'call', args: { name: 'tracker___proto__', arguments: {} } } });
		expect(await tools('return await call_tool("notes_add_note", { text: "x" });')).toMatchObject({ ok: true, value: { args: { name: 'notes_add_note', arguments: { text: 'x' } } } });
		expect(await tools('return [await find_tools("q"), await find_tools("q", 3), await describe("a.b")];')).toMatchObject({
			ok: true,
			value: [{ name: 'find', args: { query: 'q' } }, { name: 'find', args: { query: 'q', limit: 3 } }, { name: 'describe', args: { name: 'a.b' } }],
		});
		expect(await tools('return [typeof __host, typeof __log];')).toMatchObject({ ok: true, value: ['undefined', 'undefined'] });
	});

	it("reject a failed call with an Error at the script's line, and arguments JSON cannot carry the same way", async () => {
		expect(errorOf(await tools('\n\n  await tools.tracker.get_issue({ id: 1 });', { host: denied }))).toBe('Error: denied (line 3, column 32)');
		expect(await tools('try { await call_tool("x", {}); } catch (error) { return [error instanceof Error, error.message]; }', { host: denied })).toMatchObject({ ok: true, value: [true, 'denied'] });
		expect(errorOf(await tools('return await tools.tracker.get_issue({ big: 1n });'))).toBe('Error: Do not know how to serialize a BigInt (line 1, column 37)');
	});

	it('answer an unknown tool or member with a function that rejects naming it; then, toJSON and inherited names stay what they are', async () => {
		expect(errorOf(await tools('await tools.tracker.nope();'))).toMatch(/^Error: unknown tool "tracker.nope" \(hidden by policy or filter, or not served; find_tools finds tools by what they do\) \(line 1, column 25\)$/);
		expect(errorOf(await tools('await tools.nobody.x();'))).toMatch(/^Error: unknown tool "nobody.x"/);
		expect(await tools('return [typeof tools.then, typeof tools.tracker.toJSON, typeof tools.tracker.toString, Object.keys(tools), Object.keys(tools.tracker), Object.isFrozen(tools), Object.isFrozen(tools.tracker)];')).toMatchObject({
			ok: true,
			value: ['undefined', 'undefined', 'function', ['tracker', 'notes'], ['get_issue', '__proto__'], true, true],
		});
	});

	it('log strings as they are and other values as JSON, or as text when they cannot be JSON', async () => {
		const outcome = await tools('const loop = {}; loop.loop = loop; console.log("a", { b: 1 }, undefined, null, 2); console.warn(loop); console.error(); return Object.isFrozen(console);');
		expect(outcome).toEqual({ ok: true, value: true, logs: ['a {"b":1}  null 2', '[object Object]', ''] });
	});

	it("keep the context's own JSON: a script that replaced JSON.stringify and JSON.parse still calls its tools", async () => {
		expect(await tools('JSON.stringify = () => "{bad"; JSON.parse = () => "parsed"; return await tools.tracker.get_issue({ id: 1 });')).toMatchObject({
			ok: true,
			value: { name: 'call', args: { name: 'tracker_get_issue', arguments: { id: 1 } } },
		});
	});
});
