/**
 * Time from `hangar run npx://@modelcontextprotocol/server-memory` to its first answered
 * `tools/call` (read_graph, through the workload's proxy with the official SDK client): warm
 * (the image built before: Hangar's second run), and rebuilt (the image's tag removed first,
 * the engine's layer cache kept: what ToolHive, which tags each build by time, does on every
 * run). Builds start from hangar-test/node-base (no registry image can be pulled here).
 */
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { benchEnv, runHangar } from '../processes.js';
import { median, type Table } from '../stats.js';

const PACKAGE = 'npx://@modelcontextprotocol/server-memory';
const ROUNDS = 3;

export async function packages(): Promise<Table[]> {
	const env = { ...benchEnv(), HANGAR_LOG: 'error' };
	await runHangar(['config', 'runtime', 'set', 'npx', '--runtime-image', 'hangar-test/node-base:1'], env);
	const tag = /^# image (\S+)/m.exec(await runHangar(['build', PACKAGE, '--dry-run'], env))![1]!;
	await runHangar(['build', PACKAGE], env);
	const samples = { warm: [] as number[], rebuilt: [] as number[] };
	for (let round = 0; round < ROUNDS; round++) {
		for (const kind of ['rebuilt', 'warm'] as const) {
			if (kind === 'rebuilt') execFileSync('docker', ['rmi', '-f', tag], { stdio: 'ignore' });
			const name = `bench-${kind}-${round}`;
			const started = performance.now();
			const url = JSON.parse(await runHangar(['run', PACKAGE, '--name', name, '--json'], env)).url as string;
			const client = new Client({ name: 'bench', version: '1' });
			await client.connect(new StreamableHTTPClientTransport(new URL(url)));
			await client.callTool({ name: 'read_graph', arguments: {} });
			samples[kind].push(performance.now() - started);
			await client.close();
			await runHangar(['rm', name], env);
		}
	}
	const seconds = (values: number[]) => `${(median(values) / 1000).toFixed(1)} s`;
	const ratio = median(samples.rebuilt) / median(samples.warm);
	return [
		{
			title: `hangar run ${PACKAGE} to the first tools/call (median of ${ROUNDS})`,
			columns: ['case', 'time'],
			rows: [
				['warm: the image built before (Hangar, every run after the first)', seconds(samples.warm)],
				['rebuilt: tag removed, layer cache kept (ToolHive, every run)', seconds(samples.rebuilt)],
			],
			verdicts: [`a warm run is ${ratio.toFixed(1)}× as fast as a run that rebuilds`],
		},
	];
}
