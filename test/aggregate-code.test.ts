/**
 * Code mode on an aggregate (issue #49), end to end: an MCP SDK client runs scripts through
 * `run_code` of an aggregate (a spawned `hangar proxy`, as built) over two real MCP servers
 * (test/fixtures/workloads/code-members.mjs). Every call a script makes is a call of its own
 * through the aggregate's chain: audited one event each, authorized by its exposed name,
 * checked against the tool's input schema; a cancelled script ends, a runaway one ends at its
 * limit, and the proxy serves on. Composite tools run their steps the same way, and a bad
 * definition is a 400 naming the step and field.
 */
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateGroup } from '../protocol/protocol.groups.js';
import { CreateWorkload } from '../protocol/protocol.workloads.js';
import { connect, createRunning, removeAllWorkloads, startFixture, textOf, uniqueName, waitFor, type RemoteServer } from './fixtures/workloads/helpers.js';
import { auditFileOf, readAudit } from './fixtures/security/support.js';
import { OtlpReceiver, type OtlpSpan } from './fixtures/telemetry/receivers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { startServe, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';

const MEMBERS = fileURLToPath(new URL('./fixtures/workloads/code-members.mjs', import.meta.url));

let home: TestHome;
let serve: ServeProcess;
let fixture: RemoteServer;
let group: string;
let tracker: string;
let notes: string;
const clients: Client[] = [];

const create = (params: Record<string, unknown>) => createRunning(serve.url, params);

async function client(url: string): Promise<Client> {
	const connected = await connect(url, 'streamable-http');
	clients.push(connected);
	return connected;
}

/** A run_code call's result, as the client gets it. */
async function run(client: Client, code: string, options: Parameters<Client['callTool']>[2] = {}): Promise<{ text: string; structured: unknown; isError: boolean; raw: unknown }> {
	const result = await client.callTool({ name: 'run_code', arguments: { code } }, undefined, options);
	return { text: textOf(result), structured: result.structuredContent, isError: result.isError === true, raw: result };
}

async function policyFile(name: string, policies: string[]): Promise<string> {
	const file = join(home.path, name);
	await writeFile(file, JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies } }));
	return file;
}

beforeAll(async () => {
	home = await createTestHome();
	serve = await startServe(home.env);
	fixture = await startFixture(MEMBERS);
	group = uniqueName('code');
	expect((await callRest(serve.url, CreateGroup, { name: group })).status).toBe(201);
	[tracker, notes] = [uniqueName('tracker'), uniqueName('notes')];
	await Promise.all([
		create({ name: tracker, url: `${fixture.url}/tracker/mcp`, group, tool_pinning: 'off' }),
		create({ name: notes, url: `${fixture.url}/notes/mcp`, group, tool_pinning: 'off' }),
	]);
}, 120_000);

afterAll(async () => {
	await Promise.allSettled(clients.map((each) => each.close()));
	if (serve) await removeAllWorkloads(serve.url).catch(() => undefined);
	await serve?.stop();
	fixture?.stop();
	await home?.dispose();
}, 120_000);

describe('run_code on a code-mode aggregate', { timeout: 120_000 }, () => {
	let aggregate: { name: string; url: string };
	let model: Client;

	beforeAll(async () => {
		const authz = await policyFile('code-authz.json', [
			'permit(principal, action, resource);',
			`forbid(principal, action == Action::"call_tool", resource == Tool::"${notes}_clear_notes");`,
			`forbid(principal, action == Action::"call_tool", resource == Tool::"${notes}_add_note") when { resource has arg_text && resource.arg_text == "forbidden" };`,
		]);
		aggregate = await create({
			name: uniqueName('agg'),
			image: `group://${group}`,
			group,
			authz_config: authz,
			audit_config: { enabled: true },
			aggregation: { mode: 'code', code: { timeout_ms: 5_000 } },
		});
		model = await client(aggregate.url);
	}, 120_000);

	it('lists only run_code, whose description names each member and its tools', async () => {
		const { tools } = await model.listTools();
		expect(tools.map((tool) => tool.name)).toEqual(['run_code']);
		expect(tools[0]!.description).toContain(`"${tracker}": fail, get_issue, list_issues, odd_result, slow`);
		expect(tools[0]!.description).toContain(`"${notes}": add_note`);
	});

	it('runs a script over both members: what it logs and returns comes back, the raw results do not', async () => {
		const script = `
			const { issues } = await tools[${JSON.stringify(tracker)}].list_issues({ state: 'all' });
			console.log('read', issues.length, 'issues');
			const urgent = issues.filter((issue) => issue.state === 'open' && issue.labels.includes('urgent'));
			const added = await Promise.all(urgent.map((issue) => tools[${JSON.stringify(notes)}].add_note({ text: 'follow up #' + issue.id, tags: ['urgent'] })));
			return { urgent: urgent.map((issue) => issue.id), notes: added.length };`;
		const result = await run(model, script);
		expect(result.isError, result.text).toBe(false);
		expect(result.structured).toEqual({ urgent: [1, 13, 25], notes: 3 });
		expect(JSON.stringify(result.raw)).toContain('read 25 issues');
		expect(JSON.stringify(result.raw)).not.toContain('Steps to reproduce');
	});

	it('audits each call of a script as a call of its own, by its exposed name', async () => {
		await run(model, `await tools[${JSON.stringify(tracker)}].get_issue({ id: 2 }); await call_tool(${JSON.stringify(`${tracker}_get_issue`)}, { id: 3 }); return 'ok';`);
		const { events } = await readAudit(auditFileOf(home.path, aggregate.name), (all) => all.filter((event) => event.target.name === `${tracker}_get_issue`).length >= 2);
		expect(events.filter((event) => event.target.name === `${tracker}_get_issue`)).toHaveLength(2);
		expect(events.some((event) => event.target.name === 'run_code')).toBe(true);
	});

	it('a policy that forbids one tool hides it from scripts; one that forbids a call refuses it inside a script, which may catch it', async () => {
		expect((await run(model, `const notes = tools[${JSON.stringify(notes)}]; return ['clear_notes' in notes, Object.keys(notes).includes('clear_notes')];`)).text).toBe('[false,false]');
		expect((await run(model, `return await tools[${JSON.stringify(notes)}].clear_notes({});`)).text).toContain(`unknown tool "${notes}.clear_notes" (hidden by policy or filter, or not served`);
		const hidden = await run(model, `try { await call_tool(${JSON.stringify(`${notes}_clear_notes`)}, {}); return 'cleared'; } catch (error) { return 'refused: ' + error.message; }`);
		expect(hidden.text).toMatch(/^refused: unknown tool/);
		const result = await run(model, `try { await tools[${JSON.stringify(notes)}].add_note({ text: 'forbidden' }); return 'added'; } catch (error) { return 'refused: ' + error.message; }`);
		expect(result.text).toMatch(/^refused: .*Unauthorized/);
		expect((await run(model, `return (await tools[${JSON.stringify(notes)}].list_notes({})).notes.length > 0;`)).text).toBe('true');
	});

	it("checks arguments against the tool's input schema, naming the field", async () => {
		const result = await run(model, `await tools[${JSON.stringify(tracker)}].get_issue({ id: 'one' });`);
		expect(result.isError).toBe(true);
		expect(result.text).toContain(`${tracker}_get_issue: invalid arguments: field id: expected integer, got string`);
		expect(result.text).toContain('line 1');
	});

	it('finds tools and describes them as TypeScript declarations', async () => {
		const result = await run(model, `const found = await find_tools('add a note'); return { first: found[0].name, declaration: await describe(found[0].name) };`);
		expect(result.structured).toMatchObject({ first: `${notes}_add_note` });
		const { declaration } = result.structured as { declaration: string };
		expect(declaration).toContain('add_note(args: {');
		expect(declaration).toContain('text: string;');
		expect(declaration).toContain('tags?: string[];');
	});

	it('runs TypeScript with its type annotations stripped; its errors keep their line and column', async () => {
		const typed = `interface Issue { id: number; title: string }
const issue: Issue = await tools[${JSON.stringify(tracker)}].get_issue({ id: 5 } as const);
const pick = <T, K extends keyof T>(value: T, key: K): T[K] => value[key];
return { id: pick<Issue, 'id'>(issue, 'id')!, title: issue.title satisfies string };`;
		const result = await run(model, typed);
		expect(result.isError, result.text).toBe(false);
		expect(result.structured).toEqual({ id: 5, title: 'Issue 5: broken link' });
		// A type before the error on its line: the column is the script's own, not the stripped script's shifted one.
		const failing = 'const count: number = 1;\nconst none: { field: string } | null = null; return (none as any).field;';
		const column = failing.split('\n')[1]!.indexOf('.field') + 1;
		expect((await run(model, failing)).text).toBe(`TypeError: cannot read property 'field' of null (line 2, column ${column})`);
		expect((await run(model, 'const ok: number = 1;\n\tconst bad: string = ;')).text).toBe('SyntaxError: Expression expected (line 2, column 22)');
	});

	it('refuses TypeScript that stripping cannot erase, saying to write plain JavaScript', async () => {
		const result = await run(model, 'const a = 1;\n  enum Color { Red, Green }\nreturn Color.Red;');
		expect(result.isError).toBe(true);
		expect(result.text).toBe('SyntaxError: TypeScript enum is not supported: run_code strips type annotations only, so write this in plain JavaScript (line 2, column 3)');
		expect((await run(model, 'namespace N { export const x = 1; }\nreturn N.x;')).text).toMatch(/^SyntaxError: TypeScript namespace declaration is not supported: .*plain JavaScript \(line 1, column 1\)$/);
	});

	it('refuses a script calling run_code', async () => {
		const result = await run(model, `return await call_tool('run_code', { code: 'return 1' });`);
		expect(result.isError).toBe(true);
		expect(result.text).toContain('run_code cannot be called from a script');
	});

	it('a result shaped to break out is data: nothing polluted, nothing run', async () => {
		const result = await run(model, `const odd = await tools[${JSON.stringify(tracker)}].odd_result({}); return { polluted: ({}).polluted ?? null, escaped: globalThis.escaped ?? null, keys: Object.keys(odd).sort(), text: odd.text };`);
		expect(result.structured).toMatchObject({ polluted: null, escaped: null, text: '\u0000\u2028</script>' });
		expect((result.structured as { keys: string[] }).keys).toContain('constructor');
	});

	it('a runaway script ends at its time limit, and the proxy serves on', async () => {
		const runaway = await run(model, 'for (;;) {}');
		expect(runaway.isError).toBe(true);
		expect(runaway.text).toContain('time limit');
		expect((await run(model, 'return 6 * 7;')).text).toBe('42');
	});

	it("a client's cancellation ends the script and its call in flight; progress is sent when asked for", async () => {
		const controller = new AbortController();
		const progress: number[] = [];
		const cancelled = run(model, `await tools[${JSON.stringify(tracker)}].get_issue({ id: 1 }); await tools[${JSON.stringify(tracker)}].slow({ ms: 60000 });`, {
			signal: controller.signal,
			onprogress: (event) => {
				progress.push(event.progress);
				controller.abort();
			},
		});
		await expect(cancelled).rejects.toThrow(/abort/i);
		expect(progress).toEqual([1]);
		expect((await run(model, 'return "still here";')).text).toBe('still here');
	});

	it('16 scripts at once each get their own answer', async () => {
		const results = await Promise.all(Array.from({ length: 16 }, (_, index) => run(model, `globalThis.mine = ${index}; const issue = await tools[${JSON.stringify(tracker)}].get_issue({ id: ${index + 1} }); return { index: mine, id: issue.id };`)));
		expect(results.map((result) => result.structured)).toEqual(Array.from({ length: 16 }, (_, index) => ({ index, id: index + 1 })));
	});
});

describe('run_code beside other modes, and refused by policy', { timeout: 120_000 }, () => {
	it('code.enabled lists run_code beside the member tools; a policy forbidding run_code refuses it', async () => {
		const authz = await policyFile('no-code.json', ['permit(principal, action, resource);', 'forbid(principal, action == Action::"call_tool", resource == Tool::"run_code");']);
		const beside = await create({ name: uniqueName('beside'), image: `group://${group}`, group, aggregation: { code: { enabled: true } } });
		const refused = await create({ name: uniqueName('nocode'), image: `group://${group}`, group, authz_config: authz, aggregation: { mode: 'code' } });
		const names = (await (await client(beside.url)).listTools()).tools.map((tool) => tool.name);
		expect(names).toEqual(expect.arrayContaining(['run_code', `${tracker}_list_issues`, `${notes}_add_note`]));
		const besideClient = clients.at(-1)!;
		expect(textOf(await besideClient.callTool({ name: `${tracker}_get_issue`, arguments: { id: 4 } }))).toContain('"id":4');
		expect((await run(besideClient, `return (await tools[${JSON.stringify(tracker)}].get_issue({ id: 4 })).id;`)).text).toBe('4');
		await expect(run(await client(refused.url), 'return 1;')).rejects.toThrow(/Unauthorized/);
	});
});

describe('Cedar on tool annotations inside scripts, as on direct calls', { timeout: 120_000 }, () => {
	it('a policy forbidding destructive tools forbids them inside a script, which does not see them', async () => {
		const authz = await policyFile('no-destructive.json', ['permit(principal, action, resource);', 'forbid(principal, action == Action::"call_tool", resource) when { resource has destructiveHint && resource.destructiveHint };']);
		const aggregate = await create({ name: uniqueName('careful'), image: `group://${group}`, group, authz_config: authz, aggregation: { mode: 'code' } });
		const careful = await client(aggregate.url);
		const { tools } = await careful.listTools();
		expect(tools[0]!.description).toContain(`"${notes}": add_note, list_notes`);
		expect(tools[0]!.description).not.toContain('clear_notes');
		const count = `(await tools[${JSON.stringify(notes)}].list_notes({})).notes.length`;
		const before = (await run(careful, `await tools[${JSON.stringify(notes)}].add_note({ text: 'keep' }); return ${count};`)).text;
		expect(Number(before)).toBeGreaterThan(0);
		expect((await run(careful, `return await tools[${JSON.stringify(notes)}].clear_notes({});`)).isError).toBe(true);
		expect((await run(careful, `return await call_tool(${JSON.stringify(`${notes}_clear_notes`)}, {});`)).text).toContain(`unknown tool "${notes}_clear_notes"`);
		expect((await run(careful, `return ${count};`)).text).toBe(before);
	});

	it('a policy permitting only read-only tools permits them inside a script; the script finds and describes only those', async () => {
		const authz = await policyFile('read-only.json', [
			'permit(principal, action == Action::"call_tool", resource == Tool::"run_code");',
			'permit(principal, action == Action::"call_tool", resource) when { resource has readOnlyHint && resource.readOnlyHint };',
		]);
		const aggregate = await create({ name: uniqueName('reader'), image: `group://${group}`, group, authz_config: authz, aggregation: { mode: 'code' } });
		const reader = await client(aggregate.url);
		const { tools } = await reader.listTools();
		expect(tools.map((tool) => tool.name)).toEqual(['run_code']);
		expect(tools[0]!.description).toMatch(new RegExp(`"${tracker}": get_issue, list_issues, odd_result(;|\\.|$)`, 'm'));
		expect(tools[0]!.description).toMatch(new RegExp(`"${notes}": list_notes(;|\\.|$)`, 'm'));
		expect((await run(reader, `return (await tools[${JSON.stringify(tracker)}].get_issue({ id: 2 })).id;`)).text).toBe('2');
		const found = await run(reader, `return (await find_tools('add a note', 10)).map((tool) => tool.name);`);
		expect(found.isError, found.text).toBe(false);
		expect(found.text).not.toContain('add_note');
		expect((await run(reader, `return await describe(${JSON.stringify(`${notes}.add_note`)});`)).text).toMatch(/unknown tool/);
		expect((await run(reader, `return await tools[${JSON.stringify(notes)}].add_note({ text: 'no' });`)).isError).toBe(true);
	});
});

describe("a script sees the aggregate's tools as its tools/list would show them", { timeout: 120_000 }, () => {
	it("the aggregate's tool filter and overrides hide, rename and describe tools inside scripts as in a list of the same aggregate without code mode", async () => {
		const tools_override = { [`${tracker}_get_issue`]: { name: 'fetch_issue', description: 'Fetches one issue by its number.' } };
		const settings = { group, image: `group://${group}`, tools: ['run_code', 'fetch_issue', `${tracker}_list_issues`, `${notes}_list_notes`], tools_override };
		const listed = await create({ ...settings, name: uniqueName('listed'), aggregation: { mode: 'all' } });
		const coded = await create({ ...settings, name: uniqueName('filtered'), aggregation: { mode: 'code' } });
		const shown = (await (await client(listed.url)).listTools()).tools;
		expect(shown.map((tool) => tool.name).sort()).toEqual([`${notes}_list_notes`, `${tracker}_list_issues`, 'fetch_issue'].sort());
		const script = await client(coded.url);
		const [runCodeTool] = (await script.listTools()).tools;
		expect(runCodeTool!.description).toMatch(new RegExp(`"${notes}": list_notes(;|\\.|$)`, 'm'));
		expect(runCodeTool!.description).not.toContain('add_note');
		expect((await run(script, `return (await call_tool('fetch_issue', { id: 2 })).id;`)).text).toBe('2');
		expect((await run(script, `return (await tools[${JSON.stringify(tracker)}].get_issue({ id: 3 })).id;`)).text).toBe('3');
		expect((await run(script, `return await call_tool(${JSON.stringify(`${tracker}_get_issue`)}, { id: 2 });`)).text).toContain(`unknown tool "${tracker}_get_issue" (hidden by policy or filter, or not served)`);
		const described = (await run(script, `return await describe('fetch_issue');`)).text;
		expect(described).toContain(shown.find((tool) => tool.name === 'fetch_issue')!.description);
		const names = JSON.parse((await run(script, `return (await find_tools('issue note', 50)).map((tool) => tool.name);`)).text) as string[];
		expect(names).toContain('fetch_issue');
		for (const name of names) expect(shown.map((tool) => tool.name)).toContain(name);
		const hidden = await run(script, `return await tools[${JSON.stringify(notes)}].add_note({ text: 'hidden' });`);
		expect(hidden.isError).toBe(true);
		expect(hidden.text).toContain(`unknown tool "${notes}.add_note" (hidden by policy or filter, or not served`);
	});
});

describe("a script's calls are traced under the script's span", { timeout: 120_000 }, () => {
	let receiver: OtlpReceiver;
	beforeAll(async () => {
		receiver = await OtlpReceiver.start();
	});
	afterAll(async () => receiver?.stop());

	it('each inner tools/call span is a child of the run_code call', async () => {
		const aggregate = await create({
			name: uniqueName('traced'),
			image: `group://${group}`,
			group,
			telemetry_config: { endpoint: receiver.url, tracingEnabled: true, samplingRate: '1' },
			aggregation: { mode: 'code' },
		});
		const traced = await client(aggregate.url);
		expect((await run(traced, `await tools[${JSON.stringify(tracker)}].get_issue({ id: 1 }); return (await tools[${JSON.stringify(tracker)}].get_issue({ id: 2 })).id;`)).text).toBe('2');
		const inner = `tools/call ${tracker}_get_issue`;
		const { script, calls } = await waitFor(async () => {
			const script = receiver.spans.find((span) => span.name === 'tools/call run_code');
			const calls = script ? receiver.spans.filter((span) => span.name === inner && span.traceId === script.traceId) : [];
			return script && calls.length === 2 ? { script, calls } : undefined;
		}, 'the spans of the script and its calls', 60_000);
		// Each inner call's span hangs under the script's, directly or through the script's upstream span.
		const ancestors = (span: OtlpSpan): string[] => {
			const parent = receiver.spans.find((each) => each.spanId === span.parentSpanId);
			return parent ? [parent.spanId, ...ancestors(parent)] : [];
		};
		for (const call of calls) expect(ancestors(call)).toContain(script.spanId);
	});
});

describe("a script's calls meet the aggregate's rate limits", { timeout: 120_000 }, () => {
	it('a per-tool limit of 2 refuses the third call inside one script', async () => {
		const limited = await create({
			name: uniqueName('limited'),
			image: `group://${group}`,
			group,
			rate_limit_config: { tools: [{ name: `${tracker}_get_issue`, shared: { maxTokens: 2, refillPeriod: '1h' } }] },
			aggregation: { mode: 'code' },
		});
		const result = await run(await client(limited.url), `const outcomes = [];
for (const id of [1, 2, 3]) {
	try { outcomes.push((await tools[${JSON.stringify(tracker)}].get_issue({ id })).id); } catch (error) { outcomes.push(error.message); }
}
return outcomes;`);
		const outcomes = JSON.parse(result.text) as unknown[];
		expect(outcomes.slice(0, 2)).toEqual([1, 2]);
		expect(String(outcomes[2])).toMatch(/rate/i);
	});
});

describe('composite tools', { timeout: 120_000 }, () => {
	let aggregate: { name: string; url: string };

	const triage = () => ({
		name: 'triage',
		description: 'Notes an issue',
		parameters: { type: 'object', properties: { id: { type: 'integer' }, tag: { type: 'string' } }, required: ['id'] },
		steps: [
			{ id: 'first', tool: `${tracker}.get_issue`, arguments: { id: '{{.params.id}}' } },
			{ id: 'other', tool: `${tracker}.get_issue`, arguments: { id: 2 } },
			{ id: 'flaky', tool: `${tracker}.fail`, onError: { action: 'continue' }, defaultResults: { text: 'fallback' } },
			{ id: 'note', tool: `${notes}.add_note`, dependsOn: ['first', 'other'], arguments: { text: 'About {{.steps.first.output.title}} and {{.steps.other.output.id}}', tags: ['{{.params.tag}}'] } },
			{ id: 'never', tool: `${tracker}.get_issue`, condition: '{{.params.missing}}', arguments: { id: 3 }, defaultResults: { title: 'skipped' } },
		],
		output: {
			properties: {
				title: { type: 'string', value: '{{.steps.first.output.title}}' },
				count: { type: 'integer', value: '{{.steps.note.output.count}}' },
				tags: { type: 'array', value: '{{.steps.note.output.tags}}' },
				text: { type: 'string', value: '{{.steps.note.output.text}}' },
				fallback: { type: 'string', value: '{{.steps.flaky.output.text}}' },
				skipped: { type: 'string', value: '{{.steps.never.output.title}}' },
			},
		},
	});
	const readIssues = () => ({
		name: 'read_issues',
		steps: [
			{ id: 'open', tool: `${tracker}.list_issues`, arguments: { state: 'open' } },
			{ id: 'each', type: 'forEach', dependsOn: ['open'], collection: '{{.steps.open.output.issues}}', maxIterations: 3, step: { tool: `${tracker}.get_issue`, arguments: { id: '{{.item.id}}' } } },
		],
		output: { properties: { titles: { type: 'array', value: '{{.steps.each.output.results}}' } } },
	});
	const confirm = () => ({
		name: 'confirm_note',
		steps: [
			{ id: 'ask', type: 'elicitation', message: 'Which note?', schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
			{ id: 'write', tool: `${notes}.add_note`, dependsOn: ['ask'], arguments: { text: '{{.steps.ask.output.text}}' } },
		],
	});

	beforeAll(async () => {
		aggregate = await create({ name: uniqueName('composite'), image: `group://${group}`, group, aggregation: { composite_tools: [triage(), readIssues(), confirm()] } });
	}, 120_000);

	it('lists each composite tool with its parameters and annotations derived from its steps', async () => {
		const { tools } = await (await client(aggregate.url)).listTools();
		const listed = tools.find((tool) => tool.name === 'triage')!;
		expect(listed.inputSchema).toMatchObject({ type: 'object', required: ['id'] });
		expect(listed.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
		expect(tools.find((tool) => tool.name === 'read_issues')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
		expect(tools.map((tool) => tool.name)).toContain(`${tracker}_get_issue`);
	});

	it('runs its steps as a DAG, templates as values, a failed step continued past, a skipped one defaulted', async () => {
		const result = await (await client(aggregate.url)).callTool({ name: 'triage', arguments: { id: 7, tag: 'x", "evil": "{{.steps.other.output}}' } });
		expect(result.isError, textOf(result)).toBeFalsy();
		expect(result.structuredContent).toMatchObject({
			title: 'Issue 7: slow page',
			count: expect.any(Number),
			text: 'About Issue 7: slow page and 2',
			// The parameter reaches the argument as it is: neither JSON nor a template.
			tags: ['x", "evil": "{{.steps.other.output}}'],
			fallback: 'fallback',
			skipped: 'skipped',
		});
	});

	it('runs a forEach step over a collection, telling a client that asked of each step done', async () => {
		const progress: Array<{ progress: number; total?: number }> = [];
		const result = await (await client(aggregate.url)).callTool({ name: 'read_issues', arguments: {} }, undefined, { onprogress: ({ progress: done, total }) => void progress.push({ progress: done, total }) });
		expect(progress).toEqual([{ progress: 1, total: 2 }, { progress: 2, total: 2 }]);
		const titles = (result.structuredContent as { titles: Array<{ id: number }> }).titles;
		expect(titles.map((issue) => issue.id)).toEqual([1, 4, 7]);
	});

	it('asks the client in an elicitation step; a client that cannot be asked gets a clear error', async () => {
		const unable = await (await client(aggregate.url)).callTool({ name: 'confirm_note', arguments: {} });
		expect(unable.isError).toBe(true);
		expect(textOf(unable)).toContain('declared no elicitation capability');
		const able = await connect(aggregate.url, 'streamable-http', { elicitation: {} });
		clients.push(able);
		able.setRequestHandler(ElicitRequestSchema, async (request) => {
			expect(request.params.message).toBe('Which note?');
			return { action: 'accept', content: { text: 'asked and answered' } };
		});
		const answered = await able.callTool({ name: 'confirm_note', arguments: {} });
		expect(answered.structuredContent).toMatchObject({ text: 'asked and answered', tags: [] });
	});

	it.each([
		[{ steps: [{ id: 'a', tool: 'x.y', dependsOn: ['b'] }, { id: 'b', tool: 'x.y', dependsOn: ['a'] }] }, 'aggregation.composite_tools[0].steps', 'cycle: a → b → a'],
		[{ steps: [{ id: 'a', tool: 'x.y', dependsOn: ['ghost'] }] }, 'aggregation.composite_tools[0].steps[0].dependsOn[0]', 'ghost'],
		[{ steps: [{ id: 'a', tool: 'x.y', arguments: { v: '{{.steps.ghost.output}}' } }] }, 'aggregation.composite_tools[0].steps[0].arguments.v', 'ghost'],
		[{ steps: [{ id: 'a', tool: 'x.y' }, { id: 'b', tool: 'x.y', arguments: { v: '{{.steps.a.output}}' } }] }, 'aggregation.composite_tools[0].steps[1].arguments.v', 'does not depend on'],
		[{ steps: [{ id: 'a', tool: 'nodot' }] }, 'aggregation.composite_tools[0].steps[0].tool', 'member.tool'],
		[{ steps: [{ id: 'a', tool: 'x.y', timeout: 'soon' }] }, 'aggregation.composite_tools[0].steps[0].timeout', 'duration'],
		[{ steps: [] }, 'aggregation.composite_tools[0].steps', 'at least one step'],
	])('refuses a bad definition with a 400 naming the step and field (%#)', async (definition, field, words) => {
		const created = await callRest(serve.url, CreateWorkload, { name: uniqueName('bad'), image: `group://${group}`, group, aggregation: { composite_tools: [{ name: 'bad', ...definition }] } });
		expect(created.status).toBe(400);
		expect(JSON.stringify(created.body)).toContain(`invalid ${field}:`);
		expect(JSON.stringify(created.body)).toContain(words);
	});

	it("refuses a step calling a tool the group's members do not list", async () => {
		const created = await callRest(serve.url, CreateWorkload, { name: uniqueName('bad'), image: `group://${group}`, group, aggregation: { composite_tools: [{ name: 'bad', steps: [{ id: 'a', tool: `${tracker}.no_such_tool` }] }] } });
		expect(created.status).toBe(400);
		expect(JSON.stringify(created.body)).toContain(`invalid aggregation.composite_tools[0].steps[0].tool: ${tracker}.no_such_tool is not a tool`);
	});
});
