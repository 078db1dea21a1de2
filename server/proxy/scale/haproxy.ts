/**
 * HAProxy in front of a workload's proxy replicas: its configuration, and the process.
 *
 * HAProxy, not a balancer of ours: it checks each replica's `/health`, takes a dead one out
 * within a second or two, sends a request that found a replica gone (refused, or closed
 * without an answer) to another one, and answers with a JSON-RPC error when none is up.
 * A legacy SSE session's posts must reach the replica holding its stream, named by the
 * prefix of its session id. So must a Streamable HTTP session's requests when there is no
 * Redis to share sessions through; with one, they go round-robin while HAProxy's own check
 * of Redis (PING) passes, and to the session's replica while it does not.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { access, mkdir, rm, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { isHostName } from '../../net/hostPort.js';
import { stopLeftoverBalancer, type BalancerFiles } from '../../runspec/balancer.js';

/** Most a call may take; the proxy's own request timeout ends calls long before. */
const STREAM_TIMEOUT = '24h';

export interface BalancerConfig {
	readonly name: string;
	readonly host: string;
	readonly port: number;
	/** The replicas' loopback ports, replica 1 first. */
	readonly replicaPorts: readonly number[];
	/** The Redis (`host:port`) sessions are shared through: any replica serves any Streamable HTTP session. */
	readonly sessionRedis?: { readonly host: string; readonly port: number };
}

/** The replica a session id names (see `ClientSessionRegistryOptions.idPrefix`). */
export function replicaPrefix(index: number): string {
	return `r${index}-`;
}

const NO_REPLICA = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'no replica of the proxy is up; see hangar logs' } });

/** `value` when it is one HAProxy token of `kind`; anything else is refused, never written. */
function token(value: string, kind: 'name' | 'host'): string {
	const sound = kind === 'host' ? isHostName(value) : /^[A-Za-z0-9._-]+$/.test(value);
	if (!sound) throw new Error(`${JSON.stringify(value)} is not a ${kind} HAProxy's configuration can take`);
	return value;
}

function endpoint(host: string, port: number): string {
	if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${port} is not a port`);
	return `${host.includes(':') ? `[${token(host, 'host')}]` : token(host, 'host')}:${port}`;
}

/** The configuration; every value from the workload is checked as a token first (nothing else is quoted into it). */
export function renderConfig(config: BalancerConfig): string {
	const name = token(config.name, 'name');
	const servers = config.replicaPorts.map((_, at) => `r${at + 1}`);
	const redis = config.sessionRedis;
	const redisDown = redis ? '{ nbsrv(redis) eq 0 } ' : '';
	const lines = [
		`# Written by Hangar for the replicas of workload ${name}; rewritten at every start.`,
		'global',
		'\tmaxconn 4096',
		'defaults',
		'\tmode http',
		'\ttimeout connect 2s',
		'\ttimeout http-request 30s',
		'\ttimeout http-keep-alive 65s',
		'\ttimeout queue 30s',
		`\ttimeout client ${STREAM_TIMEOUT}`,
		`\ttimeout server ${STREAM_TIMEOUT}`,
		'\tretries 3',
		'\toption redispatch 1',
		// A replica killed mid-call closes without an answer: the request is sent to another.
		'\tretry-on conn-failure empty-response',
		`frontend ${name}`,
		`\tbind ${endpoint(config.host, config.port)}`,
		'\tdefault_backend replicas',
		'backend replicas',
		'\tbalance roundrobin',
		// Alive is enough: a replica whose server is down answers 503 with the reason itself.
		'\toption httpchk GET /health',
		'\thttp-check expect rstatus ^(200|503)$',
		'\tdefault-server check inter 1s fall 2 rise 1',
		`\thttp-error status 503 content-type application/json string '${NO_REPLICA}'`,
		...servers.map((server, at) => `\tuse-server ${server} if { urlp(session_id) -m beg ${replicaPrefix(at + 1)} }`),
		...servers.map((server, at) => `\tuse-server ${server} if ${redisDown}{ req.hdr(mcp-session-id) -m beg ${replicaPrefix(at + 1)} }`),
		...servers.map((server, at) => `\tserver ${server} ${endpoint('127.0.0.1', config.replicaPorts[at]!)}`),
		...(redis
			? [
					'backend redis',
					'\tmode tcp',
					'\toption tcp-check',
					'\ttcp-check send PING\\r\\n',
					'\ttcp-check expect string +PONG',
					`\tserver redis ${endpoint(redis.host, redis.port)} check inter 1s fall 1 rise 1`,
				]
			: []),
	];
	return `${lines.join('\n')}\n`;
}

/** The `haproxy` program: `HANGAR_HAPROXY`, else the first on the PATH; undefined when there is none. */
export async function findHaproxy(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
	// Debian puts it in /usr/sbin, which a user's PATH may lack.
	const searched = [...(env.PATH ?? '').split(delimiter).filter(Boolean).map((folder) => join(folder, 'haproxy')), '/usr/sbin/haproxy'];
	for (const candidate of env.HANGAR_HAPROXY ? [env.HANGAR_HAPROXY] : searched) {
		try {
			await access(candidate, constants.X_OK);
			return candidate;
		} catch {
			// not here
		}
	}
	return undefined;
}

/** One HAProxy (master and worker) serving a workload's port from its configuration file. */
export class Balancer {
	private child: ChildProcess | undefined;

	constructor(
		private readonly binary: string,
		private readonly files: BalancerFiles,
	) {}

	/** Checks and writes the configuration (HAProxy's own `-c` says what is wrong with it). */
	async configure(config: BalancerConfig): Promise<void> {
		await mkdir(dirname(this.files.config), { recursive: true, mode: 0o700 });
		await writeFile(this.files.config, renderConfig(config), { mode: 0o600 });
		const check = spawn(this.binary, ['-c', '-q', '-f', this.files.config], { stdio: ['ignore', 'ignore', 'pipe'], windowsHide: true });
		let errors = '';
		check.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
		const code = await new Promise<number | null>((resolve) => check.once('close', resolve).once('error', () => resolve(-1)));
		if (code !== 0) throw new Error(`HAProxy refused its configuration: ${errors.trim() || `exit ${code}`}`);
	}

	/** Starts HAProxy; `exited` is called when it stops without being asked to. */
	async start(exited: (code: number | null) => void): Promise<void> {
		await stopLeftoverBalancer(this.files);
		const child = spawn(this.binary, ['-W', '-db', '-f', this.files.config, '-p', this.files.pid], { stdio: ['ignore', 'inherit', 'inherit'], windowsHide: true });
		this.child = child;
		child.once('exit', (code) => {
			if (this.child === child) {
				this.child = undefined;
				exited(code);
			}
		});
		await new Promise<void>((resolve, reject) => child.once('spawn', resolve).once('error', reject));
	}

	async stop(): Promise<void> {
		const child = this.child;
		this.child = undefined;
		if (child?.exitCode === null) {
			const exited = new Promise((resolve) => child.once('exit', resolve));
			child.kill('SIGTERM');
			await exited;
		}
		await rm(this.files.pid, { force: true });
	}
}
