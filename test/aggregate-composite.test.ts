/**
 * Composite tools' templates and checks (server/runspec/composite.ts), in process: a value is
 * substituted as a value, never spliced into JSON or read as a template again, and each bad
 * definition is named by its field. The end-to-end runs are in aggregate-code.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { CompositeTool } from '../protocol/runConfig.js';
import { compositeProblems, durationMs, expand, expandAll, isTrue } from '../server/runspec/composite.js';

const scope = {
	params: { id: 7, text: 'x", "admin": true, "y": "', template: '{{.params.secret}}', secret: 'hidden' },
	steps: { fetch: { output: { text: 'fetched', items: [1, 2], nested: { deep: { ok: true } } } } },
};

describe('templates', () => {
	it('a reference alone is its value, of any type', () => {
		expect(expand('{{.params.id}}', scope)).toBe(7);
		expect(expand('{{ .steps.fetch.output.items }}', scope)).toEqual([1, 2]);
		expect(expand('{{.steps.fetch.output.nested.deep.ok}}', scope)).toBe(true);
		expect(expand('{{.steps.fetch.output.missing}}', scope)).toBeUndefined();
	});

	it('references inside text are written into it', () => {
		expect(expand('issue {{.params.id}}: {{.steps.fetch.output.text}} {{.steps.fetch.output.items}}', scope)).toBe('issue 7: fetched [1,2]');
		expect(expand('{{.params.missing}}!', scope)).toBe('<no value>!');
	});

	it('a value cannot inject into the arguments: no JSON splicing, no second expansion', () => {
		const args = expandAll({ title: '{{.params.text}}', note: 'say {{.params.template}}', list: ['{{.params.text}}'] }, scope);
		expect(args).toEqual({ title: 'x", "admin": true, "y": "', note: 'say {{.params.secret}}', list: ['x", "admin": true, "y": "'] });
		expect(Object.keys(args as object)).toEqual(['title', 'note', 'list']);
	});

	it('reads only own properties: no prototype walk', () => {
		expect(expand('{{.params.constructor}}', scope)).toBeUndefined();
		expect(expand('{{.params.__proto__}}', scope)).toBeUndefined();
		const polluting = expandAll(JSON.parse('{"__proto__": {"polluted": "{{.params.id}}"}}'), scope) as Record<string, unknown>;
		expect(Object.getPrototypeOf(polluting)).toBe(Object.prototype);
		expect(({} as Record<string, unknown>).polluted).toBeUndefined();
	});

	it('conditions and durations read as Go does', () => {
		expect([true, 'true', 'yes', 1].map(isTrue)).toEqual([true, true, true, true]);
		expect([false, 'false', '', '0', '<no value>', null, undefined, 0].map(isTrue)).toEqual(Array(8).fill(false));
		expect(durationMs('1m30s')).toBe(90_000);
		expect(durationMs('250ms')).toBe(250);
		expect(durationMs('soon')).toBeUndefined();
	});
});

describe('a definition is checked, each problem named by its field', () => {
	const tool = (steps: CompositeTool['steps'], extra: Partial<CompositeTool> = {}): CompositeTool => ({ name: 'flow', steps, ...extra });
	const fieldsOf = (definition: CompositeTool, known?: (member: string, tool: string) => boolean) => compositeProblems(definition, 'composite_tools[0]', known).map((problem) => `${problem.field}: ${problem.message}`);

	it('a whole definition has none', () => {
		expect(fieldsOf(tool([{ id: 'a', tool: 'm.t', arguments: { x: '{{.params.x}}' } }, { id: 'b', tool: 'm.t', dependsOn: ['a'], arguments: { y: '{{.steps.a.output.text}}' } }]))).toEqual([]);
	});

	it('finds cycles, unknown steps, unreachable references, bad tools and durations', () => {
		expect(fieldsOf(tool([{ id: 'a', tool: 'm.t', dependsOn: ['c'] }, { id: 'b', tool: 'm.t', dependsOn: ['a'] }, { id: 'c', tool: 'm.t', dependsOn: ['b'] }]))).toEqual(['composite_tools[0].steps: the steps depend on each other in a cycle: a → c → b → a']);
		expect(fieldsOf(tool([{ id: 'a', tool: 'm.t', dependsOn: ['nope'] }]))[0]).toMatch(/^composite_tools\[0\]\.steps\[0\]\.dependsOn\[0\]: /);
		expect(fieldsOf(tool([{ id: 'a', tool: 'm.t' }, { id: 'b', tool: 'm.t', condition: '{{.steps.a.output.ok}}' }]))[0]).toMatch(/^composite_tools\[0\]\.steps\[1\]\.condition: .*does not depend on/);
		expect(fieldsOf(tool([{ id: 'a', tool: 'm.t', arguments: { x: '{{ printf "%s" .params.x }}' } }]))[0]).toMatch(/^composite_tools\[0\]\.steps\[0\]\.arguments\.x: .* is not a reference/);
		expect(fieldsOf(tool([{ id: 'a', tool: 'm.gone' }]), (member, name) => name !== 'gone')).toEqual(['composite_tools[0].steps[0].tool: m.gone is not a tool of the group\'s members']);
		expect(fieldsOf(tool([{ id: 'a', tool: 'm.t', onError: { action: 'retry', retryDelay: 'later' } }]))[0]).toMatch(/^composite_tools\[0\]\.steps\[0\]\.onError\.retryDelay: /);
		expect(fieldsOf(tool([{ id: 'a', type: 'elicitation' }]))[0]).toMatch(/^composite_tools\[0\]\.steps\[0\]\.message: /);
		expect(fieldsOf(tool([{ id: 'a', tool: 'm.t' }, { id: 'a', tool: 'm.t' }]))[0]).toMatch(/^composite_tools\[0\]\.steps\[1\]\.id: step a is declared twice/);
	});
});
