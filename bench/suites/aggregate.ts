/**
 * What an aggregate costs (#33): the lean client's `tools/call` (echo) to one member's proxy
 * directly, against the same tool through an aggregate of ten members (`m0_echo`), which calls
 * that member's proxy in turn; rounds alternate between the two. Then each proxy's resident
 * memory, idle with one session open. CPU per call is each front process's own: the aggregate's
 * excludes the member proxy it calls.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { openSession } from '../lean.js';
import { benchEnv, runHangar } from '../processes.js';
import { alternatingRounds, cpuPerCallOf, PHASES, rateOf, startWarm, type Front } from '../rounds.js';
import { median, ms, percentile, perSecond, type Table } from '../stats.js';
import { residentMegabytes, settle, SETTLE_MS } from './memory.js';
import { IMAGE, retry } from './proxyBound.js';

const MEMBERS = 10;
const GROUP = 'bench';
const ROUNDS = 4;

export async function aggregate(): Promise<Table[]> {
	const env = benchEnv();
	const proxyPid = async (name: string) => (JSON.parse(await readFile(join(env.HANGAR_HOME!, 'data', 'proxies', `${name}.json`), 'utf8')) as { pid: number }).pid;
	const run = async (args: string[]) => (JSON.parse(await runHangar(['run', '--group', GROUP, '--json', ...args], env)) as { url: string }).url;
	const fronts: Front[] = [];
	try {
		await runHangar(['group', 'create', GROUP], env);
		const members: string[] = [];
		for (let index = 0; index < MEMBERS; index++) members.push(await run([IMAGE, '--name', `m${index}`, '--transport', 'stdio', '--', 'stdio']));
		const aggregateUrl = await run([`group://${GROUP}`, '--name', 'all']);
		const front = async (name: string, proxy: string, url: string, tool?: string): Promise<Front> => ({
			name,
			pid: await proxyPid(proxy),
			session: await retry(() => openSession(url, {}, tool)),
			stop: async () => undefined,
		});
		await startWarm(
			[() => front('one member, directly', 'm0', members[0]!), () => front(`an aggregate of ${MEMBERS} members (m0_echo)`, 'all', aggregateUrl, 'm0_echo')],
			fronts,
		);
		await settle();
		const idle = await Promise.all(fronts.map((front) => residentMegabytes(front.pid!)));
		const tallies = await alternatingRounds(fronts, ROUNDS);
		return [
			{
				title: `tools/call (echo) from a lean client to one containerised stdio member, directly and through an aggregate of ${MEMBERS} such members: ${PHASES.map((phase) => `${phase.label} (${phase.calls.toLocaleString('en-US')} calls)`).join(', ')}, ${ROUNDS} alternating rounds after one unmeasured; CPU is the front process's own per call; idle RSS after warm-up and ${SETTLE_MS / 1000} s alone`,
				columns: ['front', ...PHASES.flatMap((phase) => [`${phase.label} p50`, 'p99', 'calls/s', 'CPU/call']), 'idle RSS'],
				rows: fronts.map((front, index) => [
					front.name,
					...PHASES.flatMap((_, phaseIndex) => {
						const tally = tallies[index]![phaseIndex]!;
						return [ms(median(tally.latencies)), ms(percentile(tally.latencies, 99)), perSecond(rateOf(tally)), `${Math.round(cpuPerCallOf(tally))} µs`];
					}),
					`${idle[index]!.toFixed(1)} MB`,
				]),
				verdicts: PHASES.map((phase, phaseIndex) => {
					const [direct, aggregated] = [tallies[0]![phaseIndex]!, tallies[1]![phaseIndex]!];
					return `${phase.label}: the aggregate adds ${ms(median(aggregated.latencies) - median(direct.latencies))} at the median and serves ${(rateOf(aggregated) / rateOf(direct)).toFixed(2)}× the direct calls/s`;
				}),
			},
		];
	} finally {
		for (const front of fronts) front.session.close();
		await runHangar(['rm', '--group', GROUP], env).catch(() => undefined);
		await rm(env.HANGAR_HOME!, { recursive: true, force: true });
	}
}
