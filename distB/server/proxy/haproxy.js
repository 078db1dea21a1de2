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
import { spawn } from 'node:child_process';
import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
/** Most a call may take; the proxy's own request timeout ends calls long before. */
const STREAM_TIMEOUT = '24h';
/** The replica a session id names (see `SessionRegistryOptions.idPrefix`). */
export function replicaPrefix(index) {
    return `r${index}-`;
}
const NO_REPLICA = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'no replica of the proxy is up; see hangar logs' } });
export function renderConfig(config) {
    const servers = config.replicaPorts.map((port, at) => `r${at + 1}`);
    const redis = config.sessionRedis;
    const redisDown = redis ? '{ nbsrv(redis) eq 0 } ' : '';
    const lines = [
        '# Written by Hangar for the replicas of workload ' + config.name + '; rewritten at every start.',
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
        `frontend ${config.name}`,
        `\tbind ${config.host}:${config.port}`,
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
        ...servers.map((server, at) => `\tserver ${server} 127.0.0.1:${config.replicaPorts[at]}`),
        ...(redis
            ? [
                'backend redis',
                '\tmode tcp',
                '\toption tcp-check',
                '\ttcp-check send PING\\r\\n',
                '\ttcp-check expect string +PONG',
                `\tserver redis ${redis.host.includes(':') ? `[${redis.host}]` : redis.host}:${redis.port} check inter 1s fall 1 rise 1`,
            ]
            : []),
    ];
    return `${lines.join('\n')}\n`;
}
/** The `haproxy` program: `HANGAR_HAPROXY`, else the first on the PATH; undefined when there is none. */
export async function findHaproxy(env = process.env) {
    // Debian puts it in /usr/sbin, which a user's PATH may lack.
    const searched = [...(env.PATH ?? '').split(delimiter).filter(Boolean).map((folder) => join(folder, 'haproxy')), '/usr/sbin/haproxy'];
    for (const candidate of env.HANGAR_HAPROXY ? [env.HANGAR_HAPROXY] : searched) {
        try {
            await access(candidate, constants.X_OK);
            return candidate;
        }
        catch {
            // not here
        }
    }
    return undefined;
}
/** One HAProxy (master and worker) serving a workload's port from the configuration at `configFile`. */
export class Balancer {
    binary;
    configFile;
    pidFile;
    child;
    constructor(binary, configFile, 
    /** Where HAProxy's pid is kept, so a balancer left behind by a killed supervisor is stopped. */
    pidFile) {
        this.binary = binary;
        this.configFile = configFile;
        this.pidFile = pidFile;
    }
    /** Checks and writes the configuration (HAProxy's own `-c` says what is wrong with it). */
    async configure(config) {
        await mkdir(dirname(this.configFile), { recursive: true, mode: 0o700 });
        await writeFile(this.configFile, renderConfig(config), { mode: 0o600 });
        const check = spawn(this.binary, ['-c', '-q', '-f', this.configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
        let errors = '';
        check.stderr.on('data', (chunk) => (errors += chunk.toString()));
        const code = await new Promise((resolve) => check.once('close', resolve).once('error', () => resolve(-1)));
        if (code !== 0)
            throw new Error(`HAProxy refused its configuration: ${errors.trim() || `exit ${code}`}`);
    }
    /** Starts HAProxy; `exited` is called when it stops without being asked to. */
    async start(exited) {
        await this.stopLeftover();
        const child = spawn(this.binary, ['-W', '-db', '-f', this.configFile, '-p', this.pidFile], { stdio: ['ignore', 'inherit', 'inherit'] });
        this.child = child;
        child.once('exit', (code) => {
            if (this.child === child) {
                this.child = undefined;
                exited(code);
            }
        });
        await new Promise((resolve, reject) => child.once('spawn', resolve).once('error', reject));
    }
    get pid() {
        return this.child?.pid;
    }
    async stop() {
        const child = this.child;
        this.child = undefined;
        if (child?.exitCode === null) {
            const exited = new Promise((resolve) => child.once('exit', resolve));
            child.kill('SIGTERM');
            await exited;
        }
        await rm(this.pidFile, { force: true });
    }
    async stopLeftover() {
        const pid = Number((await readFile(this.pidFile, 'utf8').catch(() => '')).trim().split('\n')[0]);
        if (!Number.isInteger(pid) || pid <= 0)
            return;
        const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        if (!command.includes(this.configFile))
            return; // another process has that pid now
        try {
            process.kill(pid, 'SIGTERM');
        }
        catch {
            return;
        }
        for (let waited = 0; waited < 5_000; waited += 50) {
            try {
                process.kill(pid, 0);
            }
            catch {
                return;
            }
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
    }
}
//# sourceMappingURL=haproxy.js.map