// Prints the closing line of a test run, "Tests: N passed, N failed, N skipped", from the JSON
// report vitest wrote, so any reader of the log sees how many tests ran.
import { readFileSync } from 'node:fs';

const [reportPath] = process.argv.slice(2);
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
const skipped = report.numPendingTests + report.numTodoTests;
process.stdout.write(`\nTests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped\n`);
process.exit(report.success ? 0 : 1);
