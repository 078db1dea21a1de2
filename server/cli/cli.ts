/**
 * What every command shares: in-process calls through the same dispatcher the daemon and
 * the REST server use, Ctrl-C as cancellation, and output as tables or `--json`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { HangarError } from '../../protocol/errors.js';
import type { Method, Operations } from '../../protocol/methods.js';
import type { ParamsOf, ResultOf } from '../../protocol/operation.js';
import { visibleText } from '../../protocol/visibleText.js';
import { contextFor, type Progress } from '../context.js';
import type { Dispatcher } from '../dispatch.js';
import { createEnvironment, type Environment } from '../environment.js';
import { writeControl } from './terminal.js';

export class Cli {
	private dispatcher: Dispatcher | undefined;
	private environmentValue: Environment | undefined;

	get environment(): Environment {
		return (this.environmentValue ??= createEnvironment('cli'));
	}

	async services(): Promise<Dispatcher> {
		if (!this.dispatcher) {
			const { createDispatcher } = await import('../services.js');
			this.dispatcher = createDispatcher(this.environment);
		}
		return this.dispatcher;
	}

	/** Calls one operation in-process, named by its method; Ctrl-C cancels it. */
	async call<M extends Method>(method: M, params: ParamsOf<Operations[M]>): Promise<ResultOf<Operations[M]>> {
		const dispatcher = await this.services();
		const controller = new AbortController();
		const onInterrupt = () => controller.abort();
		process.once('SIGINT', onInterrupt);
		try {
			return (await dispatcher.call(method, params, contextFor(controller.signal, stderrProgress))) as ResultOf<Operations[M]>;
		} finally {
			process.off('SIGINT', onInterrupt);
		}
	}
}

/**
 * Progress on stderr, so stdout stays clean for `--json`: on a terminal one line per stage,
 * updated in place as its percentage moves; otherwise one line per stage. A stage that comes
 * back once another has begun (git interleaves the server's stages with its own) is not shown
 * again.
 */
export function streamProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
	/** The stage of the last line written; on a terminal that line is still open. */
	let stage: string | undefined;
	let open = false;
	/** The stages of this piece of work that another has followed. */
	const passed = new Set<string>();
	const closeLine = () => {
		if (open) stream.write('\n');
		open = false;
		stage = undefined;
		passed.clear();
	};
	return {
		begin: (title, message) => {
			closeLine();
			stream.write(`${title}${message ? `: ${message}` : ''}\n`);
		},
		report: (message, percentage) => {
			if (!message && percentage === undefined) return;
			const next = message ?? stage ?? '';
			if (next !== stage && passed.has(next)) return;
			const text = `  ${message ?? ''}${percentage !== undefined ? ` (${percentage}%)` : ''}`;
			if (stream.isTTY) {
				if (open && next === stage) {
					writeControl(stream, '\r\x1b[K');
					stream.write(text);
				}
				else {
					if (open) stream.write('\n');
					stream.write(text);
				}
				open = true;
			} else if (next !== stage) {
				stream.write(`${text}\n`);
			}
			if (stage !== undefined && next !== stage) passed.add(stage);
			stage = next;
		},
		end: (message) => {
			closeLine();
			if (message) stream.write(`${message}\n`);
		},
	};
}

const stderrProgress = streamProgress();

/**
 * One command: adds itself, with its options and action, under `parent` (the program, or its
 * area's command such as `group`). Each area lists its commands in `--help` order, as the
 * operation table lists the rows the doors serve.
 */
export type CommandFactory = (parent: Command, cli: Cli) => Command;

/** Adds `commands` under `parent`, in order. */
export function addCommands(parent: Command, cli: Cli, commands: readonly CommandFactory[]): void {
	for (const add of commands) add(parent, cli);
}

/** Commander's accumulator for a repeatable option. */
export const collect = (value: string, previous: string[] = []) => [...previous, value];

/** A watch or follow mode: `tick` now, then again `intervalMs` after each one ends, until Ctrl-C. */
export async function repeatUntilInterrupted(intervalMs: number, tick: () => Promise<void>): Promise<void> {
	const interrupted = new AbortController();
	const interrupt = () => interrupted.abort();
	process.once('SIGINT', interrupt);
	try {
		while (!interrupted.signal.aborted) {
			await tick();
			await sleep(intervalMs, undefined, { signal: interrupted.signal }).catch(() => undefined);
		}
	} finally {
		process.off('SIGINT', interrupt);
	}
}

export function printJson(value: unknown): void {
	process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A plain aligned table: a header row, then one row per item. */
export function printTable<T>(items: readonly T[], columns: Readonly<Record<string, (item: T) => unknown>>, empty: string): void {
	if (items.length === 0) {
		process.stdout.write(`${empty}\n`);
		return;
	}
	const headers = Object.keys(columns);
	const rows = items.map((item) => headers.map((header) => cell(columns[header]!(item))));
	const widths = headers.map((header, index) => Math.max(header.length, ...rows.map((row) => row[index]!.length)));
	const line = (cells: string[]) =>
		cells
			.map((value, index) => (index === cells.length - 1 ? value : value.padEnd(widths[index]!)))
			.join('  ')
			.trimEnd();
	process.stdout.write(`${[line(headers.map((header) => header.toUpperCase())), ...rows.map(line)].join('\n')}\n`);
}

function cell(value: unknown): string {
	if (value === undefined || value === null) return '-';
	// One line per row: a server's text with a line break in it must not start a row of its own.
	if (Array.isArray(value)) return value.length ? visibleText(value.join(','), true) : '-';
	return visibleText(String(value), true);
}

/** The one-line message and exit code of a failed command. */
export function describeFailure(error: unknown): { message: string; exitCode: number } {
	if (error instanceof HangarError) return { message: `${error.message}${nextStepOf(error)}`, exitCode: error.status === 400 ? 2 : 1 };
	return { message: (error as Error)?.message ?? String(error), exitCode: 1 };
}

/**
 * What to do next after an error whose message (shared with the API, ToolHive's wording) does
 * not say: the command that creates, lists or avoids what was missing or taken.
 */
function nextStepOf(error: HangarError): string {
	if (/hangar [a-z]/.test(error.message)) return ''; // says it already
	switch (error.code) {
		case 'group_not_found': {
			const name = /group '(.*)' not found/.exec(error.message)?.[1];
			return name === undefined ? '' : `; create it with hangar group create ${name}`;
		}
		case 'workload_exists':
			return '; give this one another name with --name';
		case 'workload_not_found':
			return ' (hangar ls --all lists them)';
		case 'secret_not_found':
			return ' (hangar secret ls lists them)';
		default:
			return '';
	}
}
