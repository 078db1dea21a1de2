/**
 * Composite tools of an aggregate (ToolHive's composite tool workflows): their templates and the
 * checks of a definition, shared by the workloads service (a 400 at create, naming the step and
 * field) and the aggregate's proxy (which runs them, proxy/backends/aggregate/composite.ts).
 *
 * A template is text with `{{.params.NAME…}}`, `{{.steps.ID.output…}}` (and, inside a forEach
 * step, `{{.ITEMVAR…}}`) references: dotted paths, nothing else. A value that is one reference
 * alone takes the referenced JSON value as it is; references inside other text are written
 * into it (a string as itself, anything else as JSON). A value is never read back as JSON or as
 * a template, so what a step or a parameter holds cannot reach another step's arguments as
 * anything but data.
 */
import type { CompositeStep, CompositeTool } from '../../protocol/runConfig.js';

const REFERENCE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const PATH = /^\.[A-Za-z_][\w-]*(\.[\w-]+)*$/;
const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** The paths a template refers to (`['steps', 'fetch', 'output', 'text']`), or the problem with one. */
function referencesOf(template: string): { paths: string[][] } | { problem: string } {
	const paths: string[][] = [];
	for (const [, expression] of template.matchAll(REFERENCE)) {
		if (!PATH.test(expression!)) return { problem: `{{${expression}}} is not a reference: write {{.params.NAME}} or {{.steps.ID.output.FIELD}}` };
		paths.push(expression!.slice(1).split('.'));
	}
	return { paths };
}

/** The value of a dotted `path` in `scope`; undefined when it is not there (own properties only). */
function lookUp(scope: unknown, path: readonly string[]): unknown {
	let value = scope;
	for (const key of path) {
		if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
		value = (value as Record<string, unknown>)[key];
	}
	return value;
}

/** `template` in `scope`: one reference alone gives its value; references in text are written into it. */
export function expand(template: string, scope: Readonly<Record<string, unknown>>): unknown {
	const alone = /^\{\{\s*([^{}]*?)\s*\}\}$/.exec(template);
	if (alone && PATH.test(alone[1]!)) return lookUp(scope, alone[1]!.slice(1).split('.'));
	return template.replace(REFERENCE, (whole, expression: string) => {
		if (!PATH.test(expression)) return whole;
		const value = lookUp(scope, expression.slice(1).split('.'));
		return value === undefined ? '<no value>' : typeof value === 'string' ? value : JSON.stringify(value);
	});
}

/** Every string in `value` (arguments, at any depth) expanded in `scope`; other values as they are. */
export function expandAll(value: unknown, scope: Readonly<Record<string, unknown>>): unknown {
	if (typeof value === 'string') return expand(value, scope);
	if (Array.isArray(value)) return value.map((each) => expandAll(each, scope));
	if (typeof value === 'object' && value !== null) {
		const result: Record<string, unknown> = {};
		for (const [key, each] of Object.entries(value)) Object.defineProperty(result, key, { value: expandAll(each, scope), enumerable: true, writable: true, configurable: true });
		return result;
	}
	return value;
}

/** Whether a condition's value lets its step run, as Go templates judge it. */
export function isTrue(value: unknown): boolean {
	if (typeof value === 'string') return !['', 'false', '0', '<no value>', 'null'].includes(value.trim());
	return value !== undefined && value !== null && value !== false && value !== 0;
}

/** A Go duration (`500ms`, `1m30s`) in milliseconds, or undefined when it is not one. */
export function durationMs(text: string): number | undefined {
	if (!DURATION.test(text)) return undefined;
	let total = 0;
	for (const [, amount, , unit] of text.matchAll(/(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) total += Number(amount) * UNITS[unit!]!;
	return total;
}

/** A problem of a composite tool's definition, with the field it is in (`composite_tools[0].steps[1].dependsOn`). */
export interface CompositeProblem {
	readonly field: string;
	readonly message: string;
}

/** The problems of composite tool `tool` at `field`; `toolExists`, once the members are known, says whether `member.tool` is one. */
export function compositeProblems(tool: CompositeTool, field: string, toolExists?: (member: string, tool: string) => boolean): CompositeProblem[] {
	const problems: CompositeProblem[] = [];
	const say = (at: string, message: string) => problems.push({ field: at, message });
	if (!tool.steps.length) say(`${field}.steps`, 'needs at least one step');
	if (tool.timeout !== undefined && durationMs(tool.timeout) === undefined) say(`${field}.timeout`, `${JSON.stringify(tool.timeout)} is not a duration (500ms, 30s, 1m)`);
	const ids = new Map<string, number>();
	tool.steps.forEach((step, index) => {
		if (ids.has(step.id)) say(`${field}.steps[${index}].id`, `step ${step.id} is declared twice`);
		ids.set(step.id, index);
	});
	const parameters = tool.parameters;
	if (parameters !== undefined && parameters.type !== 'object') say(`${field}.parameters`, 'must be a JSON Schema of type object');
	tool.steps.forEach((step, index) => {
		const at = `${field}.steps[${index}]`;
		for (const [position, dependency] of (step.dependsOn ?? []).entries()) if (!ids.has(dependency)) say(`${at}.dependsOn[${position}]`, `step ${step.id} depends on ${dependency}, which is not a step of ${tool.name}`);
		checkStep(step, at, step.type ?? 'tool', say, toolExists);
		if (step.type === 'forEach' && step.step) checkStep({ ...step.step, id: step.id }, `${at}.step`, 'tool', say, toolExists);
	});
	if (problems.length) return problems;
	const cycle = cycleOf(tool.steps);
	if (cycle) return [{ field: `${field}.steps`, message: `the steps depend on each other in a cycle: ${cycle.join(' → ')}` }];
	const ancestors = ancestorsOf(tool.steps);
	tool.steps.forEach((step, index) => {
		const itemVar = step.type === 'forEach' ? (step.itemVar ?? 'item') : undefined;
		for (const [where, template] of templatesOf(step)) {
			const found = referencesOf(template);
			if ('problem' in found) {
				say(`${field}.steps[${index}].${where}`, found.problem);
				continue;
			}
			for (const path of found.paths) {
				const [root, id] = path;
				if (root === 'params' || root === itemVar) continue;
				if (root !== 'steps' || id === undefined) say(`${field}.steps[${index}].${where}`, `{{.${path.join('.')}}} refers to neither .params nor .steps`);
				else if (!ids.has(id)) say(`${field}.steps[${index}].${where}`, `{{.${path.join('.')}}} refers to step ${id}, which is not a step of ${tool.name}`);
				else if (!ancestors.get(step.id)!.has(id)) say(`${field}.steps[${index}].${where}`, `{{.${path.join('.')}}} refers to step ${id}, which step ${step.id} does not depend on (add it to dependsOn)`);
			}
		}
	});
	for (const [name, property] of Object.entries(tool.output?.properties ?? {})) {
		if (property.value === undefined) continue;
		const found = referencesOf(property.value);
		if ('problem' in found) say(`${field}.output.properties.${name}.value`, found.problem);
		else for (const path of found.paths) if (path[0] === 'steps' && !ids.has(path[1] ?? '')) say(`${field}.output.properties.${name}.value`, `{{.${path.join('.')}}} refers to step ${path[1]}, which is not a step of ${tool.name}`);
	}
	return problems;
}

type Say = (field: string, message: string) => void;

function checkStep(step: CompositeStep, at: string, type: string, say: Say, toolExists: ((member: string, tool: string) => boolean) | undefined): void {
	if (step.timeout !== undefined && durationMs(step.timeout) === undefined) say(`${at}.timeout`, `${JSON.stringify(step.timeout)} is not a duration (500ms, 30s, 1m)`);
	if (step.onError?.retryDelay !== undefined && durationMs(step.onError.retryDelay) === undefined) say(`${at}.onError.retryDelay`, `${JSON.stringify(step.onError.retryDelay)} is not a duration`);
	if (type === 'tool') {
		if (!step.tool) return say(`${at}.tool`, `step ${step.id} calls no tool: give it as member.tool`);
		const dot = step.tool.indexOf('.');
		if (dot <= 0 || dot === step.tool.length - 1) return say(`${at}.tool`, `${JSON.stringify(step.tool)} is not member.tool`);
		if (toolExists && !toolExists(step.tool.slice(0, dot), step.tool.slice(dot + 1))) say(`${at}.tool`, `${step.tool} is not a tool of the group's members`);
	} else if (type === 'elicitation') {
		if (!step.message) say(`${at}.message`, `elicitation step ${step.id} needs the message the user is asked`);
	} else if (type === 'forEach') {
		if (!step.collection) say(`${at}.collection`, `forEach step ${step.id} needs the template of its collection`);
		if (!step.step) say(`${at}.step`, `forEach step ${step.id} needs the tool step run for each item`);
	}
}

/** Each template of a step, with the field it is in. */
function templatesOf(step: CompositeStep): Array<[string, string]> {
	const templates: Array<[string, string]> = [];
	const walk = (value: unknown, where: string) => {
		if (typeof value === 'string') templates.push([where, value]);
		else if (Array.isArray(value)) value.forEach((each, index) => walk(each, `${where}[${index}]`));
		else if (typeof value === 'object' && value !== null) for (const [key, each] of Object.entries(value)) walk(each, `${where}.${key}`);
	};
	walk(step.arguments ?? {}, 'arguments');
	if (step.condition !== undefined) templates.push(['condition', step.condition]);
	if (step.collection !== undefined) templates.push(['collection', step.collection]);
	if (step.message !== undefined) templates.push(['message', step.message]);
	if (step.step) walk(step.step.arguments ?? {}, 'step.arguments');
	return templates;
}

/** A cycle of the steps' dependsOn, as the ids along it, if there is one. */
function cycleOf(steps: readonly CompositeStep[]): string[] | undefined {
	const byId = new Map(steps.map((step) => [step.id, step]));
	const state = new Map<string, 'visiting' | 'done'>();
	const trail: string[] = [];
	const visit = (id: string): string[] | undefined => {
		if (state.get(id) === 'done') return undefined;
		if (state.get(id) === 'visiting') return [...trail.slice(trail.indexOf(id)), id];
		state.set(id, 'visiting');
		trail.push(id);
		for (const dependency of byId.get(id)?.dependsOn ?? []) {
			const cycle = visit(dependency);
			if (cycle) return cycle;
		}
		trail.pop();
		state.set(id, 'done');
		return undefined;
	};
	for (const step of steps) {
		const cycle = visit(step.id);
		if (cycle) return cycle;
	}
	return undefined;
}

/** Each step's ancestors: the steps it depends on, directly or not (the steps have no cycle). */
function ancestorsOf(steps: readonly CompositeStep[]): Map<string, Set<string>> {
	const byId = new Map(steps.map((step) => [step.id, step]));
	const ancestors = new Map<string, Set<string>>();
	const of = (id: string): Set<string> => {
		let found = ancestors.get(id);
		if (found) return found;
		found = new Set();
		for (const dependency of byId.get(id)?.dependsOn ?? []) {
			found.add(dependency);
			for (const further of of(dependency)) found.add(further);
		}
		ancestors.set(id, found);
		return found;
	};
	for (const step of steps) of(step.id);
	return ancestors;
}
