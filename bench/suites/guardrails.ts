/**
 * What secret scanning costs and how well it and personal data scanning find (#50).
 *
 * - Cost: the lean client's `tools/call` through a remote workload's proxy to an instant server
 *   whose results are 1 KiB, 64 KiB and 1 MiB of ordinary text, guardrails off against on (the
 *   defaults), in alternating rounds, sequential and over 16 connections: throughput and the
 *   proxy's CPU per call; and the scan alone, in process, per message of each size.
 * - Precision: every case of the labelled set (test/fixtures/guardrails/secrets.json) found,
 *   and the findings in benign text: the 1,483 tool definitions of 68 published servers and
 *   Hangar's own documentation; the same for personal data (test/fixtures/guardrails/
 *   personal-data.json, its tuned and held-out parts apart).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSecondsOf, openSession, type LeanSession } from '../lean.js';
import { calls, cpuPerCallOf, emptyTally, pairedBursts, pairedRatio, pooled, rateOf, type Front, type Tally } from '../rounds.js';
import { benchEnv, peer, proxyRecord, residentAndThreads, runHangar, spawnHttp } from '../processes.js';
import { median, ms, percentile, perSecond, verdict, type Table } from '../stats.js';
import { SecretRules } from '../../server/proxy/chain/guardrails/rules.js';
import { OwnSecrets } from '../../server/proxy/chain/guardrails/ownSecrets.js';
import { SecretScanner } from '../../server/proxy/chain/guardrails/scanner.js';
import { collectTexts } from '../../server/proxy/chain/guardrails/texts.js';
import { PersonalDataScanner } from '../../server/proxy/chain/guardrails/personalData.js';
import { DEFAULT_MAX_SCAN_BYTES, PERSONAL_DATA_KINDS, personalDataRule } from '../../server/runspec/guardrails.js';
import type { PersonalDataKind } from '../../protocol/runConfig.js';
import { retry } from './proxyBound.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// The largest stays under the 1 MiB scan cap with the rest of its message, so that all of it is scanned.
const SIZES = [
	{ label: '1 KiB', bytes: 1024, calls: 400 },
	{ label: '64 KiB', bytes: 64 * 1024, calls: 150 },
	{ label: '1 MiB', bytes: 1024 * 1024 - 256, calls: 32 },
];
/** Rounds per size (`BENCH_GUARDRAILS_ROUNDS`), alternating off and on. */
const ROUNDS = Number(process.env.BENCH_GUARDRAILS_ROUNDS ?? 8);

interface Side {
	readonly session: LeanSession;
	/** The proxy's process. */
	readonly pid: number;
	stop(): Promise<void>;
}

async function remoteWorkload(name: string, url: string, flags: string[]): Promise<Side> {
	const env = benchEnv();
	const created = JSON.parse(await runHangar(['run', url, '--name', name, '--json', '--tool-pinning', 'off', ...flags], env)) as { url: string };
	const session = await retry(() => openSession(created.url));
	const record = await proxyRecord(env.HANGAR_HOME!, name);
	return {
		session,
		pid: record.pid,
		stop: async () => {
			session.close();
			await runHangar(['rm', name], env).catch(() => undefined);
			await rm(env.HANGAR_HOME!, { recursive: true, force: true });
		},
	};
}

/** How each size's calls of a round are made: one after another, and over 16 connections (the issue's measure). */
const PHASES = [
	{ label: 'sequential', connections: 1 },
	{ label: '16 connections', connections: 16 },
] as const;

async function proxiedCost(): Promise<Table> {
	const rows: string[][] = [];
	const verdicts: string[] = [];
	for (const size of SIZES) {
		const server = await spawnHttp([peer('instant-mcp'), '--http', '--result-bytes', String(size.bytes)]);
		const sides: Side[] = [];
		try {
			sides.push(await remoteWorkload(`bench-guard-off-${size.bytes}`, server.url, []));
			sides.push(await remoteWorkload(`bench-guard-on-${size.bytes}`, server.url, ['--guardrails']));
			const [off, on] = sides as [Side, Side];
			for (const side of sides) for (const phase of PHASES) await calls(side.session, phase.connections, Math.ceil(size.calls / 4));
			for (const phase of PHASES) {
				const tallies: [Tally, Tally] = [emptyTally(), emptyTally()];
				const cpuRatios: number[] = [];
				const rateRatios: number[] = [];
				for (let round = 0; round < ROUNDS; round++) {
					const order = round % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const);
					const thisRound: [Tally, Tally] = [emptyTally(), emptyTally()];
					for (const index of order) {
						const side = index === 0 ? off : on;
						const before = cpuSecondsOf(side.pid);
						const started = performance.now();
						await calls(side.session, phase.connections, size.calls, thisRound[index]);
						thisRound[index].milliseconds = performance.now() - started;
						thisRound[index].cpuSeconds = cpuSecondsOf(side.pid) - before;
						tallies[index] = pooled(tallies[index], thisRound[index]);
					}
					cpuRatios.push(cpuPerCallOf(thisRound[1]) / cpuPerCallOf(thisRound[0]));
					rateRatios.push(rateOf(thisRound[1]) / rateOf(thisRound[0]));
				}
				for (const [index, label] of [[0, 'off'], [1, 'on (defaults)']] as const) {
					const tally = tallies[index];
					const side = index === 0 ? off : on;
					rows.push([size.label, phase.label, label, ms(median(tally.latencies)), ms(percentile(tally.latencies, 99)), perSecond(rateOf(tally)), `${Math.round(cpuPerCallOf(tally))} µs`, `${residentAndThreads(side.pid).resident.toFixed(1)} MiB`]);
				}
				const range = (ratios: number[]) => `median of ${ROUNDS} rounds, ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×`;
				const label = `${size.label}, ${phase.label}: the proxy's CPU per call with guardrails on vs off`;
				const cpu = median(cpuRatios);
				// The 1 KiB verdict is the paired bursts' (pairedCost): one process a side cannot settle 5 %.
				verdicts.push(`${label}: ${cpu.toFixed(2)}× (${range(cpuRatios)})`);
				verdicts.push(`${size.label}, ${phase.label}: throughput on vs off: ${median(rateRatios).toFixed(2)}× (${range(rateRatios)})`);
			}
		} finally {
			for (const side of sides) await side.stop();
			server.stop();
		}
	}
	return {
		title: `Secret scanning's cost: tools/call from a lean client through a remote workload's proxy to an instant server answering ordinary text of each size, guardrails off against on (the defaults), ${ROUNDS} alternating rounds of each phase, sequential and over 16 connections (${SIZES.map((size) => `${size.label}: ${size.calls}`).join(', ')} calls a round); CPU is the proxy process's own, the measure that holds on a loaded machine; throughput is over all rounds`,
		columns: ['result', 'phase', 'guardrails', 'p50', 'p99', 'throughput', 'proxy CPU/call', 'proxy RSS after'],
		rows,
		verdicts,
	};
}

/** The text of the peer's results: the same filler, so the in-process figures match the proxied ones. */
function resultOf(bytes: number): unknown {
	const line = 'The build reads src/config/settings.json, resolves 42 modules and writes dist/index.js; see https://example.com/docs/build?section=output for details. {"id": 1842, "path": "/home/dev/project/README.md", "sha": "3f9a1c2e8b7d6f5a4c3b2a1908f7e6d5c4b3a291"}\n';
	return { content: [{ type: 'text', text: line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes) }] };
}

function scanCost(): Table {
	const rules = new SecretRules();
	const scanners = [
		['secret rules', new SecretScanner(rules, undefined)],
		["secret rules and 20 of the user's secrets", new SecretScanner(rules, new OwnSecrets(Array.from({ length: 20 }, (_, index) => `user-secret-value-${index}-${'x'.repeat(index)}`)))],
	] as const;
	const rows: string[][] = [];
	for (const size of SIZES) {
		const result = resultOf(size.bytes);
		for (const [label, scanner] of scanners) {
			const runs = Math.max(5, Math.round(2_000_000 / size.bytes));
			const times: number[] = [];
			for (let run = 0; run < runs + 5; run++) {
				const started = performance.now();
				scanner.scan(collectTexts(result, DEFAULT_MAX_SCAN_BYTES).slots);
				if (run >= 5) times.push(performance.now() - started);
			}
			rows.push([size.label, label, ms(median(times)), ms(percentile(times, 99)), `${((size.bytes / (median(times) / 1000)) / 1024 / 1024).toFixed(0)} MiB/s`]);
		}
	}
	return { title: 'The scan alone, in process: collecting the texts of one result and scanning them (median of repeated scans after 5 unmeasured)', columns: ['result', 'looking for', 'p50', 'p99', 'throughput'], rows, verdicts: [] };
}

interface Labelled {
	readonly id: string;
	readonly kind: string;
	readonly message: unknown;
}

async function precision(): Promise<Table> {
	const labelled = JSON.parse(await readFile(join(ROOT, 'test/fixtures/guardrails/secrets.json'), 'utf8')) as { cases: Labelled[]; own: Labelled[]; hangar_secrets: Record<string, string> };
	const scanner = new SecretScanner(new SecretRules(), new OwnSecrets(Object.values(labelled.hangar_secrets)));
	const found = (message: unknown) => scanner.scan(collectTexts(message, DEFAULT_MAX_SCAN_BYTES).slots);
	const missed = [...labelled.cases, ...labelled.own].filter((entry) => found(entry.message).length === 0).map((entry) => entry.id);
	const corpus = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/search-eval/corpus.json'), 'utf8')) as { servers: Record<string, { tools: unknown[] }> };
	const tools = Object.values(corpus.servers).flatMap((server) => server.tools);
	const toolFindings = tools.flatMap((tool) => found(tool).map((finding) => finding.rule));
	const docs = readdirSync(join(ROOT, 'docs')).filter((file) => file.endsWith('.md'));
	const docFindings = docs.flatMap((file) => found({ content: [{ type: 'text', text: readFileSync(join(ROOT, 'docs', file), 'utf8') }] }).map((finding) => `${file}: ${finding.rule}`));
	const count = (list: string[]) => (list.length ? `${list.length} (${[...new Set(list)].join(', ')})` : '0');
	return {
		title: 'Secret scanning\'s precision: the labelled set found, and findings (each a false positive) in benign text',
		columns: ['text', 'messages', 'secrets found / findings'],
		rows: [
			['labelled secrets (test/fixtures/guardrails/secrets.json)', String(labelled.cases.length), `${labelled.cases.length - missed.filter((id) => !id.startsWith('own-')).length} of ${labelled.cases.length} found`],
			["the user's own secret values: raw, base64, URL-encoded, split", String(labelled.own.length), `${labelled.own.length - missed.filter((id) => id.startsWith('own-')).length} of ${labelled.own.length} found`],
			['tool definitions of 68 published servers (test/fixtures/search-eval/corpus.json)', String(tools.length), `findings: ${count(toolFindings)}`],
			["Hangar's docs/*.md", String(docs.length), `findings: ${count(docFindings)}`],
		],
		verdicts: [missed.length ? `missed: ${missed.join(', ')}` : 'every labelled secret found'],
	};
}

interface LabelledPersonal {
	readonly id: string;
	readonly kind: PersonalDataKind | 'none';
	readonly values: readonly string[];
	readonly message: unknown;
}

async function personalDataPrecision(): Promise<Table> {
	const labelled = JSON.parse(await readFile(join(ROOT, 'test/fixtures/guardrails/personal-data.json'), 'utf8')) as Record<'tune' | 'held_out', LabelledPersonal[]>;
	const kinds = Object.keys(PERSONAL_DATA_KINDS) as PersonalDataKind[];
	const scanner = await PersonalDataScanner.create(kinds);
	const found = (message: unknown) => {
		const { slots } = collectTexts(message, DEFAULT_MAX_SCAN_BYTES);
		return scanner.scan(slots).map(({ rule, ranges: [range] }) => ({ rule, text: slots[range!.slot]!.text.slice(range!.start, range!.end) }));
	};
	const rows: string[][] = [];
	for (const part of ['tune', 'held_out'] as const) {
		const falseFlags: string[] = [];
		const recall = kinds.map((kind) => {
			const cases = labelled[part].filter((entry) => entry.kind === kind);
			const hits = cases.filter((entry) => found(entry.message).some((finding) => finding.rule === personalDataRule(kind) && entry.values.includes(finding.text))).length;
			return `${kind} ${hits}/${cases.length}`;
		});
		for (const entry of labelled[part]) for (const finding of found(entry.message)) if (!entry.values.includes(finding.text)) falseFlags.push(finding.rule);
		rows.push([`labelled set, ${part === 'tune' ? 'part tuned on' : 'held-out part'} (test/fixtures/guardrails/personal-data.json)`, String(labelled[part].length), `${recall.join(', ')}; false flags: ${falseFlags.length}`]);
	}
	const corpus = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/search-eval/corpus.json'), 'utf8')) as { servers: Record<string, { tools: unknown[] }> };
	const tools = Object.values(corpus.servers).flatMap((server) => server.tools);
	const started = performance.now();
	const toolFindings = tools.flatMap((tool) => found(tool).map((finding) => finding.rule));
	const perTool = (performance.now() - started) / tools.length;
	const docs = readdirSync(join(ROOT, 'docs')).filter((file) => file.endsWith('.md'));
	const docFindings = docs.flatMap((file) => found({ content: [{ type: 'text', text: readFileSync(join(ROOT, 'docs', file), 'utf8') }] }).map((finding) => `${file}: ${finding.rule}`));
	const count = (list: string[]) => (list.length ? `${list.length} (${[...new Set(list)].join(', ')})` : '0');
	rows.push(['tool definitions of 68 published servers (test/fixtures/search-eval/corpus.json)', String(tools.length), `findings: ${count(toolFindings)}; ${ms(perTool)} a tool`]);
	rows.push(["Hangar's docs/*.md", String(docs.length), `findings: ${count(docFindings)}`]);
	return {
		title: "Personal data scanning's precision (every kind): values found per kind, and findings no label names (each a false flag)",
		columns: ['text', 'messages', 'found / findings'],
		rows,
		verdicts: [toolFindings.length ? `${toolFindings.length} findings in the tool definitions` : 'no personal data found in the tool definitions'],
	};
}

/** Cycles of the 1 KiB A/B in paired bursts (`BENCH_GUARDRAILS_CYCLES`). */
const CYCLES = Number(process.env.BENCH_GUARDRAILS_CYCLES ?? 30);

/**
 * The 1 KiB verdict, settled as the pinning bench settles its own: two proxy processes a side in
 * paired bursts (bench/rounds.ts), because two processes of one build differ here by more than
 * the 5 % being judged (proxyBound's spread lines show up to 15 %), which rounds of one process
 * a side cannot tell from the scan's cost. An A/A of the off side's two processes against each
 * other, in the same cycles' manner, shows the floor that noise leaves.
 */
async function pairedCost(): Promise<Table> {
	const server = await spawnHttp([peer('instant-mcp'), '--http', '--result-bytes', '1024']);
	const sides: Side[] = [];
	const front = (side: Side, name: string): Front => ({ name, pid: side.pid, session: side.session, stop: side.stop });
	try {
		for (let index = 0; index < 2; index++) {
			sides.push(await remoteWorkload(`bench-guard-pair-off-${index}`, server.url, []));
			sides.push(await remoteWorkload(`bench-guard-pair-on-${index}`, server.url, ['--guardrails']));
		}
		const off = [front(sides[0]!, 'off'), front(sides[2]!, 'off, a second process')];
		const on = [front(sides[1]!, 'on'), front(sides[3]!, 'on, a second process')];
		for (const side of sides) await calls(side.session, 16, 200);
		const rows: string[][] = [];
		const verdicts: string[] = [];
		for (const phase of PHASES) {
			const burst = { label: phase.label, connections: phase.connections, calls: 4_000 };
			const cycles = await pairedBursts(off, on, burst, CYCLES);
			const control = await pairedBursts([off[0]!], [off[1]!], burst, Math.ceil(CYCLES / 2));
			for (const [label, pick] of [['off', 'a'], ['on (defaults)', 'b']] as const) {
				const tally = cycles.map((cycle) => cycle[pick]).reduce(pooled);
				rows.push([phase.label, label, ms(median(tally.latencies)), perSecond(rateOf(tally)), `${Math.round(cpuPerCallOf(tally))} µs`]);
			}
			const middle = ({ quartiles: [low, high] }: { quartiles: [number, number] }, count: number) => `middle half of ${count} paired cycles ${low.toFixed(2)}–${high.toFixed(2)}×`;
			const cpu = pairedRatio(cycles, cpuPerCallOf);
			const floor = pairedRatio(control, cpuPerCallOf);
			verdicts.push(verdict(`1 KiB, ${phase.label}: the proxy's CPU per call with guardrails on vs off, two processes a side`, cpu.median, 1.05, false, middle(cpu, cycles.length)));
			verdicts.push(`1 KiB, ${phase.label}: the same A/A, one off process against the other: ${floor.median.toFixed(2)}× (${middle(floor, control.length)})`);
			verdicts.push(`1 KiB, ${phase.label}: throughput on vs off: ${pairedRatio(cycles, rateOf).median.toFixed(2)}×`);
		}
		return {
			title: `Secret scanning's cost at 1 KiB in paired bursts: the same calls as above, ${CYCLES} cycles a phase of bursts of 400 calls from each of two proxy processes a side, off and on interleaved; CPU is the proxy processes' own`,
			columns: ['phase', 'guardrails', 'p50', 'throughput', 'proxy CPU/call'],
			rows,
			verdicts,
		};
	} finally {
		for (const side of sides) await side.stop();
		server.stop();
	}
}

/** `BENCH_GUARDRAILS_PART=paired` runs the 1 KiB verdict alone (a few minutes; the whole suite takes many more). */
const PART = process.env.BENCH_GUARDRAILS_PART;

export async function guardrails(): Promise<Table[]> {
	if (PART === 'paired') return [await pairedCost()];
	if (PART !== undefined) throw new Error(`BENCH_GUARDRAILS_PART: only 'paired' is known, not '${PART}'`);
	return [await precision(), await personalDataPrecision(), scanCost(), await proxiedCost(), await pairedCost()];
}
