/**
 * The guardrails flags of `hangar run` as users type them, `hangar info` showing the result, and
 * what the proxy then does: a token in an echo's argument redacted, an allowed one let through,
 * a bad action refused with the field named.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, startRemoteServer, textOf, uniqueName, type RemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { HANGAR_BIN, runEntry, type CommandResult } from './support/processes.js';

const GITHUB = 'ghp_Zq3xR8mV2nK7pL4sT9wY1bC6dF5gH0jA2eUi';
const ALLOWED = 'ghp_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

let home: TestHome;
let remote: RemoteServer;

function hangar(...args: string[]): Promise<CommandResult> {
	return runEntry(HANGAR_BIN, args, home.env, { cwd: home.path });
}

beforeAll(async () => {
	home = await createTestHome();
	remote = await startRemoteServer('streamable');
	await writeFile(join(home.path, 'guardrails.yaml'), ['secrets:', '  responses: block', '  hangar_secrets: false', ''].join('\n'));
	await writeFile(join(home.path, 'webhooks.yaml'), ['validating_webhooks:', '  - { name: policy, url: "https://hooks.example.com/validate", failure_policy: ignore }', ''].join('\n'));
});

afterAll(async () => {
	const listed = JSON.parse((await hangar('ls', '--all', '--json')).stdout || '[]') as Array<{ name: string }>;
	if (listed.length) await hangar('rm', ...listed.map((workload) => workload.name));
	remote?.stop();
	await home?.dispose();
}, 120_000);

describe('hangar run with guardrails flags', { timeout: 120_000 }, () => {
	it('redacts what the flags say, lets the allowed text through, hangar info says so, hangar edit changes one setting', async () => {
		const name = uniqueName('guarded');
		const run = await hangar('run', remote.url, '--name', name, '--json', '--tool-pinning', 'off', '--guardrails-requests', 'redact', '--guardrails-allow', `github-token=${ALLOWED}`);
		expect(run.code, run.stderr).toBe(0);
		const client = await connect((JSON.parse(run.stdout) as { url: string }).url, 'streamable-http');
		try {
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: `push with ${GITHUB}` } }))).toBe('remote echo: push with [REDACTED:github-token]');
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: ALLOWED } }))).toBe(`remote echo: ${ALLOWED}`);
		} finally {
			await client.close();
		}
		const info = await hangar('info', name);
		expect(info.stdout).toMatch(/^guardrails: secrets: requests redact, answers redact, 1 allowed$/m);
		// hangar edit changes the flags given and keeps the rest.
		expect((await hangar('edit', name, '--guardrails-responses', 'block')).code).toBe(0);
		expect((await hangar('info', name)).stdout).toMatch(/^guardrails: secrets: requests redact, answers block, 1 allowed$/m);
	});

	it('reads a guardrails file, the flags over it; --guardrails alone keeps the defaults', async () => {
		const fromFile = uniqueName('filed');
		expect((await hangar('run', remote.url, '--name', fromFile, '--guardrails-config', 'guardrails.yaml')).code).toBe(0);
		expect((await hangar('info', fromFile)).stdout).toMatch(/^guardrails: secrets: requests block, answers block, not the user's secrets$/m);
		const plain = uniqueName('plain');
		expect((await hangar('run', remote.url, '--name', plain, '--guardrails')).code).toBe(0);
		expect((await hangar('info', plain)).stdout).toMatch(/^guardrails: secrets: requests block, answers redact$/m);
		const hooked = uniqueName('hooked');
		expect((await hangar('run', remote.url, '--name', hooked, '--webhooks-config', 'webhooks.yaml')).code).toBe(0);
		expect((await hangar('info', hooked)).stdout).toMatch(/^webhooks:  policy \(validating\)$/m);
		const none = uniqueName('none');
		expect((await hangar('run', remote.url, '--name', none)).code).toBe(0);
		expect((await hangar('info', none)).stdout).toMatch(/^guardrails: off$/m);
	});

	it('--guardrails-personal-data turns personal data scanning on for the kinds named, alone or beside secrets', async () => {
		const name = uniqueName('private');
		const run = await hangar('run', remote.url, '--name', name, '--json', '--tool-pinning', 'off', '--guardrails-personal-data', 'email,card');
		expect(run.code, run.stderr).toBe(0);
		const client = await connect((JSON.parse(run.stdout) as { url: string }).url, 'streamable-http');
		try {
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: `mail ana.silva@uni-hamburg.de, ${GITHUB}` } }))).toBe(`remote echo: mail [REDACTED:pii.email], ${GITHUB}`);
		} finally {
			await client.close();
		}
		expect((await hangar('info', name)).stdout).toMatch(/^guardrails: personal data \(email, card\): requests redact, answers redact$/m);
		expect((await hangar('edit', name, '--guardrails-personal-data-action', 'audit', '--guardrails')).code).toBe(0);
		expect((await hangar('info', name)).stdout).toMatch(/^guardrails: secrets: requests block, answers redact; personal data \(email, card\): requests audit, answers audit$/m);
		const bad = await hangar('run', remote.url, '--name', uniqueName('bad'), '--guardrails-personal-data', 'email,passport');
		expect(bad.code).not.toBe(0);
		expect(bad.stderr).toMatch(/guardrails\.personal_data\.kinds/);
	});

	it('refuses a bad action with the field named, and runs nothing', async () => {
		const name = uniqueName('bad');
		const run = await hangar('run', remote.url, '--name', name, '--guardrails-responses', 'shred');
		expect(run.code).not.toBe(0);
		expect(run.stderr).toMatch(/guardrails\.secrets\.responses/);
		expect((await hangar('ls', '--all', '--json')).stdout).not.toContain(name);
	});
});
