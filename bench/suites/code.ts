/**
 * Code mode (#49): what `run_code` saves the model and what it costs the proxy. Two members
 * (test/fixtures/workloads/code-members.mjs: an issue tracker of 25 issues with long bodies,
 * and a notes server) behind aggregates run by the built `hangar`:
 * - the task "note every open urgent issue", done by direct calls (list the issues, then one
 *   add_note per urgent one, in parallel) against one script: the bytes of the tool results
 *   the model receives, the bytes of the tool definitions it is shown, and its turns;
 * - one tool call as a one-call script against the same `call_tool` (search mode with
 *   `code.enabled`, the same proxy), in turns, call by call;
 * - the start of a script in a warm sandbox (the pool in process, `return 1`);
 * - 16 scripts at once, each one call, and the memory each script running at once adds to the
 *   aggregate's proxy (every running script has a sandbox worker of its own).
 */
import { fileURLToPath } from 'node:url';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { limitsOf } from '../../server/proxy/backends/aggregate/code/sandbox/limits.js';
import { SandboxPool } from '../../server/proxy/backends/aggregate/code/sandbox/pool.js';
import { benchEnv, proxyRecord, residentAndThreads, runHangar, spawnHttp } from '../processes.js';
import { median, ms, percentile, timed, verdict, type Table } from '../stats.js';
import { settle } from './memory.js';

const MEMBERS = fileURLToPath(new URL('../../../test/fixtures/workloads/code-members.mjs', import.meta.url));
const GROUP = 'bench-code';
/**
 * Pairs of the overhead comparison: a call_tool and a one-call script each, in turns (the order
 * flips every pair), so that both see the same moments of a shared machine.
 */
const PAIRS = 400;
const STARTS = 100;
const CONCURRENT = 16;

async function connected(url: string): Promise<Client> {
	const client = new Client({ name: 'hangar-bench', version: '1.0.0' });
	await client.connect(new StreamableHTTPClientTransport(new URL(url.split('#')[0]!)));
	return client;
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** What `work` gives, and the largest resident set and thread count of `pid` while it ran. */
async function peakDuring<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; peak: { resident: number; threads: number } }> {
	const peak = residentAndThreads(pid);
	const sample = () => {
		const now = residentAndThreads(pid);
		peak.resident = Math.max(peak.resident, now.resident);
		peak.threads = Math.max(peak.threads, now.threads);
	};
	const sampler = setInterval(sample, 2);
	try {
		const result = await work();
		sample();
		return { result, peak };
	} finally {
		clearInterval(sampler);
	}
}

export async function code(): Promise<Table[]> {
	const env = benchEnv();
	const home = env.HANGAR_HOME!;
	const members = await spawnHttp([MEMBERS]);
	const clients: Client[] = [];
	try {
		await runHangar(['group', 'create', GROUP], env);
		for (const member of ['tracker', 'notes']) await runHangar(['run', `${members.url}/${member}/mcp`, '--name', member, '--group', GROUP, '--tool-pinning', 'off', '--json'], env);
		const aggregate = async (name: string, settings: Record<string, unknown>) => {
			const file = join(home, `${name}.json`);
			await writeFile(file, JSON.stringify(settings));
			const { url } = JSON.parse(await runHangar(['run', `group://${GROUP}`, '--name', name, '--group', GROUP, '--aggregation', file, '--json'], env)) as { url: string };
			const client = await connected(url);
			clients.push(client);
			return client;
		};
		const direct = await aggregate('direct', { mode: 'all' });
		const coded = await aggregate('coded', { mode: 'code' });
		const both = await aggregate('both', { mode: 'search', code: { enabled: true } });

		// The task, both ways.
		const shownDirect = bytes((await direct.listTools()).tools);
		const shownCode = bytes((await coded.listTools()).tools);
		const listed = await direct.callTool({ name: 'tracker_list_issues', arguments: { state: 'all' } });
		const urgent = (listed.structuredContent as { issues: Array<{ id: number; state: string; labels: string[] }> }).issues.filter((issue) => issue.state === 'open' && issue.labels.includes('urgent'));
		const added = await Promise.all(urgent.map((issue) => direct.callTool({ name: 'notes_add_note', arguments: { text: `follow up #${issue.id}`, tags: ['urgent'] } })));
		const receivedDirect = bytes(listed) + added.reduce((sum, result) => sum + bytes(result), 0);
		const script = `const { issues } = await tools.tracker.list_issues({ state: 'all' });
const urgent = issues.filter((issue) => issue.state === 'open' && issue.labels.includes('urgent'));
await Promise.all(urgent.map((issue) => tools.notes.add_note({ text: 'follow up #' + issue.id, tags: ['urgent'] })));
return { noted: urgent.map((issue) => issue.id) };`;
		const ran = await coded.callTool({ name: 'run_code', arguments: { code: script } });
		if (ran.isError) throw new Error(`the task script failed: ${JSON.stringify(ran.content)}`);
		const receivedCode = bytes(ran);
		const saved = 1 - receivedCode / receivedDirect;

		process.stderr.write('code: the task done both ways\n');
		// One call: call_tool against a one-call script, in turns on the same proxy.
		const viaCallTool: number[] = [];
		const viaScript: number[] = [];
		const callTool = () => both.callTool({ name: 'call_tool', arguments: { name: 'tracker_get_issue', arguments: { id: 1 } } });
		const oneCall = () => both.callTool({ name: 'run_code', arguments: { code: 'return await tools.tracker.get_issue({ id: 1 });' } });
		await timed(20, callTool);
		await timed(20, oneCall);
		for (let pair = 0; pair < PAIRS; pair++) {
			const order = pair % 2 ? [[oneCall, viaScript], [callTool, viaCallTool]] as const : [[callTool, viaCallTool], [oneCall, viaScript]] as const;
			for (const [work, samples] of order) samples.push(...(await timed(1, work)));
		}
		const overhead = median(viaScript) / median(viaCallTool);
		const pairedOverhead = median(viaScript.map((script, pair) => script / viaCallTool[pair]!));

		process.stderr.write('code: the one-call rounds done\n');
		// Sixteen scripts at once, and what the workers they run in add to the proxy's memory.
		const codedPid = (await proxyRecord(home, 'coded')).pid;
		const burst = () => Promise.all(Array.from({ length: CONCURRENT }, (_, index) => coded.callTool({ name: 'run_code', arguments: { code: `return (await tools.tracker.get_issue({ id: ${index + 1} })).id;` } })));
		await settle();
		const idle = residentAndThreads(codedPid);
		const { result: batches, peak } = await peakDuring(codedPid, () => timed(5, burst));
		const concurrent = await burst();
		const addedWorkers = peak.threads - idle.threads;
		const perScript = addedWorkers > 0 ? (peak.resident - idle.resident) / addedWorkers : NaN;
		const allRight = concurrent.every((result, index) => (result.content as Array<{ text: string }>)[0]?.text === String(index + 1));

		// A script's start in a warm sandbox, in process.
		const pool = new SandboxPool(limitsOf(undefined), new URL('../../server/proxy/backends/aggregate/code/sandbox/worker.js', import.meta.url));
		pool.warm();
		const run = () => pool.run({ code: 'return 1;', prelude: '', host: async () => null, signal: new AbortController().signal });
		await timed(20, run);
		const starts = await timed(STARTS, run);
		pool.close();

		return [
			{
				title: 'Code mode: the task "note every open urgent issue" (25 issues of about 500 bytes each, 3 of them urgent) by direct calls against one run_code script',
				columns: ['', 'direct calls (mode all)', 'one script (mode code)'],
				rows: [
					['tool results the model receives', `${receivedDirect.toLocaleString('en-US')} B`, `${receivedCode.toLocaleString('en-US')} B`],
					['tool definitions it is shown', `${shownDirect.toLocaleString('en-US')} B (8 tools)`, `${shownCode.toLocaleString('en-US')} B (run_code)`],
					['model turns', '2 (list, then 3 add_note at once)', '1'],
				],
				verdicts: [verdict('bytes of tool results the model receives, script vs direct calls', receivedCode / receivedDirect, 0.1), `that is ${(saved * 100).toFixed(1)} % fewer (target ≥ 90 %)`],
			},
			{
				title: `Code mode's cost: one tool call (tracker.get_issue) as a one-call run_code script against the same call through call_tool, on one aggregate (mode search, code.enabled), ${PAIRS} pairs of sequential calls in turns; and ${CONCURRENT} scripts at once`,
				columns: ['what', 'p50', 'p99'],
				rows: [
					['call_tool', ms(median(viaCallTool)), ms(percentile(viaCallTool, 99))],
					['run_code, one call', ms(median(viaScript)), ms(percentile(viaScript, 99))],
					[`${CONCURRENT} run_code scripts at once (the batch)`, ms(median(batches)), ms(percentile(batches, 99))],
					[`a script's start in a warm sandbox (return 1, ${STARTS} runs, in process)`, ms(median(starts)), ms(percentile(starts, 99))],
				],
				verdicts: [
					verdict('p50 of a one-call script vs call_tool', overhead, 1.3),
					`median of each pair's ratio, one-call script to call_tool: ${pairedOverhead.toFixed(2)}×`,
					verdict("p50 of a script's start in a warm sandbox vs 5 ms", median(starts) / 5, 1),
					`${CONCURRENT} scripts at once each got their own answer: ${allRight ? 'yes' : 'NO'}`,
					`memory per script running at once: ${perScript.toFixed(1)} MiB (the aggregate's proxy ${idle.resident.toFixed(1)} MiB idle with its warm sandboxes, at most ${peak.resident.toFixed(1)} MiB and ${addedWorkers} more threads with ${CONCURRENT} scripts at once)`,
				],
			},
		];
	} finally {
		await Promise.allSettled(clients.map((client) => client.close()));
		for (const name of ['direct', 'coded', 'both', 'tracker', 'notes']) await runHangar(['rm', name], env).catch(() => undefined);
		members.stop();
	}
}
