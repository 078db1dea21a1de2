/**
 * Code mode on an aggregate (issue #49), end to end: an MCP SDK client runs scripts through
 * `run_code` of an aggregate (a spawned `hangar proxy`, as built) over two real MCP servers
 * (test/fixtures/workloads/code-members.mjs). Every call a script makes is a call of its own
 * through the aggregate's chain: audited one event each, authorized by its exposed name,
 * checked against the tool's input schema; a cancelled script ends, a runaway one ends at its
 * limit, and the proxy serves on.
 */
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateGroup } from '../protocol/protocol.groups.js';
import { CreateWorkload, ListWorkloads } from '../protocol/protocol.workloads.js';
import { connect, removeAllWorkloads, startFixture, textOf, uniqueName, waitFor, type RemoteServer } from './fixtures/workloads/helpers.js';
import { auditFileOf, readAudit } from './fixtures/security/support.js';
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

async function create(params: Record<string, unknown>): Promise<{ name: string; url: string }> {
	const created = await callRest(serve.url, CreateWorkload, params);
	expect(created.status, JSON.stringify(created.body)).toBe(201);
	const listed = await waitFor(async () => {
		const { workloads } = (await callRest(serve.url, ListWorkloads, { group: params.group })).body as { workloads: Array<{ name: string; url: string; status: string }> };
		return workloads.find((workload) => workload.name === params.name && workload.status === 'running');
	}, `workload ${String(params.name)} running`);
	return { name: listed.name, url: listed.url.split('#')[0]! };
}

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
		const authz = await policyFile('code-authz.json', ['permit(principal, action, resource);', `forbid(principal, action == Action::"call_tool", resource == Tool::"${notes}_clear_notes");`]);
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

	it('a policy that forbids one tool refuses it inside a script, which may catch it', async () => {
		const result = await run(model, `try { await tools[${JSON.stringify(notes)}].clear_notes({}); return 'cleared'; } catch (error) { return 'refused: ' + error.message; }`);
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
