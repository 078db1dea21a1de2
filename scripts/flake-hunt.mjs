// Runs the test suite several times back to back and prints which tests failed in which run, as a
// Markdown table for docs/testing.md. A flaky test shows as a row that fails in some runs only.
//
//   node scripts/flake-hunt.mjs [--runs N] [--shuffle] [--label TEXT] [-- VITEST ARGS…]
//
// Expects what `npm test` sets up first (scripts/test-services.sh, a build). --shuffle runs files
// and tests in a random order each time (vitest's --sequence.shuffle), so an order dependence
// shows too; each run's seed is printed so it can be replayed with --sequence.seed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
	options: { runs: { type: 'string', default: '5' }, shuffle: { type: 'boolean', default: false }, label: { type: 'string', default: '' } },
	allowPositionals: true,
});
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
	console.error('flake-hunt: --runs takes a whole number of at least 1');
	process.exit(2);
}

const reports = mkdtempSync(join(tmpdir(), 'hangar-flake-hunt-'));
const rows = [];
const failures = new Map(); // test name → the runs it failed in
for (let run = 1; run <= runs; run++) {
	const seed = Math.floor(Math.random() * 2 ** 31);
	const output = join(reports, `run-${run}.json`);
	const args = ['vitest', 'run', '--reporter=dot', '--reporter=json', `--outputFile.json=${output}`, ...positionals];
	if (values.shuffle) args.push('--sequence.shuffle', `--sequence.seed=${seed}`);
	const started = Date.now();
	spawnSync('npx', args, { stdio: ['ignore', 'inherit', 'inherit'] });
	const minutes = ((Date.now() - started) / 60_000).toFixed(1);
	let report;
	try {
		report = JSON.parse(readFileSync(output, 'utf8'));
	} catch {
		rows.push(`| ${run} | ${values.label} | ${minutes} | no report (vitest did not finish) | |`);
		continue;
	}
	const failed = report.testResults.flatMap((file) =>
		file.assertionResults.filter((test) => test.status === 'failed').map((test) => `${file.name.slice(process.cwd().length + 1)} › ${test.fullName}`),
	);
	// A file that failed to load has no assertion results of its own.
	for (const file of report.testResults) if (file.status === 'failed' && !file.assertionResults.length) failed.push(`${file.name.slice(process.cwd().length + 1)} (did not load)`);
	for (const name of failed) failures.set(name, [...(failures.get(name) ?? []), run]);
	const order = values.shuffle ? `shuffled, seed ${seed}` : 'in order';
	rows.push(`| ${run} | ${[values.label, order].filter(Boolean).join(', ')} | ${minutes} | ${report.numPassedTests} passed, ${report.numFailedTests} failed | ${failed.join('<br>')} |`);
	console.error(`flake-hunt: run ${run} of ${runs}: ${report.numFailedTests} failed (${minutes} min)`);
}

console.log('\n| run | conditions | minutes | tests | failed |\n|---|---|---|---|---|');
for (const row of rows) console.log(row);
if (failures.size) {
	console.log('\n| test | failed in runs |\n|---|---|');
	for (const [name, inRuns] of failures) console.log(`| ${name} | ${inRuns.join(', ')} of ${runs} |`);
}
process.exit(failures.size ? 1 : 0);
