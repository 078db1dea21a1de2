/**
 * Guardrails through real proxies: `hangar serve` runs remote workloads in front of a real MCP
 * server (the SDK's, answering in event streams) that leaks secrets in every place a guardrail
 * must look, and a real SDK client calls them. Secrets in arguments are blocked before the
 * server sees them, secrets in results, errors, prompts and resources are redacted, the user's
 * own Hangar secret is caught base64'd and split across lines, binary parts are skipped and
 * said so, the audit log, the proxy log and `/metrics` name the rule and never the value, and
 * a workload without guardrails passes the same leaks untouched. Personal data is redacted (or
 * audited) by kind; the server's own sampling and elicitation requests, log messages and progress
 * are guarded on their way to the client, and a blocked request is answered to the server with the
 * error naming the rule. The settings are validated
 * at the door (400 naming the field) and shown by `workloads/get`; an aggregate guards its
 * members' answers too.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateGroup } from '../protocol/protocol.groups.js';
import { CreateSecret, SetupSecrets } from '../protocol/protocol.secrets.js';
import { CreateWorkload, GetWorkload } from '../protocol/protocol.workloads.js';
import { auditFileOf, createWorkload, deleteAllWorkloads, openSession, postMcp, readAudit, type AuditEvent, type Workload } from './fixtures/security/support.js';
import { connect, startFixture, textOf, uniqueName, waitFor, type RemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { startServe, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';

const GITHUB = 'ghp_Zq3xR8mV2nK7pL4sT9wY1bC6dF5gH0jA2eUi';
const AWS = 'AKIAZ7QX4MB2R9TK3WPL';
/** The user's own secret: stored in Hangar, and known to the leaky server. */
const OWN = 'plum-Orchard-7731-vessel';
const GUARD_BLOCKED = -32060;

let home: TestHome;
let serve: ServeProcess;
let leaky: RemoteServer;
const clients: Client[] = [];

async function clientOf(workload: Workload): Promise<Client> {
	const client = await connect(workload.url, 'streamable-http');
	clients.push(client);
	return client;
}

async function create(params: Record<string, unknown>): Promise<Workload> {
	return createWorkload(serve.url, { url: leaky.url, tool_pinning: 'off', ...params });
}

/** What the proxy of `workload` wrote to its log. */
function proxyLog(workload: Workload): Promise<string> {
	return readFile(join(home.path, 'data', 'logs', `${workload.name}.log`), 'utf8');
}

beforeAll(async () => {
	home = await createTestHome();
	serve = await startServe(home.env);
	expect((await callRest(serve.url, SetupSecrets, { provider_type: 'encrypted' })).status).toBe(201);
	expect((await callRest(serve.url, CreateSecret, { key: 'wiki_password', value: OWN })).status).toBe(201);
	leaky = await startFixture(fileURLToPath(new URL('./fixtures/guardrails/leaky-server.mjs', import.meta.url)), [OWN]);
}, 60_000);

afterAll(async () => {
	await Promise.allSettled(clients.map((client) => client.close()));
	await deleteAllWorkloads(serve.url);
	leaky?.stop();
	await serve?.stop();
	await home?.dispose();
}, 120_000);

describe('secret scanning with its defaults (requests blocked, answers redacted)', { timeout: 120_000 }, () => {
	let workload: Workload;
	let client: Client;

	beforeAll(async () => {
		workload = await create({ name: 'guarded', guardrails: { secrets: {} }, audit_config: { enabled: true, includeRequestData: true, includeResponseData: true }, telemetry_config: { enablePrometheusMetricsPath: true }, metrics_without_auth: true });
		client = await clientOf(workload);
	}, 60_000);

	it('blocks a token in the arguments before the server sees it: the error names the rule, never the value', async () => {
		const error = await client.callTool({ name: 'echo', arguments: { text: `use ${GITHUB}` } }).catch((caught: Error & { code?: number }) => caught);
		expect(error).toBeInstanceOf(Error);
		expect((error as { code?: number }).code).toBe(GUARD_BLOCKED);
		expect((error as Error).message).toContain('rule github-token');
		expect((error as Error).message).not.toContain(GITHUB);
		expect(textOf(await client.callTool({ name: 'received', arguments: {} }))).toBe('[]');
	});

	it("blocks the user's own Hangar secret in the arguments, and a secret under a JSON key", async () => {
		await expect(client.callTool({ name: 'echo', arguments: { text: `the password is ${OWN}` } })).rejects.toThrow(/rule hangar-secret/);
		await expect(client.callTool({ name: 'echo', arguments: { text: 'fine', [AWS]: 'x' } })).rejects.toThrow(/rule aws-access-key-id/);
		expect(textOf(await client.callTool({ name: 'received', arguments: {} }))).toBe('[]');
	});

	it('blocks a tools/call sent as a notification with 403: it never reaches the server', async () => {
		const session = await openSession(workload.url, {});
		const sent = await postMcp(workload.url, { method: 'tools/call', params: { name: 'echo', arguments: { text: GITHUB } } }, { 'Mcp-Session-Id': session });
		expect(sent.status).toBe(403);
		expect(JSON.stringify(sent.body)).not.toContain(GITHUB);
		expect(textOf(await client.callTool({ name: 'received', arguments: {} }))).toBe('[]');
	});

	it('lets a clean call through unchanged', async () => {
		expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hello' } }))).toBe('echo: hello');
		const benign = await client.callTool({ name: 'leak', arguments: { where: 'benign' } });
		expect(textOf(benign)).toBe('commit 3f9a1c2e8b7d6f5a4c3b2a1908f7e6d5c4b3a291: fix the README (see https://example.com/docs?page=2)');
		expect(benign._meta).toBeUndefined();
	});

	it.each([
		['github', 'github-token'],
		['query', 'github-token'],
		['base64', 'github-token'],
		['tool-error', 'github-token'],
	])('redacts a secret in a streamed result (%s)', async (where, rule) => {
		const result = await client.callTool({ name: 'leak', arguments: { where } });
		const text = JSON.stringify(result);
		expect(text).toContain(`[REDACTED:${rule}]`);
		expect(text).not.toContain(GITHUB);
		expect(text).not.toContain(encodeURIComponent(GITHUB));
	});

	it('redacts a token split across two content items, each part replaced', async () => {
		const result = (await client.callTool({ name: 'leak', arguments: { where: 'split' } })) as { content: Array<{ text: string }> };
		expect(result.content.map((item) => item.text)).toEqual(['[REDACTED:github-token]', '[REDACTED:github-token]']);
	});

	it('redacts structured content, keys included', async () => {
		const result = (await client.callTool({ name: 'leak', arguments: { where: 'structured' } })) as unknown as { structuredContent: { credentials: Record<string, string> } };
		expect(result.structuredContent.credentials).toEqual({ '[REDACTED:aws-access-key-id]': 'active', note: 'rotated' });
	});

	it("redacts the user's own secret base64'd inside a result, and split across lines", async () => {
		for (const where of ['own', 'own-lines']) {
			const text = textOf(await client.callTool({ name: 'leak', arguments: { where } }));
			expect(text).toContain('[REDACTED:hangar-secret]');
			expect(text).not.toContain(OWN.slice(6));
		}
	});

	it("redacts a secret in the server's JSON-RPC error message", async () => {
		const error = (await client.getPrompt({ name: 'broken' }).catch((caught: Error) => caught)) as Error;
		expect(error.message).toContain('[REDACTED:github-token]');
		expect(error.message).not.toContain(GITHUB);
	});

	it('redacts prompts/get results and resources/read contents', async () => {
		const prompt = await client.getPrompt({ name: 'deploy' });
		expect(JSON.stringify(prompt)).toContain('[REDACTED:aws-access-key-id]');
		expect(JSON.stringify(prompt)).not.toContain(AWS);
		const resource = await client.readResource({ uri: 'file:///home/dev/.git-credentials' });
		expect(JSON.stringify(resource)).not.toContain(GITHUB);
		expect(JSON.stringify(resource)).toContain('[REDACTED:');
	});

	it('skips binary parts (an image, a blob) and says so in the result', async () => {
		const image = await client.callTool({ name: 'leak', arguments: { where: 'image' } });
		expect(Buffer.from((image.content as Array<{ data?: string }>)[1]!.data!, 'base64').toString()).toContain(GITHUB);
		expect(image._meta).toEqual({ 'dev.hangar/guardrails': { unscanned_binary_parts: 1 } });
		const blob = await client.readResource({ uri: 'file:///blob/archive' });
		expect(blob._meta).toEqual({ 'dev.hangar/guardrails': { unscanned_binary_parts: 1 } });
	});

	it('passes a result over the 1 MiB scan cap with the secret past it unscanned, and audits it as oversized', async () => {
		const big = textOf(await client.callTool({ name: 'leak', arguments: { where: 'big' } }));
		expect(big.endsWith(GITHUB)).toBe(true);
		const { events } = await readAudit(auditFileOf(home.path, workload.name), (all) => all.some((event) => event.type === 'guardrail_oversized'));
		expect(events.find((event) => event.type === 'guardrail_oversized')!.metadata.extra).toMatchObject({ direction: 'response', action: 'audit', max_scan_bytes: 1048576 });
	});

	it('audits and logs each finding by rule and action, never the value', async () => {
		const { events, text } = await readAudit(auditFileOf(home.path, workload.name), (all) => all.filter((event) => event.type === 'guardrail_secret').length >= 10);
		const guarded = events.filter((event) => event.type === 'guardrail_secret');
		expect(guarded).toContainEqual(expect.objectContaining({ outcome: 'denied', metadata: expect.objectContaining({ extra: expect.objectContaining({ direction: 'request', action: 'block', rules: ['github-token'] }) }) }));
		expect(guarded).toContainEqual(expect.objectContaining({ outcome: 'success', metadata: expect.objectContaining({ extra: expect.objectContaining({ direction: 'response', action: 'redact', rules: ['hangar-secret'] }) }) }));
		const log = await proxyLog(workload);
		expect(log).toMatch(/guardrails: a secret in the request of tools\/call echo of guarded-\w+, blocked: rule github-token/);
		for (const written of [text, log]) {
			expect(written).not.toContain(GITHUB);
			expect(written).not.toContain(OWN);
			expect(written).not.toContain(AWS);
		}
	});

	it('counts findings on /metrics by rule, action and direction', async () => {
		const metrics = await (await fetch(new URL('/metrics', workload.url))).text();
		expect(metrics).toMatch(/hangar_proxy_guardrail_findings_total\{[^}]*rule="github-token"[^}]*action="block"[^}]*direction="request"[^}]*\} [1-9]/);
		expect(metrics).toMatch(/hangar_proxy_guardrail_findings_total\{[^}]*rule="github-token"[^}]*action="redact"[^}]*direction="response"[^}]*\} [1-9]/);
		expect(metrics).not.toContain(GITHUB);
	});

	it('is shown by workloads/get as it was given', async () => {
		const detail = await callRest(serve.url, GetWorkload, { name: workload.name });
		expect((detail.body as { guardrails?: unknown }).guardrails).toEqual({ secrets: {} });
	});
});

describe('other actions and allow rules', { timeout: 120_000 }, () => {
	it('redact in requests, block in answers, an allowed false positive let through', async () => {
		const allowed = 'ghp_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
		const workload = await create({ name: 'strict', guardrails: { secrets: { requests: 'redact', responses: 'block', allow: [{ rule: 'github-token', match: allowed }] } } });
		const client = await clientOf(workload);
		expect(textOf(await client.callTool({ name: 'echo', arguments: { text: `use ${GITHUB}` } }))).toBe('echo: use [REDACTED:github-token]');
		expect(textOf(await client.callTool({ name: 'echo', arguments: { text: `use ${allowed}` } }))).toBe(`echo: use ${allowed}`);
		const error = (await client.callTool({ name: 'leak', arguments: { where: 'github' } }).catch((caught: Error) => caught)) as Error & { code?: number };
		expect(error.code).toBe(GUARD_BLOCKED);
		expect(error.message).toMatch(/blocked the answer to tools\/call leak: it holds a secret \(rule github-token\)/);
		expect(error.message).not.toContain(GITHUB);
	});

	it('audit only: the answer unchanged, the finding audited, the audit log\'s copy of the answer redacted', async () => {
		const workload = await create({ name: 'watching', guardrails: { secrets: { responses: 'audit', hangar_secrets: false } }, audit_config: { enabled: true, includeResponseData: true } });
		const client = await clientOf(workload);
		expect(textOf(await client.callTool({ name: 'leak', arguments: { where: 'github' } }))).toBe(`cloned with ${GITHUB} at main`);
		// The leak call's own event, with its answer: other calls' events (initialize, tools/list) carry answers too.
		const leakAnswered = (event: AuditEvent) => event.target.name === 'leak' && event.data?.response !== undefined;
		const { events, text } = await readAudit(auditFileOf(home.path, workload.name), (all) => all.some((event) => event.type === 'guardrail_secret') && all.some(leakAnswered));
		expect(events.find((event) => event.type === 'guardrail_secret')!.metadata.extra).toMatchObject({ direction: 'response', action: 'audit', rules: ['github-token'] });
		// The audit log keeps the answer's data, redacted: the client got it whole.
		expect(text).toContain('[REDACTED:github-token]');
		expect(text).not.toContain(GITHUB);
	});

	it('blocks an oversized answer when told to', async () => {
		const workload = await create({ name: 'capped', guardrails: { secrets: { oversized: 'block', max_scan_bytes: 65536 } } });
		const client = await clientOf(workload);
		await expect(client.callTool({ name: 'leak', arguments: { where: 'big' } })).rejects.toThrow(/more than the 65536 characters of text they scan/);
		expect(textOf(await client.callTool({ name: 'leak', arguments: { where: 'benign' } }))).toContain('fix the README');
	});

	it('without guardrails the same leaks pass untouched', async () => {
		const workload = await create({ name: 'open' });
		const client = await clientOf(workload);
		expect(textOf(await client.callTool({ name: 'echo', arguments: { text: GITHUB } }))).toBe(`echo: ${GITHUB}`);
		expect(textOf(await client.callTool({ name: 'leak', arguments: { where: 'github' } }))).toContain(GITHUB);
	});
});

describe('answers whose secrets appear only escaped in the JSON the server sent', { timeout: 120_000 }, () => {
	let escaping: RemoteServer;
	let client: Client;

	beforeAll(async () => {
		escaping = await startFixture(fileURLToPath(new URL('./fixtures/guardrails/escaping-server.mjs', import.meta.url)));
		const workload = await createWorkload(serve.url, { url: escaping.url, name: 'escaped', tool_pinning: 'off', guardrails: { secrets: { hangar_secrets: false } } });
		client = await clientOf(workload);
	}, 60_000);

	afterAll(() => escaping?.stop());

	it.each(['json', 'stream'])('redacts them in a result sent as %s', async (name) => {
		const text = textOf(await client.callTool({ name, arguments: {} }));
		expect(text).toBe('cloned with [REDACTED:github-token] from [REDACTED:basic-auth]/repo');
	});

	it('redacts them in a JSON-RPC error', async () => {
		const error = (await client.callTool({ name: 'error', arguments: {} }).catch((caught: Error) => caught)) as Error;
		expect(error.message).toContain('[REDACTED:github-token]');
		expect(error.message).not.toContain(GITHUB);
		expect(error.message).not.toContain('Zq3xR8mV2nK7@');
	});
});

describe('personal data', { timeout: 120_000 }, () => {
	it('redacts each kind in an answer and in arguments, audits it by rule, and leaves order numbers and dates be', async () => {
		const workload = await create({ name: 'private', guardrails: { personal_data: { kinds: ['email', 'phone', 'card', 'iban', 'national_id'] } }, audit_config: { enabled: true } });
		const client = await clientOf(workload);
		expect(textOf(await client.callTool({ name: 'leak', arguments: { where: 'personal' } }))).toBe(
			'Customer: [REDACTED:pii.email], [REDACTED:pii.phone], card [REDACTED:pii.card], IBAN [REDACTED:pii.iban], SSN [REDACTED:pii.national_id]; order ORD-2026-004512 of 2026-11-03',
		);
		expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'mail jordan.lee@contoso.io' } }))).toBe('echo: mail [REDACTED:pii.email]');
		// Secrets are not looked for: that is the other guardrail.
		expect(textOf(await client.callTool({ name: 'echo', arguments: { text: GITHUB } }))).toBe(`echo: ${GITHUB}`);
		const { events, text } = await readAudit(auditFileOf(home.path, workload.name), (all) => all.filter((event) => event.type === 'guardrail_personal_data').length >= 2);
		expect(events.find((event) => event.type === 'guardrail_personal_data' && event.metadata.extra.direction === 'response')!.metadata.extra).toMatchObject({
			guardrail: 'personal_data',
			action: 'redact',
			rules: ['pii.card', 'pii.iban', 'pii.national_id', 'pii.email', 'pii.phone'],
		});
		expect(text).not.toContain('jordan.lee@contoso.io');
		expect(await proxyLog(workload)).toMatch(/personal data in the answer to tools\/call leak of .*, redacted: rule pii\.card/);
	});

	it('audit only lets the answer through; only the kinds named are looked for; beside secret scanning, each keeps its action', async () => {
		const watching = await create({ name: 'pii-audit', guardrails: { personal_data: { responses: 'audit', kinds: ['card'] } } });
		const client = await clientOf(watching);
		expect(textOf(await client.callTool({ name: 'leak', arguments: { where: 'personal' } }))).toContain('card 4111 1111 1111 1111');
		expect(await proxyLog(watching)).toMatch(/personal data in the answer to tools\/call leak of .*, let through \(audit\): rule pii\.card$/m);
		const both = await create({ name: 'pii-and-secrets', guardrails: { secrets: {}, personal_data: { kinds: ['email'] } } });
		const guarded = await clientOf(both);
		await expect(guarded.callTool({ name: 'echo', arguments: { text: `${GITHUB} for jordan.lee@contoso.io` } })).rejects.toThrow(/rule github-token/);
		expect(textOf(await guarded.callTool({ name: 'echo', arguments: { text: 'jordan.lee@contoso.io, +44 7400 123456' } }))).toBe('echo: [REDACTED:pii.email], +44 7400 123456');
	});
});

describe("the server's own requests and notifications toward the client", { timeout: 120_000 }, () => {
	/** A client that samples and elicits, and keeps what the server sent it. */
	async function askedClient(workload: Workload): Promise<{ client: Client; asked: unknown[]; logged: unknown[] }> {
		const client = await connect(workload.url, 'streamable-http', { sampling: {}, elicitation: {} });
		clients.push(client);
		const asked: unknown[] = [];
		const logged: unknown[] = [];
		client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
			asked.push(request.params);
			return { role: 'assistant', model: 'test', content: { type: 'text', text: 'a summary' } };
		});
		client.setRequestHandler(ElicitRequestSchema, async (request) => {
			asked.push(request.params);
			return { action: 'decline' };
		});
		client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => {
			logged.push(notification.params);
		});
		return { client, asked, logged };
	}

	it('redacts sampling and elicitation requests, log messages and progress, secrets and personal data alike', async () => {
		const workload = await create({ name: 'asking', guardrails: { secrets: {}, personal_data: { kinds: ['email'] } } });
		const { client, asked, logged } = await askedClient(workload);
		expect(textOf(await client.callTool({ name: 'ask', arguments: {} }))).toBe('sampled: a summary');
		expect(textOf(await client.callTool({ name: 'elicit', arguments: {} }))).toBe('elicited: decline');
		const progress: unknown[] = [];
		expect(textOf(await client.callTool({ name: 'chatty', arguments: {} }, undefined, { onprogress: (update) => progress.push(update) }))).toBe('done');
		expect(asked).toEqual([
			expect.objectContaining({ messages: [{ role: 'user', content: { type: 'text', text: 'summarise the repo cloned with [REDACTED:github-token]' } }], systemPrompt: 'reply to [REDACTED:pii.email]' }),
			expect.objectContaining({ message: 'Push with [REDACTED:github-token] for [REDACTED:pii.email]?' }),
		]);
		await waitFor(async () => logged.length > 0, 'the log message');
		expect(logged).toEqual([{ level: 'info', logger: 'git', data: { note: 'token [REDACTED:github-token] used by [REDACTED:pii.email]' } }]);
		expect(progress).toEqual([{ progress: 1, total: 2, message: 'pushing with [REDACTED:github-token]' }]);
		expect(await proxyLog(workload)).toMatch(/a secret in the server's sampling\/createMessage of .*, redacted: rule github-token/);
	});

	it('blocks them when answers are blocked: the server hears the error naming the rule, the client nothing', async () => {
		const workload = await create({ name: 'refusing', guardrails: { secrets: { responses: 'block' } } });
		const { client, asked, logged } = await askedClient(workload);
		const sampled = textOf(await client.callTool({ name: 'ask', arguments: {} }));
		expect(sampled).toMatch(new RegExp(`^sampling failed: ${GUARD_BLOCKED} .*blocked the server's sampling/createMessage: it holds a secret \\(rule github-token\\)`));
		expect(sampled).not.toContain(GITHUB);
		expect(textOf(await client.callTool({ name: 'elicit', arguments: {} }))).toMatch(/^elicitation failed: -32060 .*rule github-token/);
		expect(textOf(await client.callTool({ name: 'chatty', arguments: {} }))).toBe('done');
		expect(asked).toEqual([]);
		expect(logged).toEqual([]);
	});

	it("an aggregate guards its members' requests and log messages on their way to its client", async () => {
		const group = uniqueName('asking-group');
		expect((await callRest(serve.url, CreateGroup, { name: group })).status).toBe(201);
		await create({ name: 'asking-member', group });
		const aggregate = await createWorkload(serve.url, { name: 'asking-agg', image: `group://${group}`, group, guardrails: { secrets: {} } });
		const { client, asked, logged } = await askedClient(aggregate);
		await waitFor(async () => (await client.listTools()).tools.some((tool) => tool.name.endsWith('ask')), 'the member tools through the aggregate');
		const tools = (await client.listTools()).tools.map((tool) => tool.name);
		expect(textOf(await client.callTool({ name: tools.find((name) => name.endsWith('ask'))!, arguments: {} }))).toBe('sampled: a summary');
		expect(textOf(await client.callTool({ name: tools.find((name) => name.endsWith('chatty'))!, arguments: {} }))).toBe('done');
		expect(JSON.stringify(asked)).toContain('summarise the repo cloned with [REDACTED:github-token]');
		await waitFor(async () => logged.length > 0, 'the log message');
		expect(JSON.stringify([asked, logged])).not.toContain(GITHUB);
	});

	it('without guardrails they reach the client as sent', async () => {
		const { client, asked } = await askedClient(await create({ name: 'asking-open' }));
		expect(textOf(await client.callTool({ name: 'ask', arguments: {} }))).toBe('sampled: a summary');
		expect(JSON.stringify(asked)).toContain(GITHUB);
	});
});

describe('an aggregate', { timeout: 180_000 }, () => {
	it("guards what its members answer, as its own guardrails say", async () => {
		const group = uniqueName('guarded-group');
		expect((await callRest(serve.url, CreateGroup, { name: group })).status).toBe(201);
		const member = await create({ name: 'member', group });
		const aggregate = await createWorkload(serve.url, { name: 'agg', image: `group://${group}`, group, guardrails: { secrets: {} } });
		const client = await clientOf(aggregate);
		await waitFor(async () => (await client.listTools()).tools.some((tool) => tool.name.endsWith('leak')), 'the member tools through the aggregate');
		const leak = (await client.listTools()).tools.find((tool) => tool.name.endsWith('leak'))!.name;
		const text = textOf(await client.callTool({ name: leak, arguments: { where: 'github' } }));
		expect(text).toBe('cloned with [REDACTED:github-token] at main');
		const echo = (await client.listTools()).tools.find((tool) => tool.name.endsWith('echo'))!.name;
		await expect(client.callTool({ name: echo, arguments: { text: GITHUB } })).rejects.toThrow(/rule github-token/);
		expect(textOf(await (await clientOf(member)).callTool({ name: 'leak', arguments: { where: 'github' } }))).toContain(GITHUB);
	});
});

describe('the settings at the door', () => {
	it.each([
		[{ secrets: { requests: 'shred' } }, /guardrails\.secrets\.requests/],
		[{ secrets: { allow: [{ tool: 'echo' }] } }, /guardrails\.secrets\.allow\[0\].*names a rule, a match, or both/],
		[{ secrets: { allow: [{ rule: 'githib-token' }] } }, /guardrails\.secrets\.allow\[0\]\.rule.*no secret rule is named "githib-token"/],
		[{ secrets: { allow: [{ rule: 'constructor' }] } }, /guardrails\.secrets\.allow\[0\]\.rule.*no secret rule is named "constructor"/],
		[{ secrets: { max_scan_bytes: 10 } }, /guardrails\.secrets\.max_scan_bytes/],
		[{ secrets: {}, webhooks: [] }, /guardrails.*webhooks/],
		[{ personal_data: { requests: 'block' } }, /guardrails\.personal_data\.requests/],
		[{ personal_data: { kinds: ['passport'] } }, /guardrails\.personal_data\.kinds/],
		[{ personal_data: { kinds: [] } }, /guardrails\.personal_data\.kinds/],
		[{ personal_data: { allow: [{ rule: 'github-token' }] } }, /guardrails\.personal_data\.allow\[0\]\.rule.*no personal data rule is named "github-token"; the rules are pii\.email/],
	])('refuses %j with a 400 naming the field', async (guardrails, field) => {
		const answer = await callRest(serve.url, CreateWorkload, { name: uniqueName('bad'), url: leaky.url, guardrails });
		expect(answer.status).toBe(400);
		expect((answer.body as { message: string }).message).toMatch(field);
	});
});
