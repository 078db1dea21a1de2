/**
 * The security flags of `hangar run` and `hangar edit` as users type them, with files in JSON
 * and YAML given by relative paths, and what the proxy then does: protected-resource metadata
 * with the scopes given, an audit log keeping only the chosen events with data cut to size,
 * rate limits, and one-line errors.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestIssuer } from './fixtures/security/issuer.js';
import { auditFileOf, bearer, readAudit } from './fixtures/security/support.js';
import { connect, startRemoteServer, textOf, uniqueName, type RemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { HANGAR_BIN, runEntry, type CommandResult } from './support/processes.js';

let home: TestHome;
let remote: RemoteServer;
let issuer: TestIssuer;

/** `hangar ARGS…` run from the test home, so relative paths resolve there. */
function hangar(...args: string[]): Promise<CommandResult> {
	return runEntry(HANGAR_BIN, args, home.env, { cwd: home.path });
}

beforeAll(async () => {
	home = await createTestHome();
	remote = await startRemoteServer('streamable');
	issuer = await TestIssuer.start();
	await writeFile(
		join(home.path, 'authz.yaml'),
		['version: "1.0"', 'type: cedarv1', 'cedar:', '  policies:', '    - permit(principal, action == Action::"call_tool", resource == Tool::"echo");', ''].join('\n'),
	);
	await writeFile(join(home.path, 'audit.yaml'), ['eventTypes: [mcp_tool_call]', 'includeResponseData: true', 'maxDataSize: 20', ''].join('\n'));
	await writeFile(join(home.path, 'limits.json'), JSON.stringify({ shared: { maxTokens: 1, refillPeriod: '1h' } }));
	await writeFile(join(home.path, 'bad-limits.yaml'), 'shared: { maxTokens: 2, refillPeriod: soon }\n');
});

afterAll(async () => {
	const listed = JSON.parse((await hangar('ls', '--all', '--json')).stdout || '[]') as Array<{ name: string }>;
	if (listed.length) await hangar('rm', ...listed.map((workload) => workload.name));
	remote?.stop();
	await issuer?.stop();
	await home?.dispose();
}, 120_000);

/** `hangar run` of the remote server under `name`, with every security flag and the files above. */
function runSecured(name: string): Promise<CommandResult> {
	return hangar(
		'run', remote.url, '--name', name, '--json',
		'--oidc-issuer', issuer.issuer, '--oidc-audience', issuer.audience, '--oidc-scopes', 'openid,mcp:tools',
		'--authz-config', 'authz.yaml', '--audit-config', 'audit.yaml', '--rate-limit-config', 'limits.json',
	);
}

describe('hangar run with security flags', { timeout: 120_000 }, () => {
	// One workload the first two tests only read (the second spends its one token and is the
	// only one to call it); the edit works on a workload of its own.
	const name = uniqueName('secure');
	let run: CommandResult;
	const url = () => (JSON.parse(run.stdout) as { url: string }).url;
	beforeAll(async () => {
		run = await runSecured(name);
	});

	it('stores every setting, the policy file by its absolute path', async () => {
		expect(run.code, run.stderr).toBe(0);
		const exported = JSON.parse((await hangar('export', name)).stdout) as Record<string, unknown>;
		expect(exported).toMatchObject({
			oidc_config: { issuer: issuer.issuer, audience: issuer.audience, scopes: ['openid', 'mcp:tools'] },
			authz_config: { type: 'cedarv1', version: '1.0' },
			authz_config_path: join(home.path, 'authz.yaml'),
			audit_config: { enabled: true, eventTypes: ['mcp_tool_call'], includeResponseData: true, maxDataSize: 20 },
			rate_limit_config: { shared: { maxTokens: 1, refillPeriod: '1h' } },
		});
	});

	it('serves what the flags ask for', async () => {
		const metadata = (await (await fetch(`${new URL(url()).origin}/.well-known/oauth-protected-resource/api/mcp`)).json()) as { scopes_supported: string[] };
		expect(metadata.scopes_supported).toEqual(['openid', 'mcp:tools']);
		const client = await connect(url(), 'streamable-http', {}, bearer(await issuer.token('alice')));
		try {
			expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'a message longer than twenty bytes' } }))).toBe('remote echo: a message longer than twenty bytes');
			await expect(client.callTool({ name: 'echo', arguments: { message: 'again' } })).rejects.toThrow(/Rate limit exceeded/);
		} finally {
			await client.close();
		}
		const { events } = await readAudit(auditFileOf(home.path, name), 2);
		expect(events.map((event) => [event.type, event.outcome])).toEqual([
			['mcp_tool_call', 'success'],
			['mcp_tool_call', 'failure'],
		]);
		const data = events[0]!.data as { response: string; response_truncated: boolean };
		expect(data.response_truncated).toBe(true);
		expect(Buffer.byteLength(data.response)).toBe(20);
		expect(data.response).toBe('{"content":[{"type":');
		expect(events[0]!.metadata.extra.response_size_bytes).toBeGreaterThan(20);
	});

	it('edits one OIDC setting and keeps the others', async () => {
		const edited = uniqueName('secure-edited');
		const created = await runSecured(edited);
		expect(created.code, created.stderr).toBe(0);
		const edit = await hangar('edit', edited, '--oidc-audience', 'another-audience');
		expect(edit.code, edit.stderr).toBe(0);
		const exported = JSON.parse((await hangar('export', edited)).stdout) as { oidc_config: Record<string, unknown>; rate_limit_config: unknown };
		expect(exported.oidc_config).toMatchObject({ issuer: issuer.issuer, audience: 'another-audience', scopes: ['openid', 'mcp:tools'] });
		expect(exported.rate_limit_config).toEqual({ shared: { maxTokens: 1, refillPeriod: '1h' } });
	});

	it('fails with one line naming the field', async () => {
		const bad = await hangar('run', remote.url, '--name', uniqueName('bad'), '--rate-limit-config', 'bad-limits.yaml');
		expect(bad.code).toBe(2);
		expect(bad.stderr.trim().split('\n')).toHaveLength(1);
		expect(bad.stderr).toMatch(/invalid rate_limit_config\.shared\.refillPeriod/);
		const missing = await hangar('run', remote.url, '--name', uniqueName('bad'), '--oidc-issuer', issuer.issuer);
		expect(missing.code).toBe(2);
		expect(missing.stderr).toMatch(/invalid oidc\.audience: .*--oidc-audience/);
	});
});
