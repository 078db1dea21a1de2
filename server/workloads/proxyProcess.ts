/**
 * Starting and stopping workload proxies (`hangar proxy NAME`). A proxy is spawned detached
 * (its own session on POSIX, its own process group and no console window on Windows; output
 * appended to its log file) so it survives whoever started it; the spawner hands it secret
 * header values over IPC, waits for `ready`, then lets it go. It is stopped with SIGTERM, or
 * on Windows, which has no such signal, by asking over its local channel; then forced.
 */
import { spawn } from 'node:child_process';
import { mkdir, open, readFile, rename, stat, type FileHandle } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { dirname } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import { balancerFilesOf, stopLeftoverBalancer } from '../runspec/balancer.js';
import { STOP_PATH } from '../runspec/localLink.js';
import type { LaunchMessage, ProxyReport } from '../runspec/messages.js';
import type { ProxyRecord, WorkloadStore } from '../runspec/store.js';
import { CLI_ENTRY } from './cliEntry.js';
import { isProxyProcess, liveProxy } from './liveProxy.js';

const LOG_ROTATE_BYTES = 5 * 1024 * 1024;
const STOP_GRACE_MS = 5_000;
const ASK_TIMEOUT_MS = 2_000;

export interface LaunchResult {
	readonly pid: number;
	/** False when the proxy listens but its server did not answer in time. */
	readonly ready: boolean;
}

async function askToStop(record: ProxyRecord, platform: NodeJS.Platform): Promise<void> {
	if (platform !== 'win32') {
		try {
			process.kill(record.pid, 'SIGTERM');
		} catch {
			// gone already
		}
		return;
	}
	// A proxy without a channel (an older one, or one that could not open it) is forced after the grace period.
	if (!record.socket) return;
	await new Promise<void>((resolve) => {
		const request = httpRequest({ socketPath: record.socket, path: STOP_PATH, method: 'POST', timeout: ASK_TIMEOUT_MS }, (response) => {
			response.resume();
			resolve();
		});
		request.on('timeout', () => request.destroy());
		request.on('error', () => resolve());
		request.end();
	});
}

async function openLog(path: string): Promise<FileHandle> {
	await mkdir(dirname(path), { recursive: true, mode: 0o700 });
	try {
		if ((await stat(path)).size > LOG_ROTATE_BYTES) await rename(path, `${path}.1`);
	} catch {
		// no log yet
	}
	return open(path, 'a', 0o600);
}

/**
 * Spawns the proxy and waits until it serves (or `readyTimeoutMs` passes, or it fails). When
 * `signal` aborts first, the proxy is killed and the signal's reason thrown.
 */
export async function launchProxy(
	store: WorkloadStore,
	name: string,
	secretHeaders: Record<string, string>,
	readyTimeoutMs: number,
	env: NodeJS.ProcessEnv = process.env,
	entry: string = CLI_ENTRY,
	signal?: AbortSignal,
): Promise<LaunchResult> {
	signal?.throwIfAborted();
	const logFile = store.logFile(name);
	const log = await openLog(logFile);
	const child = spawn(process.execPath, [entry, 'proxy', name], {
		detached: true,
		windowsHide: true,
		stdio: ['ignore', log.fd, log.fd, 'ipc'],
		env,
	});
	await log.close(); // the child holds its own copy
	const pid = child.pid;
	if (pid === undefined) throw new HangarError(500, `cannot start the proxy of ${name}`, 'proxy_failed');
	const configure: LaunchMessage = { type: 'configure', headers: secretHeaders };
	child.send(configure);

	let onAbort = () => undefined as void;
	const outcome = await new Promise<'ready' | 'timeout' | 'aborted' | { failed: string }>((resolve) => {
		const timer = setTimeout(() => resolve('timeout'), readyTimeoutMs);
		const settle = (value: 'ready' | 'timeout' | 'aborted' | { failed: string }) => {
			clearTimeout(timer);
			resolve(value);
		};
		child.on('message', (message: ProxyReport) => {
			if (message.type === 'ready') settle('ready');
			else if (message.type === 'failed') settle({ failed: message.message });
		});
		child.once('exit', (code) => settle({ failed: `the proxy exited with code ${code}` }));
		onAbort = () => settle('aborted');
		signal?.addEventListener('abort', onAbort, { once: true });
		if (signal?.aborted) onAbort(); // aborted while the proxy was being spawned
	});
	signal?.removeEventListener('abort', onAbort);
	child.removeAllListeners();
	if (child.connected) child.disconnect();
	child.unref();
	if (outcome === 'aborted') {
		child.kill('SIGKILL');
		throw signal!.reason;
	}
	if (typeof outcome === 'object') {
		const tail = (await readFile(logFile, 'utf8').catch(() => '')).trim().split('\n').slice(-3).join(' | ');
		throw new HangarError(500, `the proxy of ${name} failed: ${outcome.failed}${tail ? ` (log: ${tail})` : ''}`, 'proxy_failed');
	}
	return { pid, ready: outcome === 'ready' };
}

/**
 * Stops the workload's proxy if it runs: SIGTERM (on Windows a request over its local channel),
 * then SIGKILL (TerminateProcess) after a grace period; and the load balancer of its replicas,
 * should a killed proxy have left it holding the port.
 */
export async function stopProxy(store: WorkloadStore, name: string, platform: NodeJS.Platform = process.platform): Promise<void> {
	const record = await liveProxy(store, name);
	if (record) {
		await askToStop(record, platform);
		const deadline = Date.now() + STOP_GRACE_MS;
		while (Date.now() < deadline && (await isProxyProcess(record.pid, name))) await new Promise((resolve) => setTimeout(resolve, 50));
		if (await isProxyProcess(record.pid, name)) {
			try {
				process.kill(record.pid, 'SIGKILL');
			} catch {
				// gone already
			}
		}
	}
	await stopLeftoverBalancer(balancerFilesOf(store.paths, name));
	await store.proxies.remove(name);
}
