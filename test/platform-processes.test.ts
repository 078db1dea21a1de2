/**
 * Processes on Windows: every background child is spawned without a console window, and a
 * proxy is stopped without POSIX signals, by asking over its local channel (a named pipe there,
 * the Unix socket here), before it is forced. The stop runs against a real proxy, told it is
 * on Windows.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPipe, localLinkPath } from '../server/runspec/localLink.js';
import { WorkloadStore } from '../server/runspec/store.js';
import { isAlive } from '../server/store/lock.js';
import { resolvePaths } from '../server/store/paths.js';
import { stopProxy } from '../server/workloads/proxyProcess.js';
import { startRemoteServer, type RemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar } from './support/processes.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The source files under `folder`, recursively. */
function sources(folder: string): string[] {
	return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
		.filter((file) => file.endsWith('.ts') && !file.includes('node_modules'))
		.map((file) => join(folder, file));
}

/** The text of each call of `name(…)` in `text`, parentheses matched. */
function callsOf(text: string, name: string): string[] {
	const calls: string[] = [];
	for (const match of text.matchAll(new RegExp(`(?<![.\\w])${name}\\(`, 'g'))) {
		let depth = 0;
		let end = match.index;
		for (; end < text.length; end++) {
			if (text[end] === '(') depth++;
			else if (text[end] === ')' && --depth === 0) break;
		}
		calls.push(text.slice(match.index, end + 1));
	}
	return calls;
}

describe('background children', () => {
	it('are all spawned with windowsHide (no console window flashing up on Windows)', () => {
		const unhidden: string[] = [];
		let calls = 0;
		for (const file of [...sources('server'), ...sources('extension/src')]) {
			const text = readFileSync(join(ROOT, file), 'utf8');
			const imported = /import \{([^}]*)\} from 'node:child_process'/.exec(text)?.[1];
			if (!imported) continue;
			for (const name of ['spawn', 'execFile', 'fork', 'exec', 'spawnSync', 'execFileSync', 'execSync'].filter((candidate) => new RegExp(`\\b${candidate}\\b`).test(imported))) {
				for (const call of callsOf(text, name)) {
					calls++;
					if (!call.includes('windowsHide: true')) unhidden.push(`${file}: ${call.slice(0, 80)}`);
				}
			}
		}
		expect(calls).toBeGreaterThan(5);
		expect(unhidden).toEqual([]);
	});
});

describe("a proxy's local channel", () => {
	it('is a named pipe on Windows, one per data folder and process, and a socket file elsewhere', () => {
		const pipe = localLinkPath('C:\\Users\\ada\\AppData\\Local\\hangar\\data', 4242, 'win32');
		expect(pipe).toMatch(/^\\\\\.\\pipe\\hangar-[0-9a-f]{16}-4242$/);
		expect(localLinkPath('C:\\Users\\bob\\AppData\\Local\\hangar\\data', 4242, 'win32')).not.toBe(pipe);
		expect(isPipe(pipe)).toBe(true);
		expect(localLinkPath('/home/ada/.local/share/hangar', 4242, 'linux')).toBe('/home/ada/.local/share/hangar/sockets/4242.sock');
		expect(isPipe('/home/ada/.local/share/hangar/sockets/4242.sock')).toBe(false);
	});
});

describe('stopping a proxy', () => {
	let home: TestHome;
	let remote: RemoteServer;
	let store: WorkloadStore;

	beforeAll(async () => {
		[home, remote] = await Promise.all([createTestHome(), startRemoteServer('streamable')]);
		store = new WorkloadStore(resolvePaths(home.env));
	});

	afterAll(async () => {
		await runHangar(['rm', 'win-stop', 'posix-stop'], home.env);
		remote?.stop();
		await home?.dispose();
	});

	async function running(name: string) {
		expect(await runHangar(['run', remote.url, '--name', name], home.env)).toMatchObject({ code: 0 });
		const record = (await store.proxies.get(name))!;
		expect(isAlive(record.pid)).toBe(true);
		return record;
	}

	it('on Windows, asks it over its local channel: it stops as gracefully as on SIGTERM and removes its record', async () => {
		const record = await running('win-stop');
		expect(record.socket).toBeDefined();
		await stopProxy(store, 'win-stop', 'win32');
		expect(isAlive(record.pid)).toBe(false);
		expect(await readFile(store.logFile('win-stop'), 'utf8')).toContain('stopping (asked over its local channel)');
		expect(await store.proxies.get('win-stop')).toBeUndefined();
	});

	it('elsewhere, sends SIGTERM', async () => {
		const record = await running('posix-stop');
		await stopProxy(store, 'posix-stop', 'linux');
		expect(isAlive(record.pid)).toBe(false);
		expect(await readFile(store.logFile('posix-stop'), 'utf8')).toContain('stopping (SIGTERM)');
	});
});
