/**
 * The engine of run_code scripts (server/proxy/backends/aggregate/code/sandbox/engine.ts), in
 * process: a script that comes before the worker's `recycle` (the pool says when, after the
 * last script's answer is out) still has the memory the last script held.
 */
import { describe, expect, it } from 'vitest';
import { runScript, warmUp } from '../server/proxy/backends/aggregate/code/sandbox/engine.js';
import { limitsOf } from '../server/proxy/backends/aggregate/code/sandbox/limits.js';

describe('the engine between scripts', () => {
	it('frees the last script before running the next, even when no recycle came between them', async () => {
		const limits = limitsOf({ memory_mib: 16 });
		await warmUp(limits);
		// About 60 % of the limit, kept by the script's global: two such scripts at once would go over it.
		const code = "const kept = []; for (let i = 0; i < 2e5; i++) kept.push('x'.repeat(50) + i); globalThis.kept = kept; return kept.length;";
		for (let round = 0; round < 3; round++) {
			const outcome = await runScript({ code, prelude: '', cancelled: () => false, send: () => 0, nextAnswer: () => undefined });
			expect(outcome).toEqual({ ok: true, json: '200000', logs: [] });
		}
	});
});
