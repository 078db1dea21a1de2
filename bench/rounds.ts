/**
 * How the lean client measures fronts (bench/lean.ts): the phases, every front warmed, then
 * rounds that alternate between fronts, or, for an A/B, short bursts that alternate between its
 * two sides. CPU per call is the front process's own, from /proc.
 */
import { cpuSecondsOf, type LeanSession } from './lean.js';
import { median, percentile } from './stats.js';

const WARM_UP = 500;
/** The pause before each front's round (see `alternatingRounds`). */
const SETTLE_MS = 300;
// Enough calls per round that each front runs for a while at its steady state: a front that
// waited through a heavier neighbour's round starts its own with cold caches and a shrunk heap.
export const PHASES = [
	{ label: 'sequential', connections: 1, calls: 4_000 },
	{ label: '16 connections', connections: 16, calls: 16_000 },
	{ label: '64 connections', connections: 64, calls: 25_600 },
] as const;

export interface Front {
	readonly name: string;
	/** The process whose CPU is the front's, if it is a process of its own. */
	readonly pid: number | undefined;
	readonly session: LeanSession;
	stop(): Promise<void>;
}

export interface Tally {
	latencies: number[];
	milliseconds: number;
	cpuSeconds: number;
}

export interface Phase {
	readonly label: string;
	readonly connections: number;
	/** Calls over all rounds. */
	readonly calls: number;
}

export const emptyTally = (): Tally => ({ latencies: [], milliseconds: 0, cpuSeconds: 0 });

export async function calls(session: LeanSession, connections: number, total: number, tally?: Tally): Promise<void> {
	const perConnection = Math.ceil(total / connections);
	await Promise.all(
		Array.from({ length: connections }, async () => {
			for (let index = 0; index < perConnection; index++) {
				const sent = performance.now();
				await session.call();
				tally?.latencies.push(performance.now() - sent);
			}
		}),
	);
}

/**
 * Starts every front, then warms each up, adding them to `fronts` once started (the caller
 * stops them). Warmed only once all have started, so that none waits through the others'
 * start-up after its warm-up.
 */
export async function startWarm(starts: ReadonlyArray<() => Promise<Front>>, fronts: Front[]): Promise<void> {
	for (const start of starts) fronts.push(await start());
	for (const front of fronts) {
		// Every phase once, so that the code each takes is optimised before the rounds.
		await calls(front.session, 1, WARM_UP);
		await calls(front.session, 16, WARM_UP * 4);
		await calls(front.session, 64, WARM_UP * 4);
	}
}

/**
 * The fronts' order in round `round`: a shuffle seeded by the round, the same in every run. Not
 * a rotation, which keeps each front behind the same neighbour in every round, and a front's
 * work after its round (a telemetry export, a collection) then always lands on the same one.
 */
export function orderOf(round: number, count: number): number[] {
	const order = Array.from({ length: count }, (_, index) => index);
	// mulberry32, a small well-mixed generator, seeded by the round.
	let state = round + 1;
	const random = () => {
		state = (state + 0x6d2b79f5) | 0;
		let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
		mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
		return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
	};
	for (let last = count - 1; last > 0; last--) {
		const pick = Math.floor(random() * (last + 1));
		[order[last], order[pick]] = [order[pick]!, order[last]!];
	}
	return order;
}

/**
 * Every phase over every front, in `rounds` rounds, each in its own order (see `orderOf`); one
 * tally per front and phase, CPU from the front's own process. Each round starts after a pause,
 * so that what the front before leaves running (a peer's collections, the engine relaying its
 * last output, a telemetry export) is over, then a tenth of its calls unmeasured: a front that
 * waited through other fronts' rounds has lost its caches to them, and the measure is of a
 * front at work.
 */
export async function alternatingRounds(fronts: readonly Front[], rounds: number, phases: readonly Phase[] = PHASES): Promise<Tally[][]> {
	const tallies = fronts.map(() => phases.map(emptyTally));
	// Round 0 is not measured: the front warmed first has waited through every other's warm-up,
	// and paid 20–30 % more in its first rounds than an identical front warmed last.
	for (let round = 0; round <= rounds; round++) {
		for (const [phaseIndex, phase] of phases.entries()) {
			for (const index of orderOf(round * phases.length + phaseIndex, fronts.length)) {
				const front = fronts[index]!;
				const tally = round === 0 ? undefined : tallies[index]![phaseIndex]!;
				await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
				await calls(front.session, phase.connections, phase.calls / rounds / 10);
				const cpuBefore = front.pid ? cpuSecondsOf(front.pid) : 0;
				const started = performance.now();
				await calls(front.session, phase.connections, phase.calls / rounds, tally);
				if (!tally) continue;
				tally.milliseconds += performance.now() - started;
				if (front.pid) tally.cpuSeconds += cpuSecondsOf(front.pid) - cpuBefore;
			}
		}
	}
	return tallies;
}

/** One cycle of an A/B: each side's calls, time and CPU in it. */
export interface Cycle {
	readonly a: Tally;
	readonly b: Tally;
}

/**
 * An A/B in short bursts, each a tenth of the phase's calls: in every cycle, each process of
 * sides `a` and `b` in turn, the sides interleaved, and each cycle in the reverse order of the
 * one before (A B A B, B A B A), so that neither side always follows the other. The machine's speed drifts
 * by a quarter from one round of `alternatingRounds` to the next here (other tenants), which
 * sways a comparison of rounds minutes apart by more than a 5 % verdict; a cycle takes about a
 * second, so both sides of it meet the same machine. A burst's CPU runs from its start to the
 * start of the same process's next burst, so what a process does after its burst (an export,
 * a collection) counts too. One cycle first, unmeasured.
 */
export async function pairedBursts(a: readonly Front[], b: readonly Front[], phase: Phase, cycles: number): Promise<Cycle[]> {
	const processes = a.flatMap((front, index) => [front, b[index]!]).concat(b.slice(a.length));
	const measured: Cycle[] = [];
	/** Where each process's open burst goes, and its CPU when the burst began. */
	const open = new Map<Front, { tally: Tally; cpuSeconds: number }>();
	const begin = (front: Front, tally: Tally | undefined) => {
		const now = cpuSecondsOf(front.pid!);
		const last = open.get(front);
		if (last) last.tally.cpuSeconds += now - last.cpuSeconds;
		open.set(front, { tally: tally ?? emptyTally(), cpuSeconds: now });
	};
	for (let cycle = 0; cycle <= cycles; cycle++) {
		const current = cycle === 0 ? undefined : { a: emptyTally(), b: emptyTally() };
		const order = cycle % 2 ? [...processes].reverse() : processes;
		for (const front of order) {
			const tally = current && (a.includes(front) ? current.a : current.b);
			begin(front, tally);
			const started = performance.now();
			await calls(front.session, phase.connections, phase.calls / 10, tally);
			if (tally) tally.milliseconds += performance.now() - started;
		}
		if (current) measured.push(current);
	}
	await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
	for (const front of processes) begin(front, undefined);
	return measured;
}

/** The median, over the cycles, of side b's figure over side a's, and the middle half of them. */
export function pairedRatio(cycles: readonly Cycle[], figure: (tally: Tally) => number): { median: number; quartiles: [number, number] } {
	const ratios = cycles.map((cycle) => figure(cycle.b) / figure(cycle.a));
	return { median: median(ratios), quartiles: [percentile(ratios, 25), percentile(ratios, 75)] };
}

export function rateOf(tally: Tally): number {
	return tally.latencies.length / (tally.milliseconds / 1000);
}

/** The front process's CPU per call, in µs. */
export function cpuPerCallOf(tally: Tally): number {
	return (tally.cpuSeconds * 1e6) / tally.latencies.length;
}

/** Two processes of one front as one: their calls, time and CPU together. */
export function pooled(first: Tally, second: Tally): Tally {
	return { latencies: [...first.latencies, ...second.latencies], milliseconds: first.milliseconds + second.milliseconds, cpuSeconds: first.cpuSeconds + second.cpuSeconds };
}

/** How far the second of two identical fronts is from the first. */
export function spread(first: Tally, second: Tally): string {
	return `throughput ${(rateOf(second) / rateOf(first)).toFixed(2)}×, CPU per call ${(cpuPerCallOf(second) / cpuPerCallOf(first)).toFixed(2)}×`;
}
