/**
 * `hangar proxy NAME [--replica I --replica-port P]`, the per-workload proxy process. The
 * workloads service (and a replicated workload's supervisor) spawns it with exactly these
 * arguments, which `main.ts` recognises before building the command tree: a proxy per
 * workload runs for as long as the workload, so it loads only the proxy and its runtime.
 */
import { holdOptimisingCompiler } from '../proxy/chain/compiler/compiler.js';
import type { ReplicaRole } from '../proxy/main.js';

/** Runs the proxy of workload `name` (one of its replicas with `replica`). */
export async function runProxyCommand(name: string, replica?: ReplicaRole): Promise<void> {
	// Before the proxy's modules load: see proxy/chain/compiler/compiler.ts.
	holdOptimisingCompiler();
	const [{ runProxy }, { DockerRuntime }] = await Promise.all([import('../proxy/main.js'), import('../runtime/docker.js')]);
	await runProxy(name, new DockerRuntime(), replica);
}

/** The arguments as the spawners write them, else undefined (commander then reads them, and reports what is wrong). */
export function spawnedProxyArguments(args: readonly string[]): { name: string; replica?: ReplicaRole } | undefined {
	const [command, name, ...rest] = args;
	if (command !== 'proxy' || !name || name.startsWith('-')) return undefined;
	if (rest.length === 0) return { name };
	const [replicaFlag, index, portFlag, port] = rest;
	if (rest.length !== 4 || replicaFlag !== '--replica' || portFlag !== '--replica-port' || !/^\d+$/.test(index!) || !/^\d+$/.test(port!)) return undefined;
	return Number(index) > 0 && Number(port) > 0 && Number(port) <= 65_535 ? { name, replica: { index: Number(index), port: Number(port) } } : undefined;
}
