/**
 * `hangar top` (alias `hangar stats`): each running workload's calls per second, latency
 * percentiles and errors, as its proxy counts them (telemetry on or off), refreshed until
 * Ctrl-C, or printed once with `--once`.
 */
import type { Command } from 'commander';
import { HangarError } from '../../../protocol/errors.js';
import type { WorkloadStats } from '../../../protocol/protocol.workloads.js';
import { MAX_STATS_WINDOW_SECONDS } from '../../../protocol/statsWindow.js';
import { printJson, printTable, repeatUntilInterrupted, type Cli } from '../cli.js';
import { writeControl } from '../terminal.js';
import { secondsUpTo, wholeNumberFrom } from '../values.js';

const CLEAR_SCREEN = '\u001b[H\u001b[2J';
const MAX_INTERVAL_SECONDS = 3_600;

interface TopOptions {
	once?: boolean;
	stream: boolean;
	json?: boolean;
	interval: number;
	window: number;
	group?: string;
}

/** The stats of every running workload (one that stops meanwhile, or whose proxy does not answer now, is left out). */
async function statsOfRunning(cli: Cli, options: TopOptions): Promise<WorkloadStats[]> {
	const { workloads } = await cli.call('workloads/list', { group: options.group });
	const running = workloads.filter((workload) => workload.status === 'running');
	const stats = await Promise.all(
		running.map((workload) =>
			cli.call('workloads/stats', { name: workload.name, window: options.window }).catch((error: unknown) => {
				if (error instanceof HangarError && (error.status === 409 || error.status === 503)) return undefined;
				throw error;
			}),
		),
	);
	return stats.filter((item): item is WorkloadStats => item !== undefined);
}

const milliseconds = (value: number | undefined) => (value === undefined ? undefined : value >= 1000 ? `${(value / 1000).toFixed(1)}s` : `${Math.round(value)}ms`);

function lastErrorText(error: NonNullable<WorkloadStats['last_error']>): string {
	const what = error.tool ? `${error.tool}` : error.method;
	return `${error.at.slice(11, 19)} ${what}: ${error.message}`;
}

function printStats(stats: readonly WorkloadStats[]): void {
	printTable(
		stats,
		{
			name: (item) => item.name,
			'requests/s': (item) => item.calls_per_second.toFixed(item.calls_per_second >= 10 ? 0 : 2),
			p50: (item) => milliseconds(item.p50_ms),
			p99: (item) => milliseconds(item.p99_ms),
			errors: (item) => item.errors,
			requests: (item) => item.total_calls,
			'tool calls': (item) => item.total_tool_calls,
			'failed tool calls': (item) => item.total_tool_errors,
			'last error': (item) => item.last_error && lastErrorText(item.last_error).slice(0, 80),
		},
		'No running workloads.',
	);
}

export function top(program: Command, cli: Cli): Command {
	return program
		.command('top')
		.alias('stats')
		.description('Watch calls/s, p50/p99 latency and errors of each running workload (Ctrl-C to stop)')
		.option('--once', 'print once and exit (for scripts)')
		.option('--no-stream', 'the same as --once (docker stats\' name)')
		.option('--json', 'print JSON: one array with --once, else one array per line (NDJSON)')
		.option('-i, --interval <seconds>', 'seconds between refreshes', secondsUpTo(MAX_INTERVAL_SECONDS), 2)
		.option('-w, --window <seconds>', `seconds of recent calls counted (1 to ${MAX_STATS_WINDOW_SECONDS})`, wholeNumberFrom(1, MAX_STATS_WINDOW_SECONDS), 10)
		.option('-g, --group <group>', 'only the workloads of this group')
		.addHelpText('after', '\nThe proxy of each workload counts its calls whether or not telemetry is on; the same numbers are\nserved as workloads/stats (GET /api/v1beta/workloads/{name}/stats).\n')
		.action(async (options: TopOptions) => {
			const once = options.once || !options.stream;
			if (once) {
				const stats = await statsOfRunning(cli, options);
				return options.json ? printJson(stats) : printStats(stats);
			}
			const live = process.stdout.isTTY && !options.json;
			await repeatUntilInterrupted(options.interval * 1000, async () => {
				const stats = await statsOfRunning(cli, options);
				if (options.json) process.stdout.write(`${JSON.stringify(stats)}\n`);
				else {
					if (live) {
						writeControl(process.stdout, CLEAR_SCREEN);
						process.stdout.write(`hangar top: every ${options.interval}s, last ${options.window}s counted, Ctrl-C to stop\n\n`);
					}
					printStats(stats);
					if (!live) process.stdout.write('\n');
				}
			});
		});
}
