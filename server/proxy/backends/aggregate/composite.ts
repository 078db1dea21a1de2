/**
 * Composite tools of an aggregate (`aggregation.composite_tools`, ToolHive's workflows): tools
 * of the aggregate's own, each a set of steps run as a DAG (a step starts once the steps it
 * depends on are done, independent ones at once). A tool step is a member tool call, made like
 * a script's (back through the proxy's chain); an elicitation step asks the client; a forEach
 * step runs a tool step per item of a collection. Templates and their checks are
 * runspec/composite.ts's; a definition was checked at create, and is checked again here
 * against the tools the members list now.
 */
import type { CompositeStep, CompositeTool } from '../../../../protocol/runConfig.js';
import { durationMs, expand, expandAll, isTrue } from '../../../runspec/composite.js';
import type { JsonRpcResponse } from '../../core/jsonrpc.js';
import type { CancelSignal } from './cancellation.js';
import type { ToolView } from './toolView.js';

/** What a composite tool's steps reach: the tools the client sees, the chain, and the client. */
export interface CompositeCalls {
	readonly view: ToolView;
	/** Calls the tool of exposed name `name` as its own `tools/call` through the proxy's chain. */
	call(name: string, args: Record<string, unknown>): Promise<JsonRpcResponse>;
	/** Asks the client (MCP elicitation); rejects when the client cannot be asked. */
	elicit(message: string, schema: Record<string, unknown>): Promise<{ action: string; content?: Record<string, unknown> }>;
	/** One more of the `total` steps is done, or skipped (for the client's progress). */
	progressed?(finished: number, total: number): void;
}

const DEFAULT_RETRIES = 3;
const DEFAULT_ITERATIONS = 100;
const DEFAULT_PARALLEL = 10;

interface Annotations {
	readOnlyHint?: boolean;
	destructiveHint?: boolean;
	idempotentHint?: boolean;
	openWorldHint?: boolean;
	title?: string;
}

/** A composite tool's definition: its parameters as input schema, its annotations derived from its steps' tools. */
export function compositeDefinition(tool: CompositeTool, view: ToolView): Record<string, unknown> {
	return {
		name: tool.name,
		description: tool.description ?? `Runs ${tool.steps.length} steps: ${tool.steps.map((step) => step.tool ?? step.type ?? step.id).join(', ')}`,
		inputSchema: tool.parameters ?? { type: 'object' },
		annotations: annotationsOf(tool, view),
	};
}

/**
 * Read-only only if every tool step is, destructive if any is (or is not known), open-world if
 * any is; the declared annotations merge over these but never make the tool look safer.
 */
function annotationsOf(tool: CompositeTool, view: ToolView): Annotations {
	const steps = tool.steps.flatMap((step) => (step.type === 'forEach' ? [step.step?.tool] : step.type === 'elicitation' ? [] : [step.tool]));
	const derived: Annotations = {};
	if (steps.length) {
		const hints = steps.map((name) => (toolOf(view, name ?? '')?.item.annotations ?? undefined) as Annotations | undefined);
		derived.readOnlyHint = hints.every((hint) => hint?.readOnlyHint === true);
		derived.destructiveHint = !derived.readOnlyHint && hints.some((hint) => hint?.readOnlyHint !== true && hint?.destructiveHint !== false);
		derived.openWorldHint = hints.some((hint) => hint?.openWorldHint !== false);
	}
	const declared = tool.annotations ?? {};
	return {
		...declared,
		...derived,
		// Declared hints may only make the tool look less safe than its steps.
		...(declared.readOnlyHint === false ? { readOnlyHint: false } : {}),
		...(declared.destructiveHint === true ? { destructiveHint: true } : {}),
		...(declared.openWorldHint === true ? { openWorldHint: true } : {}),
		...(declared.idempotentHint !== undefined && derived.readOnlyHint !== true ? { idempotentHint: declared.idempotentHint } : {}),
	};
}

/** The exposed tool of `member.tool`, if the client sees it. */
function toolOf(view: ToolView, name: string) {
	const dot = name.indexOf('.');
	return view.exposed.find((tool) => tool.member === name.slice(0, dot) && tool.original === name.slice(dot + 1));
}

/** A step's failure, naming the step. */
class StepFailure extends Error {}

interface StepState {
	status: 'completed' | 'skipped' | 'failed';
	output: unknown;
}

/** Runs composite tool `tool` with `args`; answers its result, or an error result naming the step that failed. */
export async function runComposite(tool: CompositeTool, args: Record<string, unknown>, calls: CompositeCalls, signal: CancelSignal): Promise<Record<string, unknown>> {
	const steps: Record<string, StepState> = {};
	const scope = { params: args, steps };
	let skipRemaining = false;
	let finished = 0;
	const done = (id: string, state: StepState) => {
		steps[id] = state;
		calls.progressed?.(++finished, tool.steps.length);
	};
	const started = new Map<string, Promise<void>>();
	const byId = new Map(tool.steps.map((step) => [step.id, step]));
	const start = (step: CompositeStep): Promise<void> => {
		let running = started.get(step.id);
		if (!running) {
			running = (async () => {
				await Promise.all((step.dependsOn ?? []).map((id) => start(byId.get(id)!)));
				if (signal.aborted) throw new StepFailure('the call was cancelled');
				if (skipRemaining || (step.condition !== undefined && !isTrue(expand(step.condition, scope)))) return done(step.id, { status: 'skipped', output: step.defaultResults ?? {} });
				const outcome = await runStep(step, scope, calls);
				if (outcome === 'skip_remaining') {
					skipRemaining = true;
					done(step.id, { status: 'skipped', output: step.defaultResults ?? {} });
				} else done(step.id, outcome);
			})();
			started.set(step.id, running);
		}
		return running;
	};
	const timeoutMs = tool.timeout === undefined ? undefined : durationMs(tool.timeout);
	try {
		await withTimeout(Promise.all(tool.steps.map(start)), timeoutMs, `${tool.name} ran past its timeout of ${tool.timeout}`);
	} catch (error) {
		return { content: [{ type: 'text', text: (error as Error).message }], isError: true };
	}
	const output = tool.output ? mapOutput(tool.output, scope) : steps[tool.steps.at(-1)!.id]?.output;
	const structured = typeof output === 'object' && output !== null && !Array.isArray(output) ? { structuredContent: output } : {};
	return { content: [{ type: 'text', text: typeof output === 'string' ? output : JSON.stringify(output ?? null) }], ...structured };
}

async function runStep(step: CompositeStep, scope: { params: unknown; steps: Record<string, StepState> }, calls: CompositeCalls): Promise<StepState | 'skip_remaining'> {
	if (step.type === 'elicitation') {
		const answer = await calls.elicit(String(expand(step.message ?? '', scope)), step.schema ?? { type: 'object', properties: {} }).catch((error: Error) => {
			throw new StepFailure(`step ${step.id}: ${error.message}`);
		});
		if (answer.action === 'accept') return { status: 'completed', output: answer.content ?? {} };
		const action = (answer.action === 'decline' ? step.onDecline?.action : step.onCancel?.action) ?? 'abort';
		if (action === 'abort') throw new StepFailure(`step ${step.id}: the user chose ${answer.action}`);
		if (action === 'skip_remaining') return 'skip_remaining';
		return { status: 'skipped', output: step.defaultResults ?? {} };
	}
	if (step.type === 'forEach') {
		const collection = expand(step.collection ?? '', scope);
		if (!Array.isArray(collection)) throw new StepFailure(`step ${step.id}: its collection is not an array`);
		const items = collection.slice(0, step.maxIterations ?? DEFAULT_ITERATIONS);
		const itemVar = step.itemVar ?? 'item';
		const results: unknown[] = new Array(items.length);
		let next = 0;
		const worker = async () => {
			while (next < items.length) {
				const index = next++;
				const state = await callStep({ ...step.step!, id: `${step.id}[${index}]` }, { ...scope, [itemVar]: items[index] }, calls);
				results[index] = state.output;
			}
		};
		await Promise.all(Array.from({ length: Math.min(step.maxParallel ?? DEFAULT_PARALLEL, items.length) }, worker));
		return { status: 'completed', output: { results } };
	}
	return callStep(step, scope, calls);
}

/** A tool step: its call, retried or continued past as its onError says. */
async function callStep(step: Omit<CompositeStep, 'type'>, scope: Readonly<Record<string, unknown>>, calls: CompositeCalls): Promise<StepState> {
	const action = step.onError?.action ?? 'abort';
	const attempts = action === 'retry' ? 1 + (step.onError?.retryCount ?? DEFAULT_RETRIES) : 1;
	const delay = step.onError?.retryDelay ? (durationMs(step.onError.retryDelay) ?? 0) : 0;
	let failure: Error | undefined;
	for (let attempt = 1; attempt <= attempts; attempt++) {
		if (attempt > 1 && delay) await new Promise((resolve) => setTimeout(resolve, delay));
		try {
			const timeoutMs = step.timeout === undefined ? undefined : durationMs(step.timeout);
			return { status: 'completed', output: await withTimeout(callTool(step, scope, calls), timeoutMs, `step ${step.id} ran past its timeout of ${step.timeout}`) };
		} catch (error) {
			failure = error as Error;
		}
	}
	if (action === 'continue') return { status: 'failed', output: step.defaultResults ?? {} };
	throw new StepFailure(failure!.message);
}

async function callTool(step: Omit<CompositeStep, 'type'>, scope: Readonly<Record<string, unknown>>, calls: CompositeCalls): Promise<unknown> {
	const tool = toolOf(calls.view, step.tool ?? '');
	if (!tool) throw new StepFailure(`step ${step.id}: ${step.tool} is not a tool this aggregate shows`);
	const args = expandAll(step.arguments ?? {}, scope) as Record<string, unknown>;
	const response = await calls.call(tool.name, args);
	if (response.error) throw new StepFailure(`step ${step.id} (${step.tool}): ${response.error.message}`);
	return outputOf(step, response.result ?? {});
}

/** A step's output: the result's text as `text`, and its structured content's fields (which win); a failed result throws. */
function outputOf(step: Omit<CompositeStep, 'type'>, result: Record<string, unknown>): unknown {
	const content = Array.isArray(result.content) ? (result.content as Array<{ type?: unknown; text?: unknown }>) : [];
	const text = content.filter((part) => part?.type === 'text' && typeof part.text === 'string').map((part) => part.text as string).join('\n');
	if (result.isError === true) throw new StepFailure(`step ${step.id} (${step.tool}) failed: ${text || 'no message'}`);
	const structured = result.structuredContent;
	return typeof structured === 'object' && structured !== null && !Array.isArray(structured) ? { text, ...(structured as Record<string, unknown>) } : { text };
}

type OutputProperty = NonNullable<CompositeTool['output']>['properties'][string];

/** The output mapping: each property's template expanded and made its declared type, or its default. */
function mapOutput(output: NonNullable<CompositeTool['output']>, scope: Readonly<Record<string, unknown>>): Record<string, unknown> {
	const result: Record<string, unknown> = {};
	for (const [name, property] of Object.entries(output.properties)) {
		const value = valueOf(property, scope);
		if (value !== undefined) Object.defineProperty(result, name, { value, enumerable: true, writable: true, configurable: true });
	}
	return result;
}

function valueOf(property: OutputProperty, scope: Readonly<Record<string, unknown>>): unknown {
	if (property.value === undefined) {
		if (property.type !== 'object' || !property.properties) return property.default;
		return mapOutput({ properties: property.properties as Record<string, OutputProperty> }, scope);
	}
	const value = coerce(expand(property.value, scope), property.type);
	return value === undefined ? property.default : value;
}

/** `value` as `type`, when it can be read so (a string of digits as a number…); else undefined. */
function coerce(value: unknown, type: OutputProperty['type']): unknown {
	if (value === undefined || value === '<no value>') return undefined;
	switch (type) {
		case 'string':
			return typeof value === 'string' ? value : JSON.stringify(value);
		case 'number':
		case 'integer': {
			const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() ? Number(value) : NaN;
			return Number.isFinite(number) && (type === 'number' || Number.isInteger(number)) ? number : undefined;
		}
		case 'boolean':
			return typeof value === 'boolean' ? value : value === 'true' ? true : value === 'false' ? false : undefined;
		case 'array':
			return Array.isArray(value) ? value : undefined;
		case 'object':
			return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
	}
}

function withTimeout<T>(work: Promise<T>, timeoutMs: number | undefined, message: string): Promise<T> {
	if (timeoutMs === undefined) return work;
	let timer: NodeJS.Timeout | undefined;
	return Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new StepFailure(message)), timeoutMs)))]).finally(() => clearTimeout(timer));
}
