/**
 * Per-project client configuration through the real doors: a spawned `hangar daemon` with one
 * running workload (a remote MCP server behind its proxy, no container), `hangar serve` for the
 * REST refusals and the `hangar client` CLI. Each client's project file is read back as that
 * client's documentation describes it: its path under the project, its servers key and the
 * entry it reads for a Streamable HTTP server. Written out here, apart from server/clients/table.ts.
 */
import { mkdir, mkdtemp, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientApp } from '../protocol/common.js';
import { ListClients, RegisterClient, UnregisterClient } from '../protocol/protocol.clients.js';
import { CreateWorkload, DeleteWorkload, ListWorkloads } from '../protocol/protocol.workloads.js';
import { startRemoteServer, uniqueName, waitFor, type RemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar, spawnDaemon, startServe, type DaemonProcess, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';

interface ProjectFacts {
	/** The file under the project root (the client's docs). */
	readonly file: string;
	/** `strict-json`: a client that parses plain JSON (no comments, no trailing commas). */
	readonly format: 'json' | 'strict-json' | 'toml';
	/** The key holding the servers: by name, or (`list`) a list of entries that carry their `name`. */
	readonly key: string;
	readonly list?: boolean;
	/** The entry the client reads for a Streamable HTTP server at `url`. */
	entry(url: string): Record<string, unknown>;
}

const PROJECT_FACTS: Readonly<Partial<Record<ClientApp, ProjectFacts>>> = {
	// code.claude.com/docs/en/mcp: project scope, `.mcp.json` at the root, `{"type": "http", "url"}`.
	'claude-code': { file: '.mcp.json', format: 'json', key: 'mcpServers', entry: (url) => ({ type: 'http', url }) },
	// cursor.com/docs/mcp: `.cursor/mcp.json` in the project, `url` for a remote server.
	cursor: { file: '.cursor/mcp.json', format: 'json', key: 'mcpServers', entry: (url) => ({ url, type: 'http' }) },
	// geminicli.com/docs: `.gemini/settings.json` in the project; `httpUrl` is Streamable HTTP.
	'gemini-cli': { file: '.gemini/settings.json', format: 'json', key: 'mcpServers', entry: (httpUrl) => ({ httpUrl }) },
	// docs.roocode.com: project-level `.roo/mcp.json`, `type` and `url`.
	'roo-code': { file: '.roo/mcp.json', format: 'json', key: 'mcpServers', entry: (url) => ({ url, type: 'streamable-http' }) },
	// kiro.dev/docs/mcp/configuration: workspace `.kiro/settings/mcp.json`, `url` for a remote server.
	kiro: { file: '.kiro/settings/mcp.json', format: 'json', key: 'mcpServers', entry: (url) => ({ url }) },
	// Zed's project settings `.zed/settings.json`, `context_servers` with a `url`.
	zed: { file: '.zed/settings.json', format: 'json', key: 'context_servers', entry: (url) => ({ url }) },
	// Codex: `.codex/config.toml` of a trusted project, `[mcp_servers.<name>] url = …`.
	codex: { file: '.codex/config.toml', format: 'toml', key: 'mcp_servers', entry: (url) => ({ url }) },
	// opencode.ai/docs/config: `opencode.json` at the project root, `mcp` entries `{"type": "remote", "url"}`.
	opencode: { file: 'opencode.json', format: 'json', key: 'mcp', entry: (url) => ({ type: 'remote', url }) },
	// docs.aws.amazon.com/amazonq (Amazon Q Developer CLI, "MCP configuration" and "Remote MCP servers"): workspace
	// `.amazonq/mcp.json`, `mcpServers` entries `{"type": "http", "url"}`; read with serde_json, so strict JSON.
	'amazon-q': { file: '.amazonq/mcp.json', format: 'strict-json', key: 'mcpServers', entry: (url) => ({ type: 'http', url }) },
	// VS Code: the workspace's `.vscode/mcp.json`, `servers`.
	vscode: { file: '.vscode/mcp.json', format: 'json', key: 'servers', entry: (url) => ({ url, type: 'http' }) },
	// docs.trae.ai (MCP, "project MCP"): `.trae/mcp.json` in the project, `mcpServers` entries with a `url` for a remote server.
	trae: { file: '.trae/mcp.json', format: 'json', key: 'mcpServers', entry: (url) => ({ url }) },
	// docs.mistral.ai/mistral-vibe (configuration: `./.vibe/config.toml` first, then `~/.vibe/config.toml`; MCP servers):
	// `[[mcp_servers]]` tables with `name`, `transport = "streamable-http"` and `url`.
	'mistral-vibe': { file: '.vibe/config.toml', format: 'toml', key: 'mcp_servers', list: true, entry: (url) => ({ url, transport: 'streamable-http' }) },
};

let state: TestHome;
let env: NodeJS.ProcessEnv;
let daemon: DaemonProcess;
let serve: ServeProcess;
let remote: RemoteServer;
let workload: { name: string; url: string };

beforeAll(async () => {
	state = await createTestHome('hangar-clients-projects-');
	const home = join(state.path, 'home');
	await mkdir(home);
	env = { ...state.env, HOME: home };
	daemon = spawnDaemon(env);
	await daemon.client.initialize('clients-projects-test');
	[serve, remote] = await Promise.all([startServe(env), startRemoteServer('streamable')]);
	const name = uniqueName('project-remote');
	await daemon.client.request(CreateWorkload, { name, url: remote.url });
	const url = await waitFor(async () => {
		const listed = (await daemon.client.request(ListWorkloads, {})).workloads.find((item) => item.name === name);
		return listed?.status === 'running' && listed.url;
	}, `${name} running`);
	workload = { name, url };
}, 60_000);
afterAll(async () => {
	if (workload) await daemon.client.request(DeleteWorkload, { name: workload.name }).catch(() => undefined);
	await Promise.all([daemon?.stop(), serve?.stop()]);
	remote?.stop();
	await state?.dispose();
});

const newProject = () => mkdtemp(join(state.path, 'project-'));
const hangar = (...args: string[]) => runHangar(args, env);

/** The servers `facts.key` lists in the project's file, parsed as the client parses it. */
async function serversIn(root: string, facts: ProjectFacts): Promise<Record<string, Record<string, unknown>>> {
	const text = await readFile(join(root, facts.file), 'utf8');
	const document = (
		facts.format === 'toml' ? parseToml(text) : facts.format === 'strict-json' ? JSON.parse(text) : parseJsonc(text, [], { allowTrailingComma: true })
	) as Record<string, unknown>;
	if (!facts.list) return (document[facts.key] ?? {}) as Record<string, Record<string, unknown>>;
	const entries = (document[facts.key] ?? []) as Array<{ name: string } & Record<string, unknown>>;
	return Object.fromEntries(entries.map(({ name, ...entry }) => [name, entry]));
}

describe('a project file for every client whose documentation names one', () => {
	it.each(Object.entries(PROJECT_FACTS).map(([client, facts]) => ({ client: client as ClientApp, facts: facts! })))(
		'$client: written at its path with its entry shape, and emptied when unregistered',
		async ({ client, facts }) => {
			const project = await newProject();
			expect(await daemon.client.request(RegisterClient, { name: client, project_root: project })).toEqual({
				name: client,
				groups: ['default'],
				project_root: project,
			});
			expect(await serversIn(project, facts)).toEqual({ [workload.name]: facts.entry(workload.url) });
			expect(await daemon.client.request(ListClients, {})).toContainEqual({ name: client, groups: ['default'], project_root: project });

			await daemon.client.request(UnregisterClient, { name: client, project_root: project });
			expect(await serversIn(project, facts)).toEqual({});
			expect((await daemon.client.request(ListClients, {})).filter((item) => item.project_root === project)).toEqual([]);
		},
	);

	it("keeps the user's comments and other settings, and leaves the file byte-for-byte as it was after", async () => {
		const project = await newProject();
		const seed = `{
  // the team's Gemini settings
  "theme": "GitHub",
  "mcpServers": {
    "mine": { "command": "npx", "args": ["-y", "my-server"] } // our own server
  },
  "contextFileName": "AGENTS.md"
}
`;
		await mkdir(join(project, '.gemini'));
		await writeFile(join(project, '.gemini', 'settings.json'), seed);
		await daemon.client.request(RegisterClient, { name: 'gemini-cli', project_root: project });
		const text = await readFile(join(project, '.gemini', 'settings.json'), 'utf8');
		expect(text).toContain("// the team's Gemini settings");
		expect(text).toContain('// our own server');
		expect(parseJsonc(text)).toEqual({
			theme: 'GitHub',
			mcpServers: { mine: { command: 'npx', args: ['-y', 'my-server'] }, [workload.name]: { httpUrl: workload.url } },
			contextFileName: 'AGENTS.md',
		});
		await daemon.client.request(UnregisterClient, { name: 'gemini-cli', project_root: project });
		expect(await readFile(join(project, '.gemini', 'settings.json'), 'utf8')).toBe(seed);
	});

	it("mistral-vibe: the project's own settings, servers and comments kept, and the file as it was after", async () => {
		const project = await newProject();
		const seed = `# the team's Vibe settings
active_model = "devstral"

[[mcp_servers]]
name = "mine" # our own server
transport = "stdio"
command = "my-server"
`;
		await mkdir(join(project, '.vibe'));
		await writeFile(join(project, '.vibe', 'config.toml'), seed);
		await daemon.client.request(RegisterClient, { name: 'mistral-vibe', project_root: project });
		const text = await readFile(join(project, '.vibe', 'config.toml'), 'utf8');
		expect(text.startsWith(seed)).toBe(true);
		expect(parseToml(text)).toEqual({
			active_model: 'devstral',
			mcp_servers: [
				{ name: 'mine', transport: 'stdio', command: 'my-server' },
				{ name: workload.name, url: workload.url, transport: 'streamable-http' },
			],
		});
		await daemon.client.request(UnregisterClient, { name: 'mistral-vibe', project_root: project });
		expect(await readFile(join(project, '.vibe', 'config.toml'), 'utf8')).toBe(seed);
	});

	it('refuses a client folder that is a symlink out of the project: 400 naming project_root, nothing written', async () => {
		const project = await newProject();
		const elsewhere = await mkdtemp(join(state.path, 'elsewhere-'));
		await symlink(elsewhere, join(project, '.cursor'));
		const response = await callRest(serve.url, RegisterClient, { name: 'cursor', project_root: project });
		expect(response.status).toBe(400);
		expect((response.body as { message: string }).message).toMatch(/^invalid project_root: .*\.cursor.* outside the project/);
		await expect(stat(join(elsewhere, 'mcp.json'))).rejects.toThrow();
		expect((await daemon.client.request(ListClients, {})).filter((item) => item.project_root === project)).toEqual([]);
	});

	it('a client without a project file is a 400 naming project_root and listing the clients that have one', async () => {
		const project = await newProject();
		const response = await callRest(serve.url, RegisterClient, { name: 'windsurf', project_root: project });
		expect(response.status).toBe(400);
		expect((response.body as { message: string }).message).toMatch(
			/^invalid project_root: windsurf has no per-project configuration file \(clients with one: amazon-q, claude-code, codex, continue, cursor, .*trae, vscode.*\)$/,
		);
	});
});

describe("continue: a block file of the project's .continue/mcpServers/ per workload", () => {
	// docs.continue.dev (MCP deep dive): every YAML file of the workspace's `.continue/mcpServers/` is a block,
	// with `name`, `version` and `schema`, and one server in `mcpServers` (its block schema: exactly one).
	const folder = (project: string) => join(project, '.continue', 'mcpServers');
	const hangarFile = (project: string) => join(folder(project), `hangar-${workload.name}.yaml`);

	it("is written as Hangar's own file, beside the user's block files left as they are, and removed when unregistered", async () => {
		const project = await newProject();
		await mkdir(folder(project), { recursive: true });
		const theirs = '# our database\nname: Database\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: db\n    command: db-mcp\n';
		await writeFile(join(folder(project), 'database.yaml'), theirs);

		await daemon.client.request(RegisterClient, { name: 'continue', project_root: project });
		expect(parseYaml(await readFile(hangarFile(project), 'utf8'))).toEqual({
			name: workload.name,
			version: '0.0.1',
			schema: 'v1',
			mcpServers: [{ name: workload.name, url: workload.url, type: 'streamable-http' }],
		});
		expect(await readFile(join(folder(project), 'database.yaml'), 'utf8')).toBe(theirs);
		expect((await hangar('client', 'ls', '--project', project)).stdout).toMatch(/^continue\s+\.continue\/mcpServers\/hangar-\*\.yaml\s+yes\s+default$/m);

		await daemon.client.request(UnregisterClient, { name: 'continue', project_root: project });
		await expect(stat(hangarFile(project))).rejects.toThrow();
		expect(await readdir(folder(project))).toEqual(['database.yaml']);
	});

	it('refuses a .continue/mcpServers that is a symlink out of the project: 400 naming project_root, nothing written', async () => {
		const project = await newProject();
		const elsewhere = await mkdtemp(join(state.path, 'elsewhere-'));
		await mkdir(join(project, '.continue'));
		await symlink(elsewhere, folder(project));
		const response = await callRest(serve.url, RegisterClient, { name: 'continue', project_root: project });
		expect(response.status).toBe(400);
		expect((response.body as { message: string }).message).toMatch(/^invalid project_root: .*mcpServers.* outside the project/);
		expect(await readdir(elsewhere)).toEqual([]);
	});
});

describe('hangar client … --project', () => {
	it('registers several clients into a project, lists them with ls --project, unregisters one', async () => {
		const project = await newProject();
		expect(await hangar('client', 'register', 'claude-code', 'cursor', '--project', project)).toMatchObject({
			code: 0,
			stdout: `Registered claude-code, cursor in group default for project ${project}.\n`,
		});
		expect(await serversIn(project, PROJECT_FACTS['claude-code']!)).toEqual({ [workload.name]: { type: 'http', url: workload.url } });
		expect(await serversIn(project, PROJECT_FACTS.cursor!)).toEqual({ [workload.name]: { url: workload.url, type: 'http' } });

		const table = (await hangar('client', 'ls', '--project', project)).stdout;
		expect(table.split('\n')[0]).toMatch(/^NAME\s+FILE\s+REGISTERED\s+GROUPS$/);
		expect(table).toMatch(/^claude-code\s+\.mcp\.json\s+yes\s+default$/m);
		expect(table).toMatch(/^cursor\s+\.cursor\/mcp\.json\s+yes\s+default$/m);
		expect(table).toMatch(/^kiro\s+\.kiro\/settings\/mcp\.json\s+no\s+-$/m);
		expect(table).not.toMatch(/^windsurf/m);

		expect((await hangar('client', 'unregister', 'cursor', '--project', project)).code).toBe(0);
		const listed = JSON.parse((await hangar('client', 'ls', '--project', project, '--json')).stdout) as {
			clients: Array<{ name: string; registered: boolean }>;
		};
		expect(listed.clients.filter((row) => row.registered).map((row) => row.name)).toEqual(['claude-code']);
		expect(await serversIn(project, PROJECT_FACTS.cursor!)).toEqual({});
		await hangar('client', 'unregister', 'claude-code', '--project', project);
	});

	it('--project with a client that has no project file names --project', async () => {
		const project = await newProject();
		const result = await hangar('client', 'register', 'cursor', 'windsurf', '--project', project);
		expect(result.code).not.toBe(0);
		expect(result.stderr).toMatch(/invalid --project: windsurf has no per-project configuration file \(clients with one: /);
		expect((await daemon.client.request(ListClients, {})).filter((item) => item.project_root === project)).toEqual([]);
	});
});
