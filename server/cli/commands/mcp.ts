/**
 * `hangar mcp tools|call`: talk to a running workload as an MCP client would, through its
 * proxy, with the official MCP SDK client (loaded only when these commands run).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Command } from 'commander';
import { HangarError } from '../../../protocol/errors.js';
import { ListWorkloads, type WorkloadSummary } from '../../../protocol/protocol.workloads.js';
import { VERSION } from '../../version.js';
import { addCommands, collect, printJson, printTable, type Cli } from '../cli.js';

interface Tool {
	readonly name: string;
	readonly description?: string;
}

/** The running workload `name`, or a 404/409 that says what to do. */
async function runningWorkload(cli: Cli, name: string): Promise<WorkloadSummary> {
	const { workloads } = await cli.call(ListWorkloads, { all: true });
	const workload = workloads.find((candidate) => candidate.name === name);
	if (!workload) throw HangarError.notFound(`workload ${name} not found (hangar ls --all lists them)`, 'workload_not_found');
	if (workload.status !== 'running' || !workload.url) {
		throw HangarError.conflict(`workload ${name} is ${workload.status}${workload.status_context ? ` (${workload.status_context})` : ''}; start it with hangar restart ${name}`);
	}
	return workload;
}

/** Connects an MCP client to the workload's proxy, runs `work`, and disconnects. */
export async function withMcpClient<T>(workload: WorkloadSummary, work: (client: Client) => Promise<T>): Promise<T> {
	const [{ Client }, { StreamableHTTPClientTransport }, { SSEClientTransport }] = await Promise.all([
		import('@modelcontextprotocol/sdk/client/index.js'),
		import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
		import('@modelcontextprotocol/sdk/client/sse.js'),
	]);
	const url = new URL(workload.url!.split('#')[0]!);
	const client = new Client({ name: 'hangar', version: VERSION });
	try {
		await client.connect(url.pathname.endsWith('/sse') ? new SSEClientTransport(url) : new StreamableHTTPClientTransport(url));
	} catch (error) {
		throw new HangarError(502, `cannot talk MCP to workload ${workload.name} at ${url}: ${(error as Error).message}`);
	}
	try {
		return await work(client);
	} finally {
		await client.close().catch(() => undefined);
	}
}

/** Every tool the workload shows, across pages. */
export async function listTools(client: Client): Promise<Tool[]> {
	const tools: Tool[] = [];
	let cursor: string | undefined;
	do {
		const page = await client.listTools(cursor ? { cursor } : {});
		tools.push(...page.tools);
		cursor = page.nextCursor;
	} while (cursor);
	return tools;
}

/** `k=v` pairs as tool arguments; a value that parses as JSON (number, boolean, object…) is taken as such. */
export function toolArguments(pairs: readonly string[]): Record<string, unknown> {
	const args: Record<string, unknown> = Object.create(null);
	for (const pair of pairs) {
		const at = pair.indexOf('=');
		if (at <= 0) throw HangarError.badRequest(`invalid --arg ${JSON.stringify(pair)}: expected KEY=VALUE`);
		const value = pair.slice(at + 1);
		let parsed: unknown = value;
		try {
			parsed = JSON.parse(value);
		} catch {
			// a plain string
		}
		args[pair.slice(0, at)] = parsed;
	}
	return { ...args };
}

function listWorkloadTools(mcp: Command, cli: Cli): Command {
	return mcp
		.command('tools')
		.description('List the tools a workload offers (after its --tools filter and overrides)')
		.argument('<name>', 'workload')
		.option('--json', 'print JSON')
		.action(async (name: string, options: { json?: boolean }) => {
			const tools = await withMcpClient(await runningWorkload(cli, name), listTools);
			if (options.json) return printJson(tools);
			printTable(tools, { name: (tool) => tool.name, description: (tool) => tool.description?.split('\n')[0] }, `Workload ${name} offers no tools.`);
		});
}

function callTool(mcp: Command, cli: Cli): Command {
	return mcp
		.command('call')
		.description('Call a tool of a workload and print its result; exit 1 when the tool reports an error')
		.argument('<name>', 'workload')
		.argument('<tool>', 'tool name (hangar mcp tools NAME lists them)')
		.option('--arg <key=value>', 'tool argument; JSON values (42, true, {"a":1}) are passed as such (repeatable)', collect, [])
		.option('--json', 'print the whole result as JSON')
		.action(async (name: string, tool: string, options: { arg: string[]; json?: boolean }) => {
			const args = toolArguments(options.arg);
			const result = await withMcpClient(await runningWorkload(cli, name), (client) => client.callTool({ name: tool, arguments: args }));
			if (options.json) printJson(result);
			else {
				for (const item of (result.content ?? []) as Array<{ type: string; text?: string }>) {
					process.stdout.write(item.type === 'text' ? `${item.text ?? ''}\n` : `${JSON.stringify(item)}\n`);
				}
			}
			if (result.isError) process.exitCode = 1;
		});
}

export function mcp(program: Command, cli: Cli): Command {
	const mcp = program.command('mcp').description('Talk to a running workload as an MCP client (through its proxy)');
	addCommands(mcp, cli, [listWorkloadTools, callTool]);
	return mcp;
}
