/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, installed with Node 22
 * by scripts/test-services.sh): runs the server scenarios a protocol revision requires against
 * a URL and reads back which passed.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MCP_TOOLS, runNode22 } from './mcpClients.js';

const CLI = join(MCP_TOOLS, 'conformance', 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

/** The requirement sets of the suite: each names the scenarios one revision requires. */
export type RequirementSet = '2025-11-25' | '2026-07-28';

interface Check {
	id: string;
	status: string;
	errorMessage?: string;
}

export interface ScenarioOutcome {
	passed: boolean;
	/** The ids and messages of the checks that failed. */
	failures: string[];
	/**
	 * Per check id, why it did not pass (its failures, warnings, skips); '' when every check of
	 * that id passed or only informed (INFO: a valid choice worth noting, such as JSON for SSE).
	 */
	checks: Map<string, string>;
}

/** Per scenario, whether every check passed; the suite's own verdict ("N passed, 0 failed"). */
export type ConformanceReport = Map<string, ScenarioOutcome>;

/**
 * Runs the server scenarios `requirements` names against `url`, including those the suite runs
 * without scoring. The CLI exits non-zero when any scenario fails; only a run that produced no
 * results is an error.
 */
export async function runConformance(url: string, requirements: RequirementSet): Promise<ConformanceReport> {
	const output = await mkdtemp(join(tmpdir(), 'hangar-conformance-'));
	try {
		// Generous per-scenario time: the verdicts must not depend on the machine's speed.
		const run = await runNode22(CLI, ['server', '--url', url, '--requirements', requirements, '--timeout', '120000', '-o', output]);
		const report: ConformanceReport = new Map();
		for (const entry of await readdir(output)) {
			const scenario = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(entry)?.[1];
			if (!scenario) continue;
			// A scenario that broke off (the server hung up, say) may leave no checks behind.
			const checks = JSON.parse(await readFile(join(output, entry, 'checks.json'), 'utf8').catch(() => 'null')) as Check[] | null;
			if (!checks) {
				report.set(scenario, { passed: false, failures: ['the scenario recorded no checks'], checks: new Map() });
				continue;
			}
			const failed = checks.filter((check) => check.status === 'FAILURE');
			report.set(scenario, { passed: failed.length === 0, failures: failed.map((check) => `${check.id}: ${check.errorMessage ?? 'failed'}`), checks: outcomesOf(checks) });
		}
		if (report.size === 0) throw new Error(`the conformance suite produced no results (exit ${run.code}): ${run.stderr || run.stdout}`);
		return report;
	} finally {
		await rm(output, { recursive: true, force: true });
	}
}

/** The scenarios that passed. */
export function passing(report: ConformanceReport): string[] {
	return [...report].filter(([, outcome]) => outcome.passed).map(([scenario]) => scenario).sort();
}

/** Per check id (a scenario may run one check several times), why it did not pass, else ''. */
function outcomesOf(checks: Check[]): Map<string, string> {
	const outcomes = new Map<string, string>();
	for (const check of checks) {
		const why = check.status === 'SUCCESS' || check.status === 'INFO' ? '' : `${check.status}: ${check.errorMessage ?? check.status.toLowerCase()}`;
		const before = outcomes.get(check.id);
		outcomes.set(check.id, [before, why].filter(Boolean).join('; '));
	}
	return outcomes;
}
