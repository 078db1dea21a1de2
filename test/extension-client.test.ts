/**
 * The VS Code extension's client of `hangar daemon` (extension/src/daemon.ts) against real
 * daemons: the built CLI, and the daemon bundled into the extension. Start, requests, crash
 * and restart with back-off, giving up, a clean shutdown, and the progress and notifications
 * of a skill install from a real OCI registry.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, win32 } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
	daemonCommand,
	DaemonSupervisor,
	restartDelay,
	type BackOffOptions,
	type DaemonCommand,
	type DaemonState,
	type WorkDoneProgressValue,
} from '../extension/src/daemon.js';
import {
	CreateGroup,
	HangarError,
	InstallSkill,
	ListCatalogServers,
	ListCatalogSkills,
	ListGroups,
	operations,
	SkillsDidChange,
	UninstallSkill,
} from '../protocol/index.js';
import { embeddedRegistry } from './fixtures/registry/upstream.js';
import { startRemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { connectLegacy } from './support/mcpClients.js';
import { HANGAR_BIN } from './support/processes.js';
import { publishSkill } from './support/publish.js';
import { startRegistry, type Registry } from './support/registry.js';
import { skillMd } from './support/skills.js';

/** Where the bundled daemon would be; tests that run a configured daemon never use it. */
const UNUSED_BUNDLE = '/nonexistent/extension/dist/hangar.mjs';
const FAST: BackOffOptions = { initialMs: 20, maxMs: 200, maxRestarts: 3, stableMs: 60_000 };

let home: TestHome;
let supervisor: DaemonSupervisor;
let log: string[];
let states: DaemonState[];

function supervise(command = daemonCommand(HANGAR_BIN, UNUSED_BUNDLE, process.execPath, home.env), backOff = FAST): DaemonSupervisor {
	log = [];
	states = [];
	supervisor = new DaemonSupervisor({ command: () => command, clientName: 'extension-test', log: (line) => log.push(line), backOff, timeoutMs: 10_000 });
	supervisor.onDidChangeState((state) => states.push(state));
	return supervisor;
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!condition()) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; log:\n${log.join('\n')}`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

function exitOf(pid: number): Promise<void> {
	return until(() => {
		try {
			process.kill(pid, 0);
			return false;
		} catch {
			return true;
		}
	}, `process ${pid} to exit`);
}

beforeEach(async () => {
	home = await createTestHome();
});

afterEach(async () => {
	await supervisor?.dispose();
	await home.dispose();
});

describe('daemonCommand', () => {
	it('runs the bundled daemon on the editor’s own runtime, as Node', () => {
		const command = daemonCommand('', '/ext/dist/hangar.mjs', '/opt/editor/code', { PATH: '/bin' });
		expect(command).toEqual({ command: '/opt/editor/code', args: ['/ext/dist/hangar.mjs', 'daemon'], env: { PATH: '/bin', ELECTRON_RUN_AS_NODE: '1' } });
	});

	it('runs a configured script on that runtime and a configured executable directly', () => {
		expect(daemonCommand(' /src/hangar/dist/server/cli/hangar.cjs ', '/b.mjs', '/node', {}).args).toEqual(['/src/hangar/dist/server/cli/hangar.cjs', 'daemon']);
		expect(daemonCommand('/usr/local/bin/hangar', '/b.mjs', '/node', { A: '1' })).toEqual({ command: '/usr/local/bin/hangar', args: ['daemon'], env: { A: '1' } });
		expect(daemonCommand('~/bin/hangar', '/b.mjs', '/node', {}).command).not.toContain('~');
	});

	it('on Windows, runs the script behind npm\'s hangar.cmd on that runtime (a .cmd cannot be spawned without a shell)', async () => {
		const folder = await mkdtemp(join(tmpdir(), 'hangar-shim-'));
		// What `npm install -g` writes (npm's cmd-shim), for a package whose bin is dist/server/cli/hangar.cjs.
		const shim = [
			'@ECHO off', 'GOTO start', ':find_dp0', 'SET dp0=%~dp0', 'EXIT /b', ':start', 'SETLOCAL', 'CALL :find_dp0', '',
			'IF EXIST "%dp0%\\node.exe" (', '  SET "_prog=%dp0%\\node.exe"', ') ELSE (', '  SET "_prog=node"', '  SET PATHEXT=%PATHEXT:;.JS;=;%', ')', '',
			'endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%"  "%dp0%\\node_modules\\hangar\\dist\\server\\cli\\hangar.cjs" %*',
		].join('\r\n');
		await writeFile(join(folder, 'hangar.cmd'), shim);
		await writeFile(join(folder, 'other.bat'), '@echo off\r\nhangar %*\r\n');
		try {
			expect(daemonCommand(join(folder, 'hangar.cmd'), '/b.mjs', 'C:\\Code\\Code.exe', {}, 'win32')).toEqual({
				command: 'C:\\Code\\Code.exe',
				args: [win32.join(folder, 'node_modules\\hangar\\dist\\server\\cli\\hangar.cjs'), 'daemon'],
				env: { ELECTRON_RUN_AS_NODE: '1' },
			});
			expect(daemonCommand(join(folder, 'other.bat'), '/b.mjs', 'Code.exe', { ComSpec: 'C:\\Windows\\system32\\cmd.exe' }, 'win32')).toMatchObject({
				command: 'C:\\Windows\\system32\\cmd.exe',
				args: ['/d', '/c', join(folder, 'other.bat'), 'daemon'],
			});
			// Elsewhere a .cmd is just a file name.
			expect(daemonCommand(join(folder, 'hangar.cmd'), '/b.mjs', '/node', {}, 'linux').command).toBe(join(folder, 'hangar.cmd'));
		} finally {
			await rm(folder, { recursive: true, force: true });
		}
	});

	it('doubles the restart delay up to its cap', () => {
		expect([0, 1, 2, 3, 4].map((attempt) => restartDelay(attempt, FAST))).toEqual([20, 40, 80, 160, 200]);
	});
});

describe('a running daemon', () => {
	it('starts on the first request, answers it, and reports the table it serves', async () => {
		supervise();
		expect(supervisor.state).toBe('stopped');
		await supervisor.request(CreateGroup, { name: 'from-editor' });
		const { groups } = await supervisor.request(ListGroups, {});
		expect(groups.map((group) => group.name).sort()).toEqual(['default', 'from-editor']);
		expect((await supervisor.info()).capabilities.methods.sort()).toEqual(operations.map((row) => row.method).sort());
		expect(states).toEqual(['starting', 'running']);
	});

	it('turns service errors into HangarError with the status and code', async () => {
		supervise();
		await supervisor.request(CreateGroup, { name: 'twice' });
		const error = await supervisor.request(CreateGroup, { name: 'twice' }).catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(HangarError);
		expect(error).toMatchObject({ status: 409 });
	});

	it('logs the daemon it starts, line by line what the process writes to stderr, and how it ended', async () => {
		supervise({ command: process.execPath, args: ['-e', 'process.stderr.write("first line\\nsecond "); setTimeout(() => { process.stderr.write("line\\n"); process.exit(3); }, 50)'], env: home.env }, { ...FAST, maxRestarts: 0 });
		await supervisor.request(ListGroups, {}).catch(() => undefined);
		await until(() => supervisor.state === 'failed', 'the supervisor to give up');
		expect(log.slice(0, 4)).toEqual([expect.stringMatching(/^starting .+ -e /), 'first line', 'second line', 'daemon exited with code 3']);
	});

	it('logs the version and pid of a daemon that is ready', async () => {
		supervise();
		await supervisor.request(ListGroups, {});
		expect(log).toContain(`daemon hangar ${(await supervisor.info()).serverInfo.version} ready (pid ${supervisor.pid})`);
	});

	it('shuts the daemon down with shutdown and exit on dispose, without restarting it', async () => {
		supervise();
		await supervisor.request(ListGroups, {});
		const pid = supervisor.pid!;
		await supervisor.dispose();
		await exitOf(pid);
		expect(log.at(-1)).toBe('daemon exited with code 0');
		expect(supervisor.state).toBe('stopped');
		await expect(supervisor.request(ListGroups, {})).rejects.toMatchObject({ status: 503 });
	});
});

describe('crashes', () => {
	it('restarts a daemon that died, and requests work again', async () => {
		supervise();
		await supervisor.request(CreateGroup, { name: 'survives' });
		const first = supervisor.pid!;
		process.kill(first, 'SIGKILL');
		await until(() => supervisor.state === 'running' && supervisor.pid !== undefined && supervisor.pid !== first, 'a new daemon');
		expect(log).toContain('daemon exited with SIGKILL');
		expect(log).toContain('restarting the daemon in 20 ms');
		const { groups } = await supervisor.request(ListGroups, {});
		expect(groups.map((group) => group.name)).toContain('survives');
	});

	it('fails a request in flight with a 503 when the daemon dies under it', async () => {
		supervise();
		await supervisor.request(ListGroups, {});
		const pid = supervisor.pid!;
		process.kill(pid, 'SIGSTOP'); // the request below stays unanswered
		const pending = supervisor.request(ListGroups, {});
		await new Promise((resolve) => setTimeout(resolve, 100));
		process.kill(pid, 'SIGKILL');
		await expect(pending).rejects.toMatchObject({ status: 503, code: 'daemon_stopped' });
	});

	it('backs off between restarts and gives up after crashes in a row, until restarted', async () => {
		supervise({ command: process.execPath, args: ['-e', 'process.exit(3)'], env: home.env });
		await expect(supervisor.request(ListGroups, {})).rejects.toMatchObject({ status: 503, code: 'daemon_failed' });
		await until(() => supervisor.state === 'failed', 'the supervisor to give up');
		expect(log.filter((line) => line.startsWith('restarting the daemon in'))).toEqual([
			'restarting the daemon in 20 ms',
			'restarting the daemon in 40 ms',
			'restarting the daemon in 80 ms',
		]);
		expect(log.at(-1)).toMatch(/giving up after 3 restarts/);
		await expect(supervisor.request(ListGroups, {})).rejects.toMatchObject({ status: 503, code: 'daemon_failed' });
	});

	it('says why a daemon that cannot be run does not start', async () => {
		supervise(daemonCommand('/nonexistent/hangar', UNUSED_BUNDLE, process.execPath, home.env));
		await expect(supervisor.request(ListGroups, {})).rejects.toMatchObject({ status: 503 });
		expect(log.some((line) => line.includes('could not run /nonexistent/hangar') && line.includes('ENOENT'))).toBe(true);
	});

	it('restart() brings back a supervisor that gave up, with the command read afresh', async () => {
		let command: DaemonCommand = { command: process.execPath, args: ['-e', 'process.exit(3)'], env: home.env };
		log = [];
		supervisor = new DaemonSupervisor({ command: () => command, clientName: 'extension-test', log: (line) => log.push(line), backOff: FAST });
		await supervisor.request(ListGroups, {}).catch(() => undefined);
		await until(() => supervisor.state === 'failed', 'the supervisor to give up');
		command = daemonCommand(HANGAR_BIN, UNUSED_BUNDLE, process.execPath, home.env);
		await supervisor.restart();
		expect(supervisor.state).toBe('running');
		expect((await supervisor.request(ListGroups, {})).groups).toHaveLength(1);
	});
});

describe('long work and notifications', () => {
	let registry: Registry;
	let published: string;
	let reference: string;
	let project: string;

	beforeAll(async () => {
		registry = await startRegistry();
		published = await mkdtemp(join(tmpdir(), 'hangar-published-'));
		reference = await publishSkill(registry, published, 'client-skill');
	}, 120_000);

	afterAll(async () => {
		await registry?.stop();
		await rm(published, { recursive: true, force: true });
	});

	beforeEach(async () => {
		project = join(home.path, 'project');
		await promisify(execFile)('git', ['init', '-q', project]);
	});

	it('hands the $/progress reports of a request to its onProgress, from begin to end', async () => {
		supervise();
		const values: WorkDoneProgressValue[] = [];
		const { skill } = await supervisor.request(
			InstallSkill,
			{ name: reference, project_root: project, clients: ['claude-code'] },
			{ onProgress: (value) => values.push(value) },
		);
		expect(skill.status).toBe('installed');
		expect(values[0]).toMatchObject({ kind: 'begin' });
		expect(values.at(-1)).toMatchObject({ kind: 'end' });
		expect(values.filter((value) => value.kind === 'report').length).toBeGreaterThan(0);
	});

	it('delivers notifications from every daemon it runs, restarts included', async () => {
		supervise();
		const changes: unknown[] = [];
		supervisor.onNotification(SkillsDidChange, (params) => changes.push(params));
		await supervisor.request(InstallSkill, { name: reference, project_root: project, clients: ['claude-code'] });
		await until(() => changes.length === 1, 'the install notification');

		const first = supervisor.pid!;
		process.kill(first, 'SIGKILL');
		await until(() => supervisor.state === 'running' && supervisor.pid !== first, 'a new daemon');
		await supervisor.request(UninstallSkill, { name: 'client-skill', project_root: project });
		await until(() => changes.length === 2, 'the uninstall notification');
		expect(changes).toEqual([
			{ name: 'client-skill', scope: 'project', project_root: project, change: 'installed' },
			{ name: 'client-skill', scope: 'project', project_root: project, change: 'uninstalled' },
		]);
	});
});

describe('the daemon bundled into the extension', () => {
	let bundleDir: string;
	let registry: Registry;
	let reference: string;

	beforeAll(async () => {
		// Built into a folder of the test's own, so packaging the extension meanwhile cannot race it.
		bundleDir = await mkdtemp(join(tmpdir(), 'hangar-bundle-'));
		await promisify(execFile)(process.execPath, [fileURLToPath(new URL('../extension/esbuild.mjs', import.meta.url)), '--outdir', bundleDir]);
		registry = await startRegistry();
		reference = await publishSkill(registry, bundleDir, 'bundled-skill');
	}, 120_000);

	afterAll(async () => {
		await registry?.stop();
		await rm(bundleDir, { recursive: true, force: true });
	});

	it('serves the whole table, with the version of the package', async () => {
		supervise(daemonCommand('', join(bundleDir, 'hangar.mjs'), process.execPath, home.env));
		const info = await supervisor.info();
		expect(info.capabilities.methods.sort()).toEqual(operations.map((row) => row.method).sort());
		const { version } = (await import('../package.json', { with: { type: 'json' } })).default;
		expect(info.serverInfo.version).toBe(version);
		await supervisor.request(CreateGroup, { name: 'bundled' });
		expect((await supervisor.request(ListGroups, {})).groups.map((group) => group.name)).toContain('bundled');
	});

	it('searches the built-in catalog, shipped beside the bundle', async () => {
		supervise(daemonCommand('', join(bundleDir, 'hangar.mjs'), process.execPath, home.env));
		const shipped = embeddedRegistry().data;
		const { servers, metadata } = await supervisor.request(ListCatalogServers, { registryName: 'default', limit: 200 });
		expect(metadata.total).toBe(shipped.servers.length);
		expect(servers.map((server) => server.name).sort()).toEqual(shipped.servers.map((server) => server.name).sort());
		const { skills } = await supervisor.request(ListCatalogSkills, { registryName: 'default', limit: 200 });
		expect(skills.map((skill) => skill.name).sort()).toEqual(shipped.skills.map((skill) => skill.name).sort());
	});

	it("starts workloads' proxies from the bundle: Cedar authorization, telemetry's sender and a code-mode aggregate's sandbox stripping TypeScript (both worker threads)", async () => {
		const bundled = (...args: string[]) => promisify(execFile)(process.execPath, [join(bundleDir, 'hangar.mjs'), ...args], { env: home.env });
		const remote = await startRemoteServer('streamable');
		// A collector that takes every export: telemetry's sender runs in a worker thread too.
		const exports: string[] = [];
		const collector = createServer((request, response) => {
			exports.push(request.url ?? '');
			request.resume().on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
		});
		await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
		const clients: Client[] = [];
		try {
			const policies = join(bundleDir, 'authz.json');
			await writeFile(policies, JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies: ['permit(principal, action == Action::"call_tool", resource == Tool::"echo");'], entities_json: '[]' } }));
			await bundled('group', 'create', 'bundled-team');
			const guarded = JSON.parse((await bundled('run', remote.url, '--name', 'bundled-remote', '--group', 'bundled-team', '--authz-config', policies, '--otel-endpoint', `http://127.0.0.1:${(collector.address() as AddressInfo).port}`, '--otel-sampling-rate', '1', '--json')).stdout) as { url: string };
			const aggregation = join(bundleDir, 'aggregation.json');
			await writeFile(aggregation, JSON.stringify({ mode: 'code' }));
			const aggregate = JSON.parse((await bundled('run', 'group://bundled-team', '--name', 'bundled-agg', '--aggregation', aggregation, '--json')).stdout) as { url: string };

			const direct = (await connectLegacy(guarded.url, { revision: '2025-06-18', transport: 'streamable-http' })).client;
			clients.push(direct);
			expect(JSON.stringify(await direct.callTool({ name: 'echo', arguments: { message: 'through Cedar' } }))).toContain('through Cedar');
			await expect(direct.callTool({ name: 'whoami', arguments: {} })).rejects.toThrow(/Unauthorized/);

			const model = (await connectLegacy(aggregate.url, { revision: '2025-06-18', transport: 'streamable-http' })).client;
			clients.push(model);
			const script = await model.callTool({ name: 'run_code', arguments: { code: 'const six: number = 6;\nreturn six * 7;' } });
			expect(script.isError, JSON.stringify(script)).toBeFalsy();
			expect(JSON.stringify(script)).toContain('42');
			await until(() => exports.includes('/v1/traces'), 'the traces of the calls, exported');
		} finally {
			collector.close();
			for (const client of clients) await client.close();
			await bundled('rm', 'bundled-agg', 'bundled-remote').catch(() => undefined);
			remote.stop();
		}
	}, 120_000);

	it('installs a skill from a registry into a project, lazily loaded modules included', async () => {
		supervise(daemonCommand('', join(bundleDir, 'hangar.mjs'), process.execPath, home.env));
		const project = join(home.path, 'project');
		await promisify(execFile)('git', ['init', '-q', project]);
		const { skill } = await supervisor.request(InstallSkill, { name: reference, project_root: project, clients: ['claude-code'] });
		expect(skill).toMatchObject({ status: 'installed', scope: 'project', clients: ['claude-code'] });
		expect(await readFile(join(project, '.claude', 'skills', 'bundled-skill', 'SKILL.md'), 'utf8')).toBe(skillMd('bundled-skill'));
		expect(await readFile(join(project, 'hangar.lock.yaml'), 'utf8')).toContain('bundled-skill');
	});
});
