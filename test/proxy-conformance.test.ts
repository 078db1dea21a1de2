/**
 * The official MCP conformance suite through Hangar's proxy: its server scenarios for the
 * 2025-11-25 and 2026-07-28 requirement sets run against each server directly (the baseline)
 * and through the workload proxy, and every check that passes directly must pass through
 * Hangar, whether or not its scenario passes as a whole (a scenario one check fails directly
 * would hide the rest), short of the few bridging gaps listed in KNOWN_GAPS. The sets are
 * computed at run time: the suite and the servers decide, not this file.
 *
 * Targets, each a container spoken to directly on its own port and through its proxy, or
 * behind its proxy over stdio:
 * - server-everything, the MCP reference server (HTTP mode; stdio mode), both sets;
 * - the SDK 2.x fixture (test/fixtures/mcp-2026) serving 2025-era clients (HTTP; stdio), which
 *   passes the whole 2025-11-25 set directly, so every scenario is compared;
 * - the same fixture speaking only 2026-07-28, for that set, with the task tools the suite's
 *   Tasks extension scenarios call (`slow_compute`, `failing_job`…), so those are compared too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passing, runConformance, type ConformanceReport, type RequirementSet } from './support/conformance.js';
import { SDK2_LEGACY_SERVERS, SERVERS, startHangar, type Hangar } from './support/proxyTargets.js';

const REQUIREMENT_SETS: RequirementSet[] = ['2025-11-25', '2026-07-28'];

let hangar: Hangar;
/** Per target, its runs of each requirement set, started together in beforeAll. */
const runs = new Map<string, Map<RequirementSet, Promise<ConformanceReport>>>();

/**
 * At most this many suite runs at once. Each is a Node process driving a server through several
 * sessions; eight at once on a two-core machine starved the servers' own start (a stdio server's
 * process for a new handshake) past the suite's 5 s limit on a request.
 */
const PARALLEL_RUNS = 2;
const waiting: Array<() => void> = [];
let running = 0;

async function inTurn<T>(work: () => Promise<T>): Promise<T> {
	if (running >= PARALLEL_RUNS) await new Promise<void>((resolve) => waiting.push(resolve));
	running++;
	try {
		return await work();
	} finally {
		running--;
		waiting.shift()?.();
	}
}

/** Runs the requirement sets one after the other against one URL (they share its server). */
function runAll(target: string, url: string, sets: RequirementSet[]): void {
	const reports = new Map<RequirementSet, Promise<ConformanceReport>>();
	let previous: Promise<unknown> = Promise.resolve();
	for (const set of sets) {
		const report = previous.catch(() => undefined).then(() => inTurn(() => runConformance(url, set)));
		report.catch(() => undefined); // awaited by the test that reads it
		reports.set(set, report);
		previous = report;
	}
	runs.set(target, reports);
}

function reportOf(target: string, set: RequirementSet): Promise<ConformanceReport> {
	return runs.get(target)!.get(set)!;
}

/**
 * The checks that pass directly and not through Hangar, per target and scenario, each with why:
 * where tool pinning refuses a tool the server never listed. Every other check that passes
 * directly passes through Hangar, the bridging of a 2026-07-28 client in front of a 2025 server
 * included (docs/proxy.md).
 */
const UNLISTED_TOOL =
	'server-everything has no test_* tools: directly it answers the call with an isError result, which the check happens to accept; ' +
	'through Hangar, tool pinning (block) refuses a tool the server never listed with -32602, the error the spec gives an unknown tool';
const EVERYTHING_GAPS: Record<string, Record<string, string>> = {
	'tools-call-simple-text': { 'tools-call-simple-text': UNLISTED_TOOL },
	'tools-call-error': { 'tools-call-error': UNLISTED_TOOL },
};
/**
 * Seen once in a full CI run under load (stop 40), not in eight runs of this file alone: the
 * suite's 2026-07-28 client declares roots, so each of its calls runs on a legacy session of its
 * own (docs/proxy.md), on a stdio server a new process when the pool has none idle.
 * server-everything asks its client for roots 350 ms after a handshake; when the first call on a
 * new process is still in flight then, the ask is the call's (over stdio nothing tells otherwise)
 * and the client gets an input round, a result without `contents` to this check.
 */
const ROOTS_ASKED_AT_START =
	"server-everything's roots/list 350 ms after its handshake can fall inside the first call on a new process: the call then answers with an input round";
const KNOWN_GAPS: Record<string, Record<string, Record<string, string>>> = {
	'everything stdio through Hangar': { ...EVERYTHING_GAPS, 'sep-2164-resource-not-found': { 'sep-2164-no-empty-contents': ROOTS_ASKED_AT_START } },
	'everything HTTP through Hangar': EVERYTHING_GAPS,
};

/**
 * The checks that pass in `baseline` and not in `through` (every check of a scenario, whether
 * or not the scenario as a whole passes directly), with why, less the target's known gaps. A
 * check that did not run through Hangar counts only in a scenario that failed there: one that
 * passed took another valid way (a JSON answer where the server streamed, say).
 */
function regressions(target: string, baseline: ConformanceReport, through: ConformanceReport): Record<string, string> {
	const found: Record<string, string> = {};
	for (const [scenario, outcome] of baseline) {
		const after = through.get(scenario);
		for (const [check, why] of outcome.checks) {
			if (why !== '' || KNOWN_GAPS[target]?.[scenario]?.[check]) continue;
			const there = after?.checks.get(check);
			if (there === '' || (there === undefined && after?.passed)) continue;
			found[`${scenario} ${check}`] = there ?? (after ? `not run: ${after.failures.join('; ')}` : 'the scenario did not run');
		}
	}
	return found;
}

beforeAll(async () => {
	hangar = await startHangar();
	const [stdio, http, sdk2Stdio, sdk2Http, modern] = await Promise.all([
		hangar.create({ name: 'conf-stdio', ...SERVERS['stdio image'] }),
		hangar.create({ name: 'conf-http', ...SERVERS['HTTP-mode container'] }),
		hangar.create({ name: 'conf-sdk2-stdio', ...SDK2_LEGACY_SERVERS.stdio }),
		hangar.create({ name: 'conf-sdk2-http', ...SDK2_LEGACY_SERVERS.http }),
		hangar.create({ name: 'conf-modern', ...SERVERS['2026-07-28 image'] }),
	]);
	runAll('everything directly', await hangar.direct(http, 3001, '/mcp'), REQUIREMENT_SETS);
	runAll('everything stdio through Hangar', stdio.url, REQUIREMENT_SETS);
	runAll('everything HTTP through Hangar', http.url, REQUIREMENT_SETS);
	runAll('SDK 2.x server directly', await hangar.direct(sdk2Http, 3001, '/mcp'), ['2025-11-25']);
	runAll('SDK 2.x server stdio through Hangar', sdk2Stdio.url, ['2025-11-25']);
	runAll('SDK 2.x server HTTP through Hangar', sdk2Http.url, ['2025-11-25']);
	runAll('2026-07-28 server directly', await hangar.direct(modern, 3001, '/mcp'), ['2026-07-28']);
	runAll('2026-07-28 server through Hangar', modern.url, ['2026-07-28']);
}, 180_000);

afterAll(async () => {
	await Promise.allSettled([...runs.values()].flatMap((reports) => [...reports.values()]));
	await hangar?.dispose();
}, 120_000);

describe.each(REQUIREMENT_SETS)('conformance, requirement set %s', { timeout: 300_000 }, (set) => {
	it('has a baseline: server-everything passes some scenarios directly', async () => {
		expect(passing(await reportOf('everything directly', set)).length).toBeGreaterThan(0);
	});

	it.each(['stdio', 'HTTP'])('every scenario server-everything passes directly passes through Hangar in front of its %s container', async (front) => {
		const baseline = await reportOf('everything directly', set);
		const target = `everything ${front} through Hangar`;
		expect(regressions(target, baseline, await reportOf(target, set))).toEqual({});
	});
});

describe('conformance of the SDK 2.x server for 2025-era clients, requirement set 2025-11-25', { timeout: 300_000 }, () => {
	it('has a baseline: the server passes some scenarios directly', async () => {
		expect(passing(await reportOf('SDK 2.x server directly', '2025-11-25')).length).toBeGreaterThan(0);
	});

	it.each(['stdio', 'HTTP'])('every scenario it passes directly passes through Hangar in front of its %s container', async (front) => {
		const baseline = await reportOf('SDK 2.x server directly', '2025-11-25');
		const target = `SDK 2.x server ${front} through Hangar`;
		expect(regressions(target, baseline, await reportOf(target, '2025-11-25'))).toEqual({});
	});
});

describe('conformance of a 2026-07-28-only server, requirement set 2026-07-28', { timeout: 300_000 }, () => {
	it('has a baseline: the server passes some scenarios directly', async () => {
		expect(passing(await reportOf('2026-07-28 server directly', '2026-07-28')).length).toBeGreaterThan(0);
	});

	it('has a baseline of the Tasks extension: its lifecycle, negotiation (the per-request opt-in included) and wire scenarios pass directly', async () => {
		const baseline = await reportOf('2026-07-28 server directly', '2026-07-28');
		expect(passing(baseline)).toEqual(expect.arrayContaining(['tasks-lifecycle', 'tasks-capability-negotiation', 'tasks-wire-fields', 'tasks-request-state-removal']));
		expect(baseline.get('tasks-capability-negotiation')?.checks.get('tasks-per-request-meta-opt-in')).toBe('');
	});

	it('every scenario it passes directly passes through Hangar', async () => {
		const baseline = await reportOf('2026-07-28 server directly', '2026-07-28');
		const target = '2026-07-28 server through Hangar';
		expect(regressions(target, baseline, await reportOf(target, '2026-07-28'))).toEqual({});
	});
});
