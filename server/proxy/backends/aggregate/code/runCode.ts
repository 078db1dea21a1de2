/**
 * `run_code`: the tool of an aggregate's code mode. The model writes a script (an async
 * function body, JavaScript; TypeScript's type annotations are stripped) that calls the aggregate's tools as async functions,
 * `await tools.<member>.<tool>({...})` or `await call_tool(name, {...})`, finds them with
 * `find_tools(query)` and reads their TypeScript declaration with `describe(name)`; what it
 * logs and returns is the tool's result, so the members' raw results never reach the model
 * unless the script passes them on.
 *
 * Every call of a script is a real call (ScriptCalls.call: back through the proxy's chain):
 * its arguments are checked against the tool's input schema first, the calls are counted
 * (`max_tool_calls`, then the script ends) and at most `max_calls_in_flight` run at once (the
 * others wait their turn). A script cannot call `run_code`.
 */
import type { Exposed } from '../../../../runspec/aggregationNames.js';
import type { JsonRpcResponse } from '../../../core/jsonrpc.js';
import type { CancelSignal } from '../cancellation.js';
import type { Tool, ToolsSeen } from '../toolView.js';
import { argumentProblem } from './argumentCheck.js';
import { declarationOf } from './declarations.js';
import { toolsPrelude, type Catalog } from './sandbox/globals.js';
import { ScriptLimitError, type ScriptOutcome } from './sandbox/limits.js';
import type { SandboxPool } from './sandbox/pool.js';

export const RUN_CODE = 'run_code';

/** How many tool names the description lists before it says how many more there are. */
const LISTED_NAMES = 60;

/** What a script's calls reach: the tools the client may call, their search, and the chain. */
export interface ScriptCalls {
	readonly view: ToolsSeen;
	find(query: string, limit: number | undefined): Promise<Exposed<Tool>[]>;
	/** Calls the tool of exposed name `name` as its own `tools/call` through the proxy's chain. */
	call(name: string, args: Record<string, unknown>): Promise<JsonRpcResponse>;
	/** One more of the script's calls finished (for the client's progress). */
	progressed?(finished: number): void;
}

/** The definition of `run_code`, naming the members and their tools so the model knows what to call. */
export function runCodeTool(view: ToolsSeen): Record<string, unknown> {
	const byMember = new Map<string, string[]>();
	for (const tool of view.exposed) byMember.set(tool.member, [...(byMember.get(tool.member) ?? []), tool.original]);
	let listed = 0;
	const members = [...byMember].map(([member, names]) => {
		const shown = names.slice(0, Math.max(0, LISTED_NAMES - listed));
		listed += shown.length;
		const more = names.length - shown.length;
		return `${JSON.stringify(member)}: ${shown.join(', ')}${more ? ` (and ${more} more)` : ''}`;
	});
	return {
		name: RUN_CODE,
		description: [
			'Runs JavaScript (an async function body; TypeScript type annotations are stripped) in a sandbox that can call this server\'s tools; returns what it logs (console.log) and returns.',
			'Call a tool: `const result = await tools["<member>"].<tool>({ ...args })` (or `await call_tool("<exposed name>", args)`); a result is the tool\'s structured content, else its text. A failed call throws.',
			'`await find_tools("what to do")` lists matching tools; `await describe("<member>.<tool>")` gives its TypeScript declaration. Filter and combine results in the script and return only what is needed.',
			`Tools by member: ${members.join('; ') || 'none'}.`,
		].join('\n'),
		inputSchema: {
			type: 'object',
			properties: { code: { type: 'string', description: 'The script: the body of an async function; `return` its answer' } },
			required: ['code'],
		},
	};
}

/** Each view's prelude, made once: a view is the same while its lists are. */
const preludes = new WeakMap<ToolsSeen, string>();

/** What the globals a script sees are built from: the view's catalog of tools. */
function preludeOf(view: ToolsSeen): string {
	let prelude = preludes.get(view);
	if (!prelude) preludes.set(view, (prelude = writePrelude(view)));
	return prelude;
}

/** The catalog of the view's tools (member → tool → exposed name), from which the sandbox builds the globals (sandbox/globals.ts). */
function writePrelude(view: ToolsSeen): string {
	const catalog: Catalog = {};
	for (const tool of view.exposed) (catalog[tool.member] ??= {})[tool.original] = tool.name;
	return toolsPrelude(catalog);
}

/** Runs one `run_code` call; answers its result (an error result when the script failed). */
export async function runCode(pool: SandboxPool, code: unknown, calls: ScriptCalls, signal: CancelSignal): Promise<Record<string, unknown>> {
	if (typeof code !== 'string' || !code.trim()) return errorResult(`${RUN_CODE} needs code: the body of an async function`, []);
	const outcome = await pool.run({ code, prelude: preludeOf(calls.view), host: hostOf(calls, pool.limits), signal });
	return resultOf(outcome);
}

function hostOf(calls: ScriptCalls, limits: SandboxPool['limits']): (name: string, args: unknown) => Promise<unknown> {
	let made = 0;
	let finished = 0;
	let inFlight = 0;
	const waiting: Array<() => void> = [];
	/** A place among the calls in flight: taken at once when one is free (no turn of the loop), else a wait for one. */
	const turn = (): Promise<void> | undefined => {
		if (inFlight < limits.maxCallsInFlight) {
			inFlight++;
			return undefined;
		}
		return new Promise<void>((resolve) => waiting.push(resolve));
	};
	/** A call finished: its place goes to the next call waiting, if any. */
	const done = () => {
		const next = waiting.shift();
		if (next) next();
		else inFlight--;
		calls.progressed?.(++finished);
	};
	return async (fn, args) => {
		const given = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
		switch (fn) {
			case 'call': {
				const name = typeof given.name === 'string' ? given.name : '';
				if (name === RUN_CODE) throw new Error(`${RUN_CODE} cannot be called from a script`);
				const tool = calls.view.get(name);
				if (!tool) throw new Error(unknownTool(calls.view, name));
				const toolArgs = given.arguments;
				if (typeof toolArgs !== 'object' || toolArgs === null || Array.isArray(toolArgs)) throw new Error(`${name}: its arguments must be an object`);
				const problem = argumentProblem(tool.item.inputSchema, toolArgs);
				if (problem) throw new Error(`${name}: invalid arguments: ${problem.replace(/^the document/, 'the arguments')}`);
				if (++made > limits.maxToolCalls) throw new ScriptLimitError(`tool call limit: the script made more than ${limits.maxToolCalls} tool calls`);
				const waited = turn();
				if (waited) await waited;
				try {
					return valueOf(name, await calls.call(name, toolArgs as Record<string, unknown>));
				} finally {
					done();
				}
			}
			case 'find': {
				if (typeof given.query !== 'string' || !given.query.trim()) throw new Error('find_tools needs a query: the task, in a few words');
				const limit = typeof given.limit === 'number' && Number.isInteger(given.limit) && given.limit > 0 ? Math.min(given.limit, 50) : undefined;
				return (await calls.find(given.query, limit)).map((tool) => ({ name: tool.name, member: tool.member, tool: tool.original, call: `tools[${JSON.stringify(tool.member)}].${tool.original}`, description: tool.item.description ?? '' }));
			}
			case 'describe': {
				const name = typeof given.name === 'string' ? given.name : '';
				const tool = calls.view.get(name) ?? calls.view.exposed.find((each) => `${each.member}.${each.original}` === name);
				if (!tool) throw new Error(unknownTool(calls.view, name));
				return declarationOf(tool.member, tool.original, tool.item);
			}
			default:
				throw new Error(`unknown host function ${fn}`);
		}
	};
}

function unknownTool(view: ToolsSeen, name: string): string {
	const closest = name ? view.closest(name) : [];
	return `unknown tool ${JSON.stringify(name)} (hidden by policy or filter, or not served)${closest.length ? `; the closest: ${closest.join(', ')}` : ''} (find_tools finds tools by what they do)`;
}

/** What a script gets of a call's answer: the structured content, else the text; a failure throws. */
function valueOf(name: string, response: JsonRpcResponse): unknown {
	if (response.error) throw new Error(`${name}: ${response.error.message}`);
	const result = (response.result ?? {}) as { content?: unknown; structuredContent?: unknown; isError?: unknown };
	const content = Array.isArray(result.content) ? (result.content as Array<{ type?: unknown; text?: unknown }>) : [];
	const text = content.filter((part) => part?.type === 'text' && typeof part.text === 'string').map((part) => part.text as string).join('\n');
	if (result.isError === true) throw new Error(`${name} failed: ${text || 'no message'}`);
	if (result.structuredContent !== undefined) return result.structuredContent;
	return content.length && content.every((part) => part?.type === 'text') ? text : content;
}

function resultOf(outcome: ScriptOutcome): Record<string, unknown> {
	if (!outcome.ok) return errorResult(outcome.error, outcome.logs);
	const { json, logs } = outcome;
	// The engine's JSON is the text answer as it is: only a string (its own text) and an object (the structured content) are parsed.
	const value = json !== undefined && (json[0] === '"' || json[0] === '{') ? (JSON.parse(json) as unknown) : undefined;
	const returned = json === undefined ? [] : [{ type: 'text', text: typeof value === 'string' ? value : json }];
	const logged = logs.length ? [{ type: 'text', text: `logs:\n${logs.join('\n')}` }] : [];
	const structured = json?.[0] === '{' ? { structuredContent: value } : {};
	return { content: [...returned, ...logged], ...structured };
}

function errorResult(error: string, logs: readonly string[]): Record<string, unknown> {
	return { content: [{ type: 'text', text: `${error}${logs.length ? `\nlogs:\n${logs.join('\n')}` : ''}` }], isError: true };
}
