/**
 * Time from `hangar run npx://@modelcontextprotocol/server-memory` to its first answered
 * `tools/call` (read_graph, through the workload's proxy with the official SDK client), in
 * three cases a round:
 * - cold: a first run with nothing cached: the image's tag removed, and the build stage's
 *   configuration made new (a scope registry of its own in the `.npmrc`, which leaves the tag
 *   alone but misses the engine's layer cache), so `npm install` fetches from the registry;
 * - warm: the same package run again: the image is found, nothing is built (checked by its id);
 * - rebuilt: the tag removed, the layer cache kept: what ToolHive, which tags each build by
 *   time, does on every run.
 * Builds start from hangar-test/node-base (no registry image can be pulled here).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { benchEnv, runHangar } from '../processes.js';
import { median, type Table } from '../stats.js';

const PACKAGE = 'npx://@modelcontextprotocol/server-memory';
const ROUNDS = 3;
const CASES = ['cold', 'warm', 'rebuilt'] as const;

export async function packages(): Promise<Table[]> {
	const env: NodeJS.ProcessEnv = { ...benchEnv(), HANGAR_LOG: 'error' };
	// The user's npm configuration, plus a line each cold round changes.
	const npmrc = join(env.HANGAR_HOME!, 'npmrc');
	const userNpmrc = readOptional(process.env.NPM_CONFIG_USERCONFIG || join(homedir(), '.npmrc'));
	env.NPM_CONFIG_USERCONFIG = npmrc;
	writeFileSync(npmrc, userNpmrc);
	await runHangar(['config', 'runtime', 'set', 'npx', '--runtime-image', 'hangar-test/node-base:1'], env);
	const tag = /^# image (\S+)/m.exec(await runHangar(['build', PACKAGE, '--dry-run'], env))![1]!;
	const imageId = () => execFileSync('docker', ['image', 'inspect', '--format', '{{.Id}}', tag], { encoding: 'utf8' }).trim();
	const samples: Record<(typeof CASES)[number], number[]> = { cold: [], warm: [], rebuilt: [] };
	for (let round = 0; round < ROUNDS; round++) {
		let built = '';
		for (const kind of CASES) {
			if (kind !== 'warm') execFileSync('docker', ['rmi', '-f', tag], { stdio: 'ignore' });
			if (kind === 'cold') writeFileSync(npmrc, `${userNpmrc}\n@hangar-bench-${randomBytes(6).toString('hex')}:registry=https://npm.bench.invalid/\n`);
			const name = `bench-${kind}-${round}`;
			const started = performance.now();
			const url = JSON.parse(await runHangar(['run', PACKAGE, '--name', name, '--json'], env)).url as string;
			const client = new Client({ name: 'bench', version: '1' });
			await client.connect(new StreamableHTTPClientTransport(new URL(url)));
			await client.callTool({ name: 'read_graph', arguments: {} });
			samples[kind].push(performance.now() - started);
			await client.close();
			await runHangar(['rm', name], env);
			if (kind === 'warm' && imageId() !== built) throw new Error(`the warm run of round ${round + 1} rebuilt ${tag}`);
			built = imageId();
		}
	}
	const seconds = (values: number[]) => `${(median(values) / 1000).toFixed(1)} s`;
	const times = (kind: (typeof CASES)[number]) => (median(samples[kind]) / median(samples.warm)).toFixed(1);
	return [
		{
			title: `hangar run ${PACKAGE} to the first tools/call (median of ${ROUNDS})`,
			columns: ['case', 'time'],
			rows: [
				['cold: first run, nothing cached (npm install from the registry)', seconds(samples.cold)],
				['warm: the image built before, no rebuild (Hangar, every run after the first)', seconds(samples.warm)],
				['rebuilt: tag removed, layer cache kept (ToolHive, every run)', seconds(samples.rebuilt)],
			],
			verdicts: [`a cold run takes ${times('cold')}× and a rebuilding run ${times('rebuilt')}× the time of a warm run, which built nothing (same image id)`],
		},
	];
}

function readOptional(path: string): string {
	try {
		return readFileSync(path, 'utf8');
	} catch {
		return '';
	}
}
