/**
 * The workload commands as users type them: `hangar run|ls|info|export|edit|logs|stop|restart|rm`,
 * with the real engine, the proxy processes they leave running, and one-line errors.
 */
import { spawn } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { connect, EVERYTHING, MEMORY, startRemoteServer, textOf, uniqueName, waitFor, type RemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { HANGAR_BIN, runHangar, type CommandResult } from './support/processes.js';
import { networkOf } from '../server/cli/commands/workloads.js';
import type { WorkloadDetail } from '../protocol/protocol.workloads.js';

let home: TestHome;
let remote: RemoteServer;
const hangar = (...args: string[]) => runHangar(args, home.env);

beforeAll(async () => {
	home = await createTestHome();
	remote = await startRemoteServer('streamable');
});

afterAll(async () => {
	const listed = JSON.parse((await hangar('ls', '--all', '--json')).stdout) as Array<{ name: string }>;
	if (listed.length) await hangar('rm', ...listed.map((workload) => workload.name));
	remote?.stop();
	await home?.dispose();
}, 120_000);

describe('hangar mcp, logs -f and --tail, --tools checks', { timeout: 180_000 }, () => {
	const name = uniqueName('mcp');
	const planted = 'planted-value-7f3a91';
	const keptTools = 'echo,get-env';

	beforeAll(async () => {
		expect((await hangar('run', EVERYTHING, '--name', name, '--transport', 'stdio', '--tools', keptTools, '--env', `PLANTED=${planted}`, '--', 'stdio')).code).toBe(0);
	}, 120_000);

	/** Edits the workload's --tools for this test, and puts them back after it. */
	async function editTools(list: string): Promise<{ code: number; stderr: string }> {
		onTestFinished(async () => {
			expect((await hangar('edit', name, '--tools', keptTools)).code).toBe(0);
		});
		return hangar('edit', name, '--tools', list);
	}

	it('talks MCP to a workload: hangar mcp tools and hangar mcp call', async () => {
		const tools = await hangar('mcp', 'tools', name);
		expect(tools.code).toBe(0);
		expect(tools.stdout).toMatch(/^NAME\s+DESCRIPTION$/m);
		expect(tools.stdout).toMatch(/^echo\s+\S/m);
		expect(tools.stdout).not.toMatch(/^add\s/m); // filtered out by --tools
		expect(JSON.parse((await hangar('mcp', 'tools', name, '--json')).stdout).map((tool: { name: string }) => tool.name).sort()).toEqual(['echo', 'get-env']);
		expect(await hangar('mcp', 'call', name, 'echo', '--arg', 'message=from the cli')).toMatchObject({ code: 0, stdout: 'Echo: from the cli\n' });
		// A server's text that would clear the screen and write the clipboard (OSC 52) is printed with its controls visible.
		const hostile = await hangar('mcp', 'call', name, 'echo', '--arg', 'message=\u001b[2J\u001b]52;c;ZXZpbA==\u0007\u009b31m');
		expect(hostile).toMatchObject({ code: 0, stdout: 'Echo: \\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007\\u009b31m\n' });
		const env = await hangar('mcp', 'call', name, 'get-env', '--json');
		expect(JSON.parse(env.stdout)).toMatchObject({ content: [{ type: 'text', text: expect.stringContaining(planted) }] });
		const unknown = await hangar('mcp', 'call', name, 'add', '--arg', 'a=1', '--arg', 'b=2');
		expect(unknown.code).toBe(1);
		expect(unknown.stdout + unknown.stderr).toContain('Tool add not found');
		expect(await hangar('mcp', 'tools', 'no-such-workload')).toMatchObject({ code: 1, stderr: expect.stringContaining('workload no-such-workload not found') });
	});

	it('info shows the arguments, env names, secrets as references and volumes, never a value', async () => {
		const secretValue = 'secret-value-91c2e4';
		expect((await hangar('secret', 'setup')).code).toBe(0);
		expect((await runHangar(['secret', 'set', 'token'], home.env, `${secretValue}\n`)).code).toBe(0);
		expect((await hangar('edit', name, '--secret', 'token,target=TOKEN', '--volume', `${home.path}:/data:ro`)).code).toBe(0);
		const info = await hangar('info', name);
		expect(info.stdout).toMatch(/^args:\s+stdio$/m);
		expect(info.stdout).toMatch(/^env:\s+PLANTED$/m);
		expect(info.stdout).toMatch(/^secrets:\s+token as TOKEN$/m);
		expect(info.stdout).toContain(`volumes:   ${home.path}:/data:ro\n`);
		for (const output of [info.stdout, (await hangar('info', name, '--json')).stdout]) {
			expect(output).not.toContain(secretValue);
		}
		expect(info.stdout).not.toContain(planted);
	});

	it('summarises binary content unless --raw; lists and gets prompts, lists and reads resources', async () => {
		expect((await editTools('echo,get-env,get-tiny-image')).code).toBe(0);
		const image = await hangar('mcp', 'call', name, 'get-tiny-image');
		expect(image.code).toBe(0);
		expect(image.stdout).toMatch(/^\[image\/png, \d+(\.\d)? [KM]?B\]$/m);
		expect(image.stdout.length).toBeLessThan(1000);
		const raw = await hangar('mcp', 'call', name, 'get-tiny-image', '--raw');
		expect(raw.stdout).toMatch(/"data":"[A-Za-z0-9+/=]{100,}"/);
		const prompts = JSON.parse((await hangar('mcp', 'prompts', name, '--json')).stdout) as Array<{ name: string }>;
		expect(prompts.map((prompt) => prompt.name)).toContain('simple-prompt');
		expect((await hangar('mcp', 'prompts', name)).stdout).toMatch(/^NAME\s+ARGUMENTS\s+DESCRIPTION$/m);
		expect(await hangar('mcp', 'prompt', name, 'simple-prompt')).toMatchObject({ code: 0, stdout: expect.stringMatching(/^user: \S/) });
		const resources = JSON.parse((await hangar('mcp', 'resources', name, '--json')).stdout) as Array<{ uri: string }>;
		expect(resources.length).toBeGreaterThan(0);
		expect((await hangar('mcp', 'resources', name)).stdout).toContain(resources[0]!.uri);
		const read = await hangar('mcp', 'read', name, resources[0]!.uri);
		expect(read.code).toBe(0);
		expect(read.stdout.trim()).not.toBe('');
	});

	it('warns about --tools names the server does not have, with those it keeps', async () => {
		const edit = await editTools('echo,get-env,nosuch');
		expect(edit.code).toBe(0);
		expect(edit.stderr).toContain(`warning: workload ${name} has no tool named nosuch; --tools keeps only echo, get-env`);
		expect((await hangar('edit', name, '--tools', 'echo,get-env')).stderr).not.toContain('warning');
	});

	it('shows a stdio server\'s stderr, never its protocol stream on stdout (what a tool echoed included)', async () => {
		expect((await hangar('mcp', 'call', name, 'get-env')).stdout).toContain(planted);
		const logs = await hangar('logs', name);
		expect(logs.stdout).toContain('Starting default (STDIO) server');
		expect(logs.stdout).not.toContain(planted);
		expect(logs.stdout).not.toContain('"jsonrpc"');
		expect((await hangar('logs', name, '--proxy')).stdout).not.toContain(planted);
	});

	it('prints the last lines of the output, and follows it', async () => {
		const started = 'Starting default (STDIO) server';
		const before = (await hangar('logs', name)).stdout.split('\n').filter(Boolean);
		expect(await hangar('logs', name, '--tail', '1')).toMatchObject({ code: 0, stdout: `${before.at(-1)}\n` });
		const follow = spawn(process.execPath, [HANGAR_BIN, 'logs', name, '-f', '--tail', '0'], { env: home.env });
		let followed = '';
		follow.stdout.on('data', (chunk: Buffer) => (followed += chunk.toString()));
		try {
			await new Promise((resolve) => setTimeout(resolve, 2_000));
			// A restart keeps the container: the server's start shows once more.
			expect((await hangar('restart', name)).code).toBe(0);
			await waitFor(async () => followed.includes(started), 'the followed output to show the restart', 60_000);
		} finally {
			follow.kill('SIGINT');
		}
		expect(followed.split(started).length).toBe(2);
		const after = (await hangar('logs', name)).stdout.split('\n').filter(Boolean);
		expect(after.length).toBe(before.length + 1);
	});

});

describe('hangar run … rm', { timeout: 180_000 }, () => {
	const name = uniqueName('cli');
	let authz: string;
	let run: CommandResult;

	// The workload the tests read (the edit only adds to it); the one stopped and deleted is that test's own.
	beforeAll(async () => {
		authz = join(home.path, 'authz.json');
		await writeFile(authz, JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies: ['permit(principal, action, resource);'], entities_json: '[]' } }));
		run = await hangar(
			'run', EVERYTHING, '--name', name, '--transport', 'stdio', '-e', 'GREETING=hi', '--label', 'team=tools', '--tools', 'echo,get-env',
			'--oidc-issuer', 'https://issuer.example', '--oidc-audience', 'hangar', '--oidc-client-id', 'cli', '--oidc-jwks-url', 'https://issuer.example/jwks',
			'--authz-config', authz, '--restart', 'always', '--request-timeout', '30', '--trust-proxy-headers', '--', 'stdio',
		);
	}, 120_000);

	it('runs an image with flags, including the authentication settings kept for the proxy', async () => {
		expect(run.stderr).toContain(`Creating workload ${name}`);
		expect(run).toMatchObject({ code: 0, stdout: expect.stringMatching(new RegExp(`^Workload ${name} is running: http://127\\.0\\.0\\.1:\\d+/mcp\\n$`)) });

		const exported = JSON.parse((await hangar('export', name)).stdout) as Record<string, unknown>;
		expect(exported).toMatchObject({
			name,
			image: EVERYTHING,
			cmd_args: ['stdio'],
			env_vars: { GREETING: 'hi' },
			container_labels: { team: 'tools' },
			tools_filter: ['echo', 'get-env'],
			oidc_config: { issuer: 'https://issuer.example', audience: 'hangar', clientID: 'cli', jwksurl: 'https://issuer.example/jwks' },
			authz_config_path: authz,
			trust_proxy_headers: true,
		});
		expect(JSON.parse((await hangar('info', name, '--json')).stdout)).toMatchObject({ restart_policy: 'always', request_timeout: 30, status: 'running' });
	});

	it('runs a remote URL, naming it after the host when --name is absent', async () => {
		const run = await hangar('run', remote.url, '--json');
		expect(run.code).toBe(0);
		const result = JSON.parse(run.stdout) as { name: string; port: number; url: string; status: string };
		const port = new URL(remote.url).port;
		expect(result).toMatchObject({ name: `127.0.0.1-${port}`, status: 'running', url: `http://127.0.0.1:${result.port}/api/mcp` });
		const client = await connect(result.url, 'streamable-http');
		try {
			expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'cli' } }))).toBe('remote echo: cli');
		} finally {
			await client.close();
		}
	});

	it('lists as a table and as JSON, and shows one workload', async () => {
		const table = await hangar('ls');
		expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+PACKAGE\s+STATUS\s+PORT\s+URL\s+GROUP\s+AGE\s+REASON$/);
		const json = JSON.parse((await hangar('ls', '--json', '--group', 'default')).stdout) as Array<{ name: string; port: number; status_context: string; created_at: string }>;
		const listed = json.find((workload) => workload.name === name)!;
		expect(listed).toMatchObject({ port: expect.any(Number), status_context: expect.any(String), created_at: expect.any(String) });
		expect(table.stdout).toMatch(new RegExp(`^${name}\\s+${EVERYTHING}\\s+running\\s+${listed.port}\\s+http://\\S+\\s+default\\s+\\d+[smhd]\\s+-$`, 'm'));
		const info = await hangar('info', name);
		expect(info.stdout).toMatch(/^status:\s+running$/m);
		expect(info.stdout).toMatch(/^tools:\s+echo, get-env$/m);
		// Network isolation is on by default, but with no permission profile nothing limits the container.
		expect(JSON.parse((await hangar('info', name, '--json')).stdout)).toMatchObject({ network_isolation: true, network: expect.stringMatching(/^open: /) });
		expect(info.stdout).toMatch(/^network:\s+open: the container reaches any address \(no permission profile/m);
	});

	it('edits a workload, which keeps its port', async () => {
		const before = JSON.parse((await hangar('info', name, '--json')).stdout) as { proxy_port: number };
		const edit = await hangar('edit', name, '-e', 'MORE=yes');
		expect(edit).toMatchObject({ code: 0, stdout: expect.stringContaining(`Workload ${name} updated; it is running`) });
		const after = JSON.parse((await hangar('export', name)).stdout) as { port: number; env_vars: Record<string, string>; oidc_config: unknown };
		expect(after.port).toBe(before.proxy_port);
		expect(after.env_vars).toEqual({ GREETING: 'hi', MORE: 'yes' });
		expect(after.oidc_config).toMatchObject({ issuer: 'https://issuer.example' });
	});

	it('prints the server\'s output and the proxy\'s log', async () => {
		expect((await hangar('logs', name)).stdout).toContain('Starting default (STDIO) server');
		expect((await hangar('logs', name, '--proxy')).stdout).toMatch(/proxy for .* listening on http:\/\/127\.0\.0\.1:\d+/);
	});

	it('stops, restarts and deletes, waiting for the outcome', async () => {
		const name = uniqueName('cli-rm');
		expect((await hangar('run', EVERYTHING, '--name', name, '--transport', 'stdio', '--', 'stdio')).code).toBe(0);
		expect(await hangar('stop', name)).toMatchObject({ code: 0, stdout: `${name}: stopped\n` });
		expect((await hangar('ls')).stdout).not.toContain(name);
		expect((await hangar('ls', '--all')).stdout).toMatch(new RegExp(`^${name}\\s+\\S+\\s+stopped`, 'm'));
		expect(await hangar('restart', name)).toMatchObject({ code: 0, stdout: `${name}: running\n` });
		expect(await hangar('rm', name)).toMatchObject({ code: 0, stdout: `${name}: gone\n` });
		expect(JSON.parse((await hangar('ls', '--all', '--json')).stdout).map((workload: { name: string }) => workload.name)).not.toContain(name);
	});

	it('fails with one line and a hint', async () => {
		const invalid = await hangar('run', EVERYTHING, '--name', uniqueName('bad'), '--transport', 'telegraph');
		expect(invalid.code).toBe(2);
		expect(invalid.stderr).toMatch(/^hangar: invalid transport: "telegraph" is not a transport \(valid transports: stdio, sse, streamable-http\)\n$/m);
		const notAServer = await hangar('run', 'notaserver', '--name', uniqueName('notaserver'));
		expect(notAServer.code).toBe(1);
		expect(notAServer.stderr).toContain('hangar: notaserver is not a server in the registry (hangar registry servers lists them), and as an image:');
		expect(notAServer.stderr.match(/pulling notaserver/g)).toHaveLength(1);
		const unknown = await hangar('rm', 'no-such-workload');
		expect(unknown).toMatchObject({ code: 1, stderr: 'hangar: workload no-such-workload not found (hangar ls --all lists them)\n' });
		const nothing = await hangar('stop');
		expect(nothing.code).toBe(2);
		expect(nothing.stderr).toContain('--group');
	});
});

describe('hangar run without --transport', { timeout: 180_000 }, () => {
	it('finds that a stdio image serves stdio (the image has no label: a probe)', async () => {
		const name = uniqueName('found');
		const run = await hangar('run', MEMORY, '--name', name);
		expect(run).toMatchObject({ code: 0, stdout: expect.stringContaining(`Workload ${name} is running`) });
		expect(run.stderr).toContain('transport stdio, found by a probe');
		expect(JSON.parse((await hangar('info', name, '--json')).stdout)).toMatchObject({ transport: 'stdio' });
		expect(await hangar('rm', name)).toMatchObject({ code: 0 });
	});

	it('says why a server did not start once, and leaves no lock folder behind', async () => {
		const name = uniqueName('wrong');
		const run = await hangar('run', MEMORY, '--name', name, '--transport', 'streamable-http');
		expect(run.code).toBe(1);
		expect(run.stderr.match(/run it with transport stdio/g)).toHaveLength(1);
		expect(await hangar('rm', name)).toMatchObject({ code: 0 });
		const left = (await readdir(join(home.path, 'data', 'proxies')).catch(() => [])).filter((entry) => entry.includes(name));
		expect(left).toEqual([]);
	});
});

describe('the network isolation hangar info reports', () => {
	const detail = (fields: Partial<WorkloadDetail>) => ({ name: 'w', image: EVERYTHING, url: '', network_isolation: true, ...fields }) as WorkloadDetail;

	it('is the isolation in force, not the flag', () => {
		expect(networkOf(detail({}))).toMatch(/^open: .*no permission profile/);
		expect(networkOf(detail({ network_isolation: false, permission_profile: { network: { outbound: { allow_host: ['example.com'] } } } }))).toMatch(/^open: .*isolation is off/);
		expect(networkOf(detail({ permission_profile: { network: { outbound: { insecure_allow_all: true } } } }))).toMatch(/^open: .*allows all/);
		expect(networkOf(detail({ permission_profile: { network: { outbound: { allow_host: ['example.com'], allow_port: [443] } } } }))).toBe('isolated: outbound only to example.com on ports 443');
		expect(networkOf(detail({ permission_profile: { network: { mode: 'none' } } }))).toMatch(/^none/);
		expect(networkOf(detail({ url: 'https://mcp.example.com/mcp', image: '' }))).toMatch(/^remote/);
	});
});
