/**
 * What an aggregate (#33) adds to a call: the lean client's `tools/call` (echo) through an
 * aggregate of ten members (containerised stdio servers, each behind its own proxy) against
 * the same call straight to one member's proxy, in rounds that alternate between the two
 * (bench/rounds.ts). CPU per call is each front process's own: the aggregate's proxy against the
 * member's, that is one more hop against one hop. And the resident memory of both proxies with
 * one client session open: idle before the rounds, and after them and a settle; then with
 * 100 client sessions, each of which has called. Before all that, what opening a session costs
 * (initialize, then tools/list): the aggregate's first, whose list asks all ten members, against
 * later ones, served from its cache, and against a member's. Then the same two fronts with a
 * tool whose server works 5 ms, as most tools take their time: what the hop adds to such a call.
 * In the same rounds, the floor of any one more hop (bench/peers/link-relay.ts): a bare relay of
 * the lean client's POSTs onto a link to the member, so that the aggregate's figures read
 * against what the hop itself costs on this machine, apart from what the aggregate does.
 */
import { rm } from 'node:fs/promises';
import { openSession, type LeanSession } from '../lean.js';
import { benchEnv, peer, proxyRecord, residentAndThreads, runHangar, spawnHttp } from '../processes.js';
import { alternatingRounds, cpuPerCallOf, PHASES, rateOf, startWarm, type Front, type Phase } from '../rounds.js';
import { median, ms, percentile, perSecond, timed, verdict, type Table } from '../stats.js';
import { settle } from './memory.js';
import { IMAGE } from './proxyBound.js';

const MEMBERS = 10;
/** Rounds per front (`BENCH_AGGREGATE_ROUNDS`): fewer on a shared machine that cannot give the time. */
const ROUNDS = Number(process.env.BENCH_AGGREGATE_ROUNDS ?? 4);
const GROUP = 'bench-aggregate';
/** Issue #33: the aggregate adds at most 25 % to the member's latency (a call whose tool works, where the hop's floor is small beside it). */
const LATENCY_LIMIT = 1.25;
/**
 * Issue #47: the aggregate's p50 over the member's is within this of one more hop's floor (the
 * bare relay's, measured in the same rounds): what the aggregate adds beyond any hop.
 */
const OVER_FLOOR_LIMIT = 0.05;
/** Sessions opened to time a cached list. */
const LIST_SAMPLES = 20;
/** Client sessions held open for the memory figure. */
const SESSIONS = 100;
/** A call whose server works a while (server-everything's long-running operation, 5 ms in one step), as most tools do. */
const WORKING_TOOL = 'trigger-long-running-operation';
const WORKING_ARGUMENTS = { duration: 0.005, steps: 1 };
/** Calls per front and round of the working tool, sequential and over 16 connections. */
const WORKING_CALLS = 400;
const WORKING_PHASES: readonly Phase[] = [
	{ label: 'sequential', connections: 1, calls: WORKING_CALLS * ROUNDS },
	{ label: '16 connections', connections: 16, calls: WORKING_CALLS * ROUNDS },
];

/**
 * The working tool called straight at the member's proxy and through the aggregate, in rounds
 * that alternate between them: what the aggregate adds to a call whose server takes its time.
 */
async function workingRounds(straight: Front, through: Front, memberUrl: string, aggregateUrl: string, member: string): Promise<{ rows: string[][]; verdicts: string[] }> {
	const fronts: Front[] = [
		{ name: straight.name, pid: straight.pid, session: await openSession(memberUrl, {}, WORKING_TOOL, WORKING_ARGUMENTS), stop: async () => undefined },
		{ name: through.name, pid: through.pid, session: await openSession(aggregateUrl, {}, `${member}_${WORKING_TOOL}`, WORKING_ARGUMENTS), stop: async () => undefined },
	];
	try {
		const tallies = await alternatingRounds(fronts, ROUNDS, WORKING_PHASES);
		const rows: string[][] = [];
		const verdicts: string[] = [];
		for (const [phaseIndex, phase] of WORKING_PHASES.entries()) {
			const [direct, aggregated] = [tallies[0]![phaseIndex]!, tallies[1]![phaseIndex]!];
			for (const [index, tally] of [direct, aggregated].entries()) rows.push([phase.label, fronts[index]!.name, ms(median(tally.latencies)), ms(percentile(tally.latencies, 99)), `${Math.round(cpuPerCallOf(tally))} µs`]);
			verdicts.push(verdict(`${phase.label}, a tool that works ${WORKING_ARGUMENTS.duration * 1000} ms: p50 through the aggregate vs straight to the member`, median(aggregated.latencies) / median(direct.latencies), LATENCY_LIMIT));
		}
		return { rows, verdicts };
	} finally {
		for (const front of fronts) front.session.close();
	}
}

/** The bare relay (bench/peers/link-relay.ts) onto a link to the proxy at `url`, whose record is `member`'s. */
async function linkRelay(home: string, member: string, url: string): Promise<Front> {
	const relay = await spawnHttp([peer('link-relay'), (await proxyRecord(home, member)).socket, new URL(url).host]);
	return { name: `a bare relay onto a link to ${member} (one more hop's floor)`, pid: relay.pid, session: await openSession(relay.url), stop: async () => relay.stop() };
}

export async function aggregate(): Promise<Table[]> {
	const env = benchEnv();
	const home = env.HANGAR_HOME!;
	const members = Array.from({ length: MEMBERS }, (_, index) => `m${index}`);
	const fronts: Front[] = [];
	let crowded = 0;
	try {
		await runHangar(['group', 'create', GROUP], env);
		const urls: string[] = [];
		// One at a time: ten containers starting at once on a small machine time each other out.
		for (const member of members) urls.push((JSON.parse(await runHangar(['run', IMAGE, '--name', member, '--transport', 'stdio', '--group', GROUP, '--json', '--', 'stdio'], env)) as { url: string }).url);
		const created = JSON.parse(await runHangar(['run', `group://${GROUP}`, '--name', 'all', '--group', GROUP, '--json'], env)) as { url: string };
		const started = performance.now();
		const first = await openSession(created.url, {}, `${members[0]}_echo`);
		const coldList = performance.now() - started;
		const opening = async (url: string) => median(await timed(LIST_SAMPLES, async () => (await openSession(url)).close()));
		const [cachedList, memberList] = [await opening(created.url), await opening(urls[0]!)];
		const front = async (name: string, label: string, session: LeanSession): Promise<Front> => ({ name: label, pid: (await proxyRecord(home, name)).pid, session, stop: async () => undefined });
		const opened = [
			await front(members[0]!, `straight to member ${members[0]}'s proxy`, await openSession(urls[0]!)),
			await front('all', `through the aggregate of ${MEMBERS} members`, first),
		];
		await settle();
		const idle = opened.map((each) => residentAndThreads(each.pid!).resident);
		await startWarm([...opened.map((each) => async () => each), () => linkRelay(home, members[0]!, urls[0]!)], fronts);
		const tallies = await alternatingRounds(fronts, ROUNDS);
		const rows: string[][] = [];
		const verdicts: string[] = [];
		for (const [phaseIndex, phase] of PHASES.entries()) {
			for (const [index, front] of fronts.entries()) {
				const tally = tallies[index]![phaseIndex]!;
				rows.push([phase.label, front.name, ms(median(tally.latencies)), ms(percentile(tally.latencies, 99)), perSecond(rateOf(tally)), `${Math.round(cpuPerCallOf(tally))} µs`]);
			}
			const [member, through, floor] = [tallies[0]![phaseIndex]!, tallies[1]![phaseIndex]!, tallies[2]![phaseIndex]!];
			const [aggregateRatio, floorRatio] = [median(through.latencies) / median(member.latencies), median(floor.latencies) / median(member.latencies)];
			const over = aggregateRatio - floorRatio;
			verdicts.push(
				`${phase.label}: p50 through the aggregate vs straight to the member ${aggregateRatio.toFixed(2)}×, the bare relay's ${floorRatio.toFixed(2)}×: ${over >= 0 ? '+' : ''}${over.toFixed(2)} over one more hop's floor (target ≤ +${OVER_FLOOR_LIMIT}) — ${over <= OVER_FLOOR_LIMIT ? 'met' : 'MISSED'}`,
			);
			verdicts.push(verdict(`${phase.label}: the aggregate's CPU per call vs the member proxy's (one hop)`, cpuPerCallOf(through) / cpuPerCallOf(member), 1));
		}
		const working = await workingRounds(fronts[0]!, fronts[1]!, urls[0]!, created.url, members[0]!);
		await settle();
		const loaded = opened.map((each) => residentAndThreads(each.pid!).resident);
		const crowd: LeanSession[] = [];
		try {
			for (let index = 0; index < SESSIONS; index++) {
				const session = await openSession(created.url, {}, `${members[0]}_echo`);
				crowd.push(session);
				await session.call();
			}
			await settle();
			crowded = residentAndThreads(fronts[1]!.pid!).resident;
		} finally {
			for (const session of crowd) session.close();
		}
		const memory = opened.map((each, index) => [
			index === 0 ? "the member's proxy" : `the aggregate's proxy (${MEMBERS} members)`,
			`${idle[index]!.toFixed(1)} MB`,
			`${loaded[index]!.toFixed(1)} MB`,
			index === 0 ? '—' : `${crowded.toFixed(1)} MB`,
		]);
		return [
			{
				title: `An aggregate's cost: tools/call (echo) from a lean client through an aggregate of ${MEMBERS} members (containerised stdio servers) against straight to one member's proxy and against a bare relay onto a link to that proxy (one more hop at its floor), ${ROUNDS} alternating rounds per phase (${PHASES.map((phase) => `${phase.label}: ${phase.calls.toLocaleString('en-US')} calls`).join(', ')}); CPU is the front process's own per call`,
				columns: ['phase', 'front', 'p50', 'p99', 'calls/s', 'CPU/call'],
				rows,
				verdicts,
			},
			{
				title: `A tool that works ${WORKING_ARGUMENTS.duration * 1000} ms (${WORKING_TOOL}): the same two fronts, ${ROUNDS} alternating rounds of ${WORKING_CALLS} calls each`,
				columns: ['phase', 'front', 'p50', 'p99', 'CPU/call'],
				rows: working.rows,
				verdicts: working.verdicts,
			},
			{
				title: `Opening a client session (initialize, then tools/list): the aggregate's first, whose list asks its ${MEMBERS} members, against the median of ${LIST_SAMPLES} later ones (its cache) and of ${LIST_SAMPLES} to the member's proxy`,
				columns: ['session', 'time'],
				rows: [
					[`the aggregate's first (cold: ${MEMBERS} members asked)`, ms(coldList)],
					["the aggregate's later ones (cached)", ms(cachedList)],
					["straight to the member's proxy", ms(memberList)],
				],
				verdicts: [],
			},
			{
				title: `Resident memory of the two proxies, one client session open: idle (after its tools/list and a settle), after the rounds and a settle, and with ${SESSIONS} more client sessions that each called once`,
				columns: ['proxy', 'idle RSS', 'RSS after the rounds', `with ${SESSIONS} sessions`],
				rows: memory,
				verdicts: [],
			},
		];
	} finally {
		for (const front of fronts) {
			front.session.close();
			await front.stop();
		}
		for (const name of ['all', ...members]) await runHangar(['rm', name], env).catch(() => undefined);
		await rm(home, { recursive: true, force: true });
	}
}
