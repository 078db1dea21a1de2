/**
 * The proxy of a workload with `scaling_config.replicas`: a supervisor that runs the replicas
 * (`hangar proxy NAME --replica I --replica-port P`, each on a loopback port of its own) and
 * HAProxy on the workload's port in front of them (haproxy.ts). To the workloads service it
 * is the workload's proxy, as a single one would be: it answers `ready`, keeps the proxy
 * record (its pid; the best server state of the replicas) and ends everything on SIGTERM.
 *
 * A replica or HAProxy that exits unasked is started again, on the same port, after a pause
 * that grows while it keeps failing. A replica whose supervisor is gone ends itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect, createServer } from 'node:net';
import type { Environment } from '../../environment.js';
import type { Logger } from '../../log.js';
import { balancerFilesOf } from '../../runspec/balancer.js';
import type { LaunchMessage, ProxyReport } from '../../runspec/messages.js';
import type { BackendState, ProxyRecord, StoredWorkload, WorkloadStore } from '../../runspec/store.js';
import { parseAddress } from '../../runspec/redisAddress.js';
import { within } from '../../within.js';
import { Balancer, findHaproxy } from './haproxy.js';

const MAX_BACKOFF_MS = 10_000;
/** A replica that served this long before it exited is restarted at once. */
const STABLE_MS = 60_000;
const READY_WAIT_MS = 120_000;
/** The best first: the workload's server state is that of its best replica. */
const STATE_ORDER: readonly BackendState[] = ['connected', 'auth_retrying', 'unauthenticated', 'connecting', 'disconnected'];

function report(message: ProxyReport): void {
	if (process.connected) process.send?.(message, undefined, undefined, () => undefined);
}

/** Free loopback ports for the replicas (the kernel's pick, released for them to bind). */
async function freePorts(count: number): Promise<number[]> {
	const servers = await Promise.all(
		Array.from({ length: count }, () => new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
			const server = createServer();
			server.once('error', reject).listen({ host: '127.0.0.1', port: 0 }, () => resolve(server));
		})),
	);
	const ports = servers.map((server) => (server.address() as { port: number }).port);
	await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
	return ports;
}

/** Resolves once `host:port` accepts connections; rejects after `timeoutMs`. */
async function listening(host: string, port: number, timeoutMs: number): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const accepted = await new Promise<boolean>((resolve) => {
			const socket = connect({ host, port }, () => resolve(true));
			socket.once('error', () => resolve(false));
			socket.once('connect', () => socket.destroy());
		});
		if (accepted) return;
		if (Date.now() > deadline) throw new Error(`HAProxy does not listen on ${host}:${port}; see its messages above`);
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
}

/** One replica process, started again whenever it exits unasked. */
class Replica {
	state: BackendState = 'connecting';
	detail: string | undefined;
	/** Whether it reaches the Redis sessions are shared through (undefined without one). */
	sessionsShared: boolean | undefined;
	private child: ChildProcess | undefined;
	private stopped = false;
	private backoffMs = 250;

	constructor(
		private readonly name: string,
		readonly index: number,
		readonly port: number,
		private readonly configuration: LaunchMessage,
		private readonly log: Logger,
		private readonly changed: () => void,
	) {}

	/** Starts the replica; resolves once it serves (its server may still be connecting). */
	start(): Promise<void> {
		// `fork` with a hidden window: its options have no `windowsHide`, and on Windows a child of a windowless proxy opens a console.
		const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, 'proxy', this.name, '--replica', String(this.index), '--replica-port', String(this.port)], {
			stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
			windowsHide: true,
		});
		this.child = child;
		const started = Date.now();
		child.send(this.configuration);
		const ready = new Promise<void>((resolve, reject) => {
			child.on('message', (message: ProxyReport) => {
				if (message.type === 'ready') resolve();
				else if (message.type === 'failed') reject(new Error(`replica ${this.index}: ${message.message}`));
				else if (message.type === 'sessions') {
					this.sessionsShared = message.shared;
					this.changed();
				} else this.update(message.state, message.detail);
			});
			child.once('exit', (code, signal) => {
				reject(new Error(`replica ${this.index} exited (${signal ?? `code ${code}`})`));
				if (this.child !== child || this.stopped) return;
				this.child = undefined;
				this.update('disconnected', `replica ${this.index} exited`);
				if (Date.now() - started > STABLE_MS) this.backoffMs = 250;
				this.log.warn(`replica ${this.index} exited (${signal ?? `code ${code}`}); starting it again in ${this.backoffMs} ms`);
				setTimeout(() => void this.restart(), this.backoffMs);
				this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
			});
		});
		ready.catch(() => undefined);
		return ready;
	}

	private async restart(): Promise<void> {
		if (this.stopped) return;
		await this.start().then(
			() => this.log.info(`replica ${this.index} serves again`),
			(error: Error) => this.log.warn(error.message),
		);
	}

	private update(state: BackendState, detail: string | undefined): void {
		this.state = state;
		this.detail = detail;
		this.changed();
	}

	async stop(): Promise<void> {
		this.stopped = true;
		const child = this.child;
		if (!child || child.exitCode !== null) return;
		const exited = new Promise((resolve) => child.once('exit', resolve));
		child.kill('SIGTERM');
		await exited;
	}
}

/** Runs the replicas of `workload` and HAProxy in front of them until SIGTERM. */
export async function superviseReplicas(workload: StoredWorkload, environment: Environment, store: WorkloadStore, configuration: Omit<LaunchMessage, 'type'>): Promise<void> {
	const { log } = environment;
	const name = workload.name;
	const fail = (message: string): never => {
		log.error(message);
		report({ type: 'failed', message });
		process.exit(1);
	};
	const binary = await findHaproxy();
	if (!binary) return fail('scaling_config.replicas needs HAProxy, and there is none: install it (apt-get install haproxy, brew install haproxy) or set HANGAR_HAPROXY to its path');

	const statsToken = configuration.statsToken ?? randomBytes(24).toString('base64url');
	const host = workload.host ?? '127.0.0.1';
	const ports = await freePorts(workload.scaling_config!.replicas!);
	const record: ProxyRecord = { pid: process.pid, host, port: workload.port!, started_at: new Date().toISOString(), backend: 'connecting', stats_token: statsToken };
	let writes = Promise.resolve();
	const save = () => {
		const best = replicas.map((replica) => replica.state).sort((a, b) => STATE_ORDER.indexOf(a) - STATE_ORDER.indexOf(b))[0]!;
		const detail = best === 'connected' ? undefined : replicas.find((replica) => replica.state === best)?.detail;
		const reports = replicas.map((replica) => replica.sessionsShared).filter((shared) => shared !== undefined);
		const shared = reports.length > 0 ? reports.every(Boolean) : undefined;
		if (best === record.backend && detail === record.backend_detail && shared === record.sessions_shared) return;
		record.backend = best;
		record.backend_detail = detail;
		record.sessions_shared = shared;
		const snapshot = { ...record };
		writes = writes.then(() => store.proxies.put(name, snapshot)).catch((error: Error) => log.warn(`cannot record the proxy state: ${error.message}`));
	};
	const launch: LaunchMessage = { type: 'configure', headers: configuration.headers, statsToken };
	const replicas = ports.map((port, at) => new Replica(name, at + 1, port, launch, log, save));
	const balancer = new Balancer(binary, balancerFilesOf(environment.paths, name));

	let stopping = false;
	const stop = async () => {
		if (stopping) return;
		stopping = true;
		log.info('stopping the load balancer and the replicas');
		await balancer.stop();
		await Promise.allSettled(replicas.map((replica) => replica.stop()));
		await writes;
		const current = await store.proxies.get(name).catch(() => undefined);
		if (current?.pid === process.pid) await store.proxies.remove(name).catch(() => undefined);
		process.exit(0);
	};
	process.on('SIGTERM', () => void stop());
	process.on('SIGINT', () => void stop());
	process.on('disconnect', () => undefined);

	const startBalancer = async (): Promise<void> => {
		await balancer.start((code) => {
			if (stopping) return;
			log.warn(`HAProxy exited (code ${code}); starting it again`);
			setTimeout(() => void startBalancer().catch((error: Error) => log.error(`cannot start HAProxy: ${error.message}`)), 1_000);
		});
	};
	try {
		const redis = workload.scaling_config?.session_redis?.address;
		await balancer.configure({ name, host, port: workload.port!, replicaPorts: ports, sessionRedis: redis ? parseAddress(redis) : undefined });
		const serving = Promise.all(replicas.map((replica) => replica.start()));
		if (!(await within(serving.then(() => true), READY_WAIT_MS, false))) throw new Error('the replicas did not start in time');
		await startBalancer();
		await listening(host, workload.port!, 10_000);
	} catch (error) {
		await Promise.allSettled([balancer.stop(), ...replicas.map((replica) => replica.stop())]);
		return fail((error as Error).message);
	}
	writes = writes.then(() => store.proxies.put(name, { ...record })).catch((error: Error) => log.warn(`cannot record the proxy: ${error.message}`));
	save();
	log.info(`${replicas.length} replicas of ${name} behind HAProxy on http://${host}:${workload.port} (ports ${ports.join(', ')})`);
	await writes;
	report({ type: 'ready', port: workload.port! });
}
