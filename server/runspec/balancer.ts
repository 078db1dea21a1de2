/**
 * The files of a replicated workload's load balancer (HAProxy, run by its proxy: see
 * proxy/scale/replicas.ts), and the stop of one that a killed proxy left behind. HAProxy does not
 * end with the process that started it; left running, it would hold the workload's port.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isAlive } from '../store/lock.js';
import type { HangarPaths } from '../store/paths.js';

export interface BalancerFiles {
	readonly config: string;
	/** HAProxy's pid, written by HAProxy itself (`-p`). */
	readonly pid: string;
}

export function balancerFilesOf(paths: HangarPaths, name: string): BalancerFiles {
	const folder = join(paths.data, 'proxies');
	return { config: join(folder, `${name}.haproxy.cfg`), pid: join(folder, `${name}.haproxy.pid`) };
}

/** Stops the HAProxy of `files` if one still runs (its pid, with this configuration on its command line). */
export async function stopLeftoverBalancer(files: BalancerFiles): Promise<void> {
	const pid = Number((await readFile(files.pid, 'utf8').catch(() => '')).trim().split('\n')[0]);
	if (!Number.isInteger(pid) || pid <= 0) return;
	const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
	if (command.includes(files.config)) {
		try {
			process.kill(pid, 'SIGTERM');
			for (let waited = 0; waited < 5_000 && isAlive(pid); waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
		} catch {
			// gone
		}
	}
	await rm(files.pid, { force: true });
}
