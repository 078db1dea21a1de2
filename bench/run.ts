/**
 * `npm run bench [-- SUITE…]`: runs the benchmark suites and prints their tables as
 * Markdown, ready for docs/benchmarks.md.
 */
import { cpus } from 'node:os';
import { formatTable, type Table } from './stats.js';
import { aggregate } from './suites/aggregate.js';
import { clients } from './suites/clients.js';
import { code } from './suites/code.js';
import { foundation } from './suites/foundation.js';
import { guardrails } from './suites/guardrails.js';
import { memory } from './suites/memory.js';
import { packages } from './suites/packages.js';
import { pinningCost } from './suites/pinningCost.js';
import { pinningFlags } from './suites/pinningFlags.js';
import { proxyBound } from './suites/proxyBound.js';
import { registry } from './suites/registry.js';
import { scaleOut } from './suites/scaleOut.js';
import { search } from './suites/search.js';
import { secrets } from './suites/secrets.js';
import { security } from './suites/security.js';
import { skills } from './suites/skills.js';
import { telemetryCost } from './suites/telemetryCost.js';
import { windows } from './suites/windows.js';
import { workloads } from './suites/workloads.js';

const suites: Record<string, () => Promise<Table[]>> = { foundation, clients, registry, secrets, skills, workloads, bound: proxyBound, memory, security, telemetry: telemetryCost, scale: scaleOut, packages, pinning: pinningCost, flags: pinningFlags, search, aggregate, guardrails, code, windows };

const chosen = process.argv.slice(2);
const unknown = chosen.filter((name) => !(name in suites));
if (unknown.length) {
	process.stderr.write(`unknown suite(s): ${unknown.join(', ')}; choose from ${Object.keys(suites).join(', ')}\n`);
	process.exit(2);
}

process.stdout.write(`Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${new Date().toISOString()}\n\n`);
for (const name of chosen.length ? chosen : Object.keys(suites)) {
	process.stderr.write(`running ${name}…\n`);
	for (const table of await suites[name]!()) process.stdout.write(`${formatTable(table)}\n`);
}
