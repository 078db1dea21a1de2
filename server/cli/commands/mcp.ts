/**
 * `hangar mcp tools|call|prompts|prompt|resources|read`: talk to a running workload as an MCP client would, through its
 * proxy, with the official MCP SDK client (loaded only when these commands run).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Command } from 'commander';
import { HangarError } from '../../../protocol/errors.js';
import { type WorkloadSummary } from '../../../protocol/protocol.workloads.js';
import { VERSION } from '../../version.js';
import { addCommands, collect, printJson, printTable, type Cli } from '../cli.js';

interface Tool {
	readonly name: string;
	readonly description?: string;
}

/** The running workload `name`, or a 404/409 that says what to do. */
async function runningWorkload(cli: Cli, name: string): Promise<WorkloadSummary> {
	const { workloads } = await cli.call('workloads/list', { all: true });
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

/** Every item of a paginated list, across pages. */
async function allPages<T>(list: (params: { cursor?: string }) => Promise<{ nextCursor?: string } & Record<string, unknown>>, key: string): Promise<T[]> {
	const items: T[] = [];
	let cursor: string | undefined;
	do {
		const page = await list(cursor ? { cursor } : {});
		items.push(...(page[key] as T[]));
		cursor = page.nextCursor;
	} while (cursor);
	return items;
}

/** Every tool the workload shows, across pages. */
export function listTools(client: Client): Promise<Tool[]> {
	return allPages((params) => client.listTools(params), 'tools');
}

/** `k=v` pairs as tool arguments; a value that parses as JSON (number, boolean, object…) is taken as such. */
export function toolArguments(pairs: readonly string[]): Record<string, unknown> {
	return Object.fromEntries(
		Object.entries(stringArguments(pairs)).map(([key, value]) => {
			try {
				return [key, JSON.parse(value)];
			} catch {
				return [key, value]; // a plain string
			}
		}),
	);
}

/** `k=v` pairs as string arguments (a prompt's). */
function stringArguments(pairs: readonly string[]): Record<string, string> {
	const args: Record<string, string> = Object.create(null);
	for (const pair of pairs) {
		const at = pair.indexOf('=');
		if (at <= 0) throw HangarError.badRequest(`invalid --arg ${JSON.stringify(pair)}: expected KEY=VALUE`);
		args[pair.slice(0, at)] = pair.slice(at + 1);
	}
	return { ...args };
}

/** A piece of MCP content (a tool result's, a prompt message's, a resource's contents). */
interface Content {
	readonly type?: string;
	readonly text?: string;
	readonly data?: string;
	readonly blob?: string;
	readonly mimeType?: string;
	readonly uri?: string;
	readonly resource?: Content;
}

/** Bytes as a person reads them: 512 B, 1.2 KB, 3.4 MB. */
function byteSize(bytes: number): string {
	if (bytes < 1024) return `${bytes} B`;
	if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
	return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The decoded size of base64 data. */
function base64Bytes(data: string): number {
	return Math.floor((data.length * 3) / 4) - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);
}

/** One piece of content as a line: text as it is, binary data summarised unless `raw` (then as JSON). */
function contentText(item: Content, raw = false): string {
	if (item.text !== undefined && (item.type === 'text' || item.type === undefined)) return item.text;
	if (item.type === 'resource' && item.resource) return contentText(item.resource, raw);
	const data = item.data ?? item.blob;
	if (raw || data === undefined) return JSON.stringify(item);
	return `[${[item.uri, item.mimeType ?? item.type ?? 'binary', byteSize(base64Bytes(data))].filter(Boolean).join(', ')}]`;
}

function printContents(items: readonly Content[], raw: boolean | undefined): void {
	for (const item of items) process.stdout.write(`${contentText(item, raw)}\n`);
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
		.option('--raw', 'print images, audio and other binary content whole (as JSON) instead of summarised')
		.action(async (name: string, tool: string, options: { arg: string[]; json?: boolean; raw?: boolean }) => {
			const args = toolArguments(options.arg);
			const result = await withMcpClient(await runningWorkload(cli, name), (client) => client.callTool({ name: tool, arguments: args }));
			if (options.json) printJson(result);
			else printContents((result.content ?? []) as Content[], options.raw);
			if (result.isError) process.exitCode = 1;
		});
}

function listPrompts(mcp: Command, cli: Cli): Command {
	return mcp
		.command('prompts')
		.description('List the prompts a workload offers')
		.argument('<name>', 'workload')
		.option('--json', 'print JSON')
		.action(async (name: string, options: { json?: boolean }) => {
			const prompts = await withMcpClient(await runningWorkload(cli, name), (client) =>
				allPages<{ name: string; description?: string; arguments?: Array<{ name: string; required?: boolean }> }>((params) => client.listPrompts(params), 'prompts'),
			);
			if (options.json) return printJson(prompts);
			printTable(
				prompts,
				{
					name: (prompt) => prompt.name,
					arguments: (prompt) => prompt.arguments?.map((argument) => `${argument.name}${argument.required ? '' : '?'}`),
					description: (prompt) => prompt.description?.split('\n')[0],
				},
				`Workload ${name} offers no prompts.`,
			);
		});
}

function getPrompt(mcp: Command, cli: Cli): Command {
	return mcp
		.command('prompt')
		.description('Get a prompt of a workload and print its messages')
		.argument('<name>', 'workload')
		.argument('<prompt>', 'prompt name (hangar mcp prompts NAME lists them)')
		.option('--arg <key=value>', 'prompt argument, a string (repeatable)', collect, [])
		.option('--json', 'print the whole result as JSON')
		.option('--raw', 'print binary content whole (as JSON) instead of summarised')
		.action(async (name: string, prompt: string, options: { arg: string[]; json?: boolean; raw?: boolean }) => {
			const args = stringArguments(options.arg);
			const result = await withMcpClient(await runningWorkload(cli, name), (client) => client.getPrompt({ name: prompt, arguments: args }));
			if (options.json) return printJson(result);
			for (const message of result.messages) process.stdout.write(`${message.role}: ${contentText(message.content as Content, options.raw)}\n`);
		});
}

function listResources(mcp: Command, cli: Cli): Command {
	return mcp
		.command('resources')
		.description('List the resources a workload offers')
		.argument('<name>', 'workload')
		.option('--json', 'print JSON')
		.action(async (name: string, options: { json?: boolean }) => {
			const resources = await withMcpClient(await runningWorkload(cli, name), (client) =>
				allPages<{ uri: string; name: string; mimeType?: string }>((params) => client.listResources(params), 'resources'),
			);
			if (options.json) return printJson(resources);
			printTable(resources, { uri: (resource) => resource.uri, name: (resource) => resource.name, type: (resource) => resource.mimeType }, `Workload ${name} offers no resources.`);
		});
}

function readResource(mcp: Command, cli: Cli): Command {
	return mcp
		.command('read')
		.description('Read a resource of a workload and print its contents')
		.argument('<name>', 'workload')
		.argument('<uri>', 'resource URI (hangar mcp resources NAME lists them)')
		.option('--json', 'print the whole result as JSON')
		.option('--raw', 'print binary contents whole (as JSON) instead of summarised')
		.action(async (name: string, uri: string, options: { json?: boolean; raw?: boolean }) => {
			const result = await withMcpClient(await runningWorkload(cli, name), (client) => client.readResource({ uri }));
			if (options.json) return printJson(result);
			printContents(result.contents as Content[], options.raw);
		});
}

export function mcp(program: Command, cli: Cli): Command {
	const mcp = program.command('mcp').description('Talk to a running workload as an MCP client (through its proxy)');
	addCommands(mcp, cli, [listWorkloadTools, callTool, listPrompts, getPrompt, listResources, readResource]);
	return mcp;
}
