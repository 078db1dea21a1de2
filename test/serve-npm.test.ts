/**
 * `npm start` (README's way to serve the REST API from a checkout) leaves no server behind: npm's
 * child is the server itself, and a server started by npm stops when npm is gone.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createTestHome, type TestHome } from './support/home.js';

const CHECKOUT = fileURLToPath(new URL('..', import.meta.url));

let home: TestHome;
let started: number[] = [];

beforeEach(async () => {
	home = await createTestHome();
});

afterEach(async () => {
	// A failed test must not leave its server running: end what it started, by process id.
	for (const pid of started) {
		try {
			process.kill(pid, 'SIGKILL');
		} catch {
			// already gone
		}
	}
	started = [];
	await home.dispose();
});

interface NpmStart {
	readonly npm: ChildProcess;
	readonly url: string;
	/** Resolves once npm has exited and so has every process holding its output (all it started). */
	readonly outputClosed: Promise<unknown>;
}

async function npmStart(): Promise<NpmStart> {
	// Not the outer npm's settings (under `npm test`): this npm reads its own.
	const env = Object.fromEntries(Object.entries(home.env).filter(([name]) => !name.startsWith('npm_')));
	const npm = spawn('npm', ['start', '--', '--port', '0'], { cwd: CHECKOUT, env: { ...env, HANGAR_LOG: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
	started.push(npm.pid!);
	npm.stdout!.resume();
	const outputClosed = Promise.all([once(npm, 'exit'), once(npm.stdout!, 'close'), once(npm.stderr!, 'close')]);
	let output = '';
	const url = await new Promise<string>((resolve, reject) => {
		npm.stderr!.on('data', (chunk: Buffer) => {
			output += chunk.toString();
			const match = /listening on (\S+)/.exec(output);
			if (match) resolve(match[1]!);
		});
		npm.once('exit', (code) => reject(new Error(`npm start exited with ${code}: ${output}`)));
	});
	started.push(...descendantsOf(npm.pid!));
	return { npm, url, outputClosed };
}

function descendantsOf(pid: number): number[] {
	const children = ps('pid=', '--ppid', String(pid)).split('\n').filter(Boolean).map(Number);
	return children.flatMap((child) => [child, ...descendantsOf(child)]);
}

async function answers(url: string): Promise<boolean> {
	try {
		await fetch(new URL('/health', url));
		return true;
	} catch {
		return false;
	}
}

it('runs the server as npm\'s own child, which SIGTERM to npm stops', async () => {
	const { npm, url, outputClosed } = await npmStart();
	expect(await answers(url)).toBe(true);
	// One process under npm: the server, not a shell with the server under it.
	expect(descendantsOf(npm.pid!)).toHaveLength(1);
	npm.kill('SIGTERM');
	await outputClosed;
	expect(await answers(url)).toBe(false);
	expect(started.filter(isAlive)).toEqual([]);
});

it('stops the server when npm dies without passing a signal on', async () => {
	const { npm, url, outputClosed } = await npmStart();
	expect(await answers(url)).toBe(true);
	npm.kill('SIGKILL');
	await outputClosed;
	expect(await answers(url)).toBe(false);
	expect(started.filter(isAlive)).toEqual([]);
});

/** Running, that is: not gone and not a zombie (this machine's init may be slow to reap the orphan). */
function isAlive(pid: number): boolean {
	const state = ps('stat=', '-p', String(pid)).trim();
	return state !== '' && !state.startsWith('Z');
}

/** `ps -o COLUMN …`: empty when no process matches (ps then exits 1). */
function ps(column: string, ...select: string[]): string {
	return spawnSync('ps', ['-o', column, ...select], { encoding: 'utf8' }).stdout;
}
