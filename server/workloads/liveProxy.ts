/**
 * Whether a workload's proxy runs: its record, and a live process that is that proxy. Apart
 * from proxyProcess.ts (which starts and stops proxies), so that reading a workload's state
 * loads nothing of that.
 */
import { readFile } from 'node:fs/promises';
import type { ProxyRecord, WorkloadStore } from '../runspec/store.js';
import { isAlive } from '../store/lock.js';

/** True when `pid` is alive and (where the OS tells) is this workload's proxy. */
export async function isProxyProcess(pid: number, name: string): Promise<boolean> {
	if (!isAlive(pid)) return false;
	if (process.platform !== 'linux') return true;
	try {
		const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
		const at = argv.indexOf('proxy');
		return at >= 0 && argv[at + 1] === name;
	} catch {
		return false; // exited meanwhile
	}
}

/** The proxy's record when its process is alive, else undefined. */
export async function liveProxy(store: WorkloadStore, name: string): Promise<ProxyRecord | undefined> {
	const record = await store.proxies.get(name).catch(() => undefined);
	return record && (await isProxyProcess(record.pid, name)) ? record : undefined;
}
