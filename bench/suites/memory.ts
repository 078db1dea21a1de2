/**
 * The memory each front holds for one containerised stdio server: its resident set (RSS, from
 * /proc) 3 s after it serves, once it has been left alone long enough for V8 to give back what
 * it no longer uses, and again after a loaded run (sequential calls, then 64 connections) and a
 * settle. Hangar's proxy (plain, and with authentication + authorization on)
 * against supergateway, mcp-proxy and the minimal bridge, above a bare `node -e` idling. The
 * peers relay through a `docker run -i` client whose memory is not counted (as in `bound`).
 */
import { spawn } from 'node:child_process';
import { readFile, rm, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AUDIENCE, startIssuer } from '../issuer.js';
import { residentAndThreads, stopChild } from '../processes.js';
import { calls, type Front } from '../rounds.js';
import type { Table } from '../stats.js';
import { DOCKER_RUN, hangar, minimalBridge, npmPeer } from './proxyBound.js';

const PLAIN = "Hangar's proxy";
/** How long a front is left alone before its resident set is read. */
const SETTLE_MS = 3_000;
/**
 * How long an idle front is left alone in all: V8's memory reducer shrinks the heap (the young
 * generation first) about 8 s after a process stops allocating, which is the state an idle
 * proxy spends its life in.
 */
const IDLE_MS = 15_000;
const LOADED_CALLS = 2_000;
/** Issue #31: fifty plain workloads' proxies fit on a laptop. */
const PLAIN_IDLE_TARGET_MB = 60;
/** Issue #47: an idle plain proxy holds at most this much more than bare Node (resident sets). */
const PLAIN_IDLE_TARGET_RATIO = 1.3;
const BARE = 'node -e (bare Node.js, idle)';

/**
 * The part of a process's resident set no other process shares (private pages, mostly its
 * heaps): what each more proxy costs, where the Node binary's pages in the resident set are
 * shared by every Node process on the machine.
 */
async function privateMegabytes(pid: number): Promise<number> {
	const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
	const kilobytes = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)![1]);
	return (kilobytes('Private_Clean') + kilobytes('Private_Dirty')) / 1024;
}

export const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

/** A bare Node.js process idling: the floor every Node front stands on. */
function bareNode(): Front {
	const child = spawn(process.execPath, ['-e', 'setInterval(() => undefined, 1 << 30)'], { stdio: 'ignore' });
	return { name: BARE, pid: child.pid, session: { call: async () => undefined, close: () => undefined }, stop: () => stopChild(child) };
}

export async function memory(): Promise<Table[]> {
	const issuer = await startIssuer();
	const folder = await mkdtemp(join(tmpdir(), 'hangar-bench-memory-'));
	const policies = join(folder, 'authz.json');
	await writeFile(policies, JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies: ['permit(principal, action == Action::"call_tool", resource == Tool::"echo");'], entities_json: '[]' } }));
	const token = await issuer.sign('RS256', 'rita');
	const starts: Array<() => Promise<Front>> = [
		async () => bareNode(),
		() => hangar('bench-memory', PLAIN),
		() => hangar('bench-memory-secure', "Hangar's proxy, authentication + authorization on", ['--oidc-issuer', issuer.url, '--oidc-audience', AUDIENCE, '--authz-config', policies], { Authorization: `Bearer ${token}` }),
		() => minimalBridge('minimal bridge (node:http + one engine attach)'),
		() => npmPeer('supergateway 4', 'supergateway', (port) => ['--stdio', DOCKER_RUN.join(' '), '--outputTransport', 'streamableHttp', '--stateful', '--port', String(port), '--logLevel', 'none']),
		() => npmPeer('mcp-proxy 6', 'mcp-proxy', (port) => ['--port', String(port), '--host', '127.0.0.1', '--server', 'stream', '--', ...DOCKER_RUN]),
	];
	const rows: string[][] = [];
	const idleOf = new Map<string, number>();
	const earlyOf = new Map<string, number>();
	try {
		// One front at a time, so that none is measured while another loads the machine.
		for (const start of starts) {
			const front = await start();
			try {
				await settle();
				const early = residentAndThreads(front.pid!).resident;
				await new Promise((resolve) => setTimeout(resolve, IDLE_MS - SETTLE_MS));
				const [idle, idlePrivate] = await Promise.all([residentAndThreads(front.pid!).resident, privateMegabytes(front.pid!)]);
				await calls(front.session, 1, LOADED_CALLS / 2);
				await calls(front.session, 64, LOADED_CALLS / 2);
				await settle();
				const loaded = residentAndThreads(front.pid!).resident;
				rows.push([front.name, `${early.toFixed(1)} MB`, `${idle.toFixed(1)} MB`, `${idlePrivate.toFixed(1)} MB`, `${loaded.toFixed(1)} MB`]);
				idleOf.set(front.name, idle);
				earlyOf.set(front.name, early);
			} finally {
				front.session.close();
				await front.stop();
			}
		}
	} finally {
		issuer.stop();
		await rm(folder, { recursive: true, force: true });
	}
	return [
		{
			title: `Resident memory of each front for one containerised stdio server, one session open: ${SETTLE_MS / 1000} s after it serves, idle (${IDLE_MS / 1000} s after it serves), and after ${LOADED_CALLS.toLocaleString('en-US')} tools/call (half sequential, half over 64 connections) and ${SETTLE_MS / 1000} s more`,
			columns: ['front', `RSS at ${SETTLE_MS / 1000} s`, 'idle RSS', 'idle, private to it', 'RSS after the calls'],
			rows,
			verdicts: verdicts(idleOf.get(PLAIN), idleOf.get(BARE), earlyOf.get(PLAIN)! / earlyOf.get(BARE)!),
		},
	];
}

function verdicts(plain: number | undefined, bare: number | undefined, earlyRatio: number): string[] {
	if (plain === undefined || bare === undefined) return [];
	const ratio = plain / bare;
	return [
		`${PLAIN} idle: ${plain.toFixed(1)} MB (target < ${PLAIN_IDLE_TARGET_MB} MB) — ${plain < PLAIN_IDLE_TARGET_MB ? 'met' : 'MISSED'}`,
		`${PLAIN} idle vs bare Node: ${ratio.toFixed(2)}× (target ≤ ${PLAIN_IDLE_TARGET_RATIO}×) — ${ratio <= PLAIN_IDLE_TARGET_RATIO ? 'met' : 'MISSED'}`,
		`${PLAIN} at ${SETTLE_MS / 1000} s vs bare Node at ${SETTLE_MS / 1000} s: ${earlyRatio.toFixed(2)}×`,
	];
}
