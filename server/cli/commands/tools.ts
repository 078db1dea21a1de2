/**
 * `hangar tools ls|diff|approve|policy`: a workload's pinned tool and prompt definitions, what
 * changed since they were approved, the approval, and the global pinning policy.
 */
import type { Command } from 'commander';
import { HangarError } from '../../../protocol/errors.js';
import { type PinnedDefinition, type WorkloadPinsResult } from '../../../protocol/protocol.workloads.js';
import { ToolPinning } from '../../../protocol/runConfig.js';
import { DEFAULT_TOOL_PINNING, PinningDefault } from '../../runspec/pins/policy.js';
import { addCommands, printJson, printTable, type Cli, type CommandFactory } from '../cli.js';
import { diffLines } from '../diff.js';

const COLOURS = { '-': '\u001b[31m', '+': '\u001b[32m', ' ': '', bold: '\u001b[1m', reset: '\u001b[0m' } as const;

function colours(): boolean {
	return Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
}

/** Tools first, then prompts, each with its kind. */
function itemsOf(result: WorkloadPinsResult): Array<PinnedDefinition & { kind: 'tool' | 'prompt' }> {
	return [...result.tools.map((item) => ({ ...item, kind: 'tool' as const })), ...result.prompts.map((item) => ({ ...item, kind: 'prompt' as const }))];
}

function stateOf(item: PinnedDefinition): string {
	return item.duplicate ? `${item.state}, listed twice` : item.state;
}

/** The text of one field for the diff: strings as they read, anything else as indented JSON. */
function fieldText(value: unknown): string {
	if (value === undefined) return '';
	return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

function printDiff(workload: string, item: PinnedDefinition & { kind: string }): void {
	const colour = colours();
	const paint = (code: string, text: string) => (colour && code ? `${code}${text}${COLOURS.reset}` : text);
	const out: string[] = [paint(COLOURS.bold, `${item.kind} ${item.name} of ${workload}: ${stateOf(item)}`)];
	if (item.pinned_fingerprint) out.push(`  pinned  ${item.pinned_fingerprint}`);
	out.push(`  ${item.state === 'removed' ? 'pinned ' : 'current'} ${item.fingerprint}`);
	for (const flag of item.flags) out.push(paint(COLOURS['-'], `  flag ${flag.rule} (${flag.severity === 'block' ? 'blocks at first sight' : 'for review'}): ${flag.detail}; ${flag.why}`));
	const before = item.pinned ?? {};
	const after = item.current ?? {};
	for (const field of [...new Set([...Object.keys(before), ...Object.keys(after)])]) {
		const [old, now] = [fieldText(before[field]), fieldText(after[field])];
		if (old === now) continue;
		out.push(`  ${field}:`);
		for (const line of diffLines(old, now)) {
			if (line.kind === ' ' || line.text !== '') out.push(paint(COLOURS[line.kind], `  ${line.kind} ${line.text}`));
		}
	}
	process.stdout.write(`${out.join('\n')}\n\n`);
}

function listPins(tools: Command, cli: Cli): Command {
	return tools
		.command('ls')
		.argument('<name>', 'workload')
		.description('List the tools and prompts of a workload with their pin state and flags')
		.option('--json', 'print JSON')
		.action(async (name: string, options: { json?: boolean }) => {
			const result = await cli.call('workloads/tools', { name });
			if (options.json) return printJson(result);
			printTable(
				itemsOf(result),
				{
					kind: (item) => item.kind,
					name: (item) => item.name,
					state: stateOf,
					fingerprint: (item) => item.fingerprint.slice(0, 'sha256:'.length + 12),
					flags: (item) => item.flags.map((flag) => flag.rule).join(', '),
				},
				`No tools of ${name} have been listed through Hangar yet (they are pinned the first time a client lists them).`,
			);
			process.stdout.write(`tool_pinning: ${result.tool_pinning}\n`);
		});
}

function diffPins(tools: Command, cli: Cli): Command {
	return tools
		.command('diff')
		.argument('<name>', 'workload')
		.argument('[tool]', 'only this tool or prompt')
		.description('Show what changed in the drifted tools and prompts of a workload: description and schema, pinned against current')
		.option('--json', 'print JSON')
		.action(async (name: string, tool: string | undefined, options: { json?: boolean }) => {
			const result = await cli.call('workloads/tools', { name });
			const items = itemsOf(result).filter((item) => (tool ? item.name === tool : item.state !== 'pinned'));
			if (tool && !items.length) throw HangarError.notFound(`workload ${name} has no tool or prompt named ${tool}`, 'tool_not_found');
			if (options.json) return printJson(items);
			if (!items.length) return void process.stdout.write(`Every tool and prompt of ${name} is as approved.\n`);
			for (const item of items) printDiff(name, item);
			if (items.some((item) => item.state !== 'pinned')) process.stdout.write(`Approve with: hangar tools approve ${name}${tool ? ` ${tool}` : ''}\n`);
		});
}

function approvePins(tools: Command, cli: Cli): Command {
	return tools
		.command('approve')
		.argument('<name>', 'workload')
		.argument('[tools...]', 'tools or prompts to approve (default: every drifted one)')
		.description('Re-pin drifted tools and prompts as the server lists them now; the proxy serves them again at once')
		.action(async (name: string, names: string[]) => {
			let selection: { tools?: string[]; prompts?: string[] } = {};
			if (names.length) {
				const current = await cli.call('workloads/tools', { name });
				const prompts = new Set(current.prompts.filter((item) => item.state !== 'pinned').map((item) => item.name));
				selection = { tools: names.filter((item) => !prompts.has(item)), prompts: names.filter((item) => prompts.has(item)) };
			}
			const approved = await cli.call('workloads/approveTools', { name, ...selection });
			const all = [...approved.tools, ...approved.prompts];
			process.stdout.write(all.length ? `Approved for ${name}: ${all.join(', ')}\n` : `Nothing of ${name} to approve.\n`);
		});
}

function pinningPolicy(tools: Command, cli: Cli): Command {
	return tools
		.command('policy')
		.argument('[policy]', 'block, warn or off')
		.description("Show or set the global tool pinning policy, for workloads without their own tool_pinning (proxies started afterwards)")
		.option('--unset', `back to the default, ${DEFAULT_TOOL_PINNING}`)
		.action(async (policy: string | undefined, options: { unset?: boolean }) => {
			const defaults = new PinningDefault(cli.environment.paths);
			if (options.unset || policy) {
				const parsed = ToolPinning.safeParse(policy ?? DEFAULT_TOOL_PINNING);
				if (!parsed.success) throw new HangarError(400, `invalid policy ${JSON.stringify(policy)}: expected block, warn or off`, 'invalid_params');
				await defaults.set(options.unset ? undefined : parsed.data);
			}
			process.stdout.write(`${await defaults.get()}\n`);
		});
}

function toolsCommand(program: Command, cli: Cli): Command {
	const tools = program.command('tools').description('Review and approve the pinned tool definitions of a workload (tool pinning)');
	addCommands(tools, cli, [listPins, diffPins, approvePins, pinningPolicy]);
	return tools;
}

/** The area's top-level command. */
export const toolCommands: readonly CommandFactory[] = [toolsCommand];
