/**
 * The state store: atomic writes with safe modes, versioned documents with migrations, and
 * locks that keep two processes writing at once from losing each other's changes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HangarError } from '../protocol/errors.js';
import { Notifier } from '../server/environment.js';
import { GroupStore } from '../server/groups/store.js';
import { createLogger } from '../server/log.js';
import { WorkloadStore } from '../server/runspec/store.js';
import { writeFileAtomic } from '../server/store/atomic.js';
import { JsonCollection, JsonDocument } from '../server/store/document.js';
import { tryLock, withLock } from '../server/store/lock.js';
import { resolvePaths } from '../server/store/paths.js';
import { StatusFeed } from '../server/workloads/statusFeed.js';
import { createTestHome, type TestHome } from './support/home.js';

const DIST = fileURLToPath(new URL('../dist', import.meta.url));
const WRITER = fileURLToPath(new URL('./fixtures/store-writer.mjs', import.meta.url));

let home: TestHome;
beforeEach(async () => (home = await createTestHome()));
afterEach(() => home.dispose());

function runWriter(kind: string, target: string, writer: string, count: number, ...rest: string[]): Promise<void> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [WRITER, kind, DIST, target, writer, String(count), ...rest], { stdio: ['ignore', 'ignore', 'pipe'] });
		let stderr = '';
		child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		child.once('exit', (code, signal) => (code === 0 || signal === 'SIGKILL' ? resolve() : reject(new Error(`writer ${writer} failed: ${stderr}`))));
	});
}

/** A process holding the lock of `target` until its stdin ends. */
async function startHolder(target: string): Promise<ChildProcess> {
	const child = spawn(process.execPath, [WRITER, 'hold', DIST, target], { stdio: ['pipe', 'pipe', 'inherit'] });
	await new Promise<void>((resolve, reject) => {
		child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('held') && resolve());
		child.once('exit', (code) => reject(new Error(`holder exited with ${code}`)));
	});
	return child;
}

/** Polls `done` until it holds (at most 10 s). */
async function waitUntil(done: () => boolean): Promise<void> {
	for (let waited = 0; !done(); waited += 10) {
		if (waited > 10_000) throw new Error('waited 10 s in vain');
		await new Promise((resolve) => setTimeout(resolve, 10));
	}
}

const exited = (child: ChildProcess) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(undefined) : child.once('exit', resolve)));

describe('paths', () => {
	it('puts everything under HANGAR_HOME when set', () => {
		expect(resolvePaths({ HANGAR_HOME: '/h' })).toEqual({ config: '/h/config', state: '/h/state', data: '/h/data', cache: '/h/cache' });
	});

	it('follows the XDG variables, with their defaults under HOME', () => {
		const paths = resolvePaths({ HOME: '/home/u', XDG_STATE_HOME: '/xs' });
		expect(paths).toEqual({
			config: '/home/u/.config/hangar',
			state: '/xs/hangar',
			data: '/home/u/.local/share/hangar',
			cache: '/home/u/.cache/hangar',
		});
	});
});

describe('atomic writes', () => {
	it('creates files 0600 in folders 0700, and keeps the mode of an existing file', async () => {
		const file = join(home.path, 'deep', 'er', 'file.json');
		await writeFileAtomic(file, 'one');
		expect((await stat(file)).mode & 0o777).toBe(0o600);
		expect((await stat(join(home.path, 'deep', 'er'))).mode & 0o777).toBe(0o700);
		const shared = join(home.path, 'shared.json');
		await writeFile(shared, 'old', { mode: 0o644 });
		await writeFileAtomic(shared, 'new');
		expect((await stat(shared)).mode & 0o777).toBe(0o644);
		expect(await readFile(shared, 'utf8')).toBe('new');
	});

	it('leaves no temporary files behind', async () => {
		await writeFileAtomic(join(home.path, 'a.json'), '1');
		await writeFileAtomic(join(home.path, 'a.json'), '2');
		expect(await readdir(home.path)).toEqual(['a.json']);
	});
});

describe('versioned documents', () => {
	const Settings = z.object({ color: z.string(), size: z.number() });

	it('writes its schema version and reads back what it wrote', async () => {
		const path = join(home.path, 'settings.json');
		const document = new JsonDocument(path, { schema: Settings, version: 2 }, () => ({ color: 'red', size: 1 }));
		await document.update((current) => [{ ...current, size: 3 }, undefined]);
		expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ schema_version: 2, color: 'red', size: 3 });
		expect(await document.read()).toEqual({ color: 'red', size: 3 });
	});

	it('migrates an older file on read', async () => {
		const path = join(home.path, 'settings.json');
		await writeFile(path, JSON.stringify({ schema_version: 1, colour: 'blue', size: 2 }));
		const document = new JsonDocument(
			path,
			{ schema: Settings, version: 2, migrations: { 1: ({ colour, ...rest }) => ({ ...rest, color: colour }) } },
			() => ({ color: 'red', size: 1 }),
		);
		expect(await document.read()).toEqual({ color: 'blue', size: 2 });
	});

	it('refuses a file from a newer Hangar and a corrupt file, naming the file', async () => {
		const path = join(home.path, 'settings.json');
		const document = new JsonDocument(path, { schema: Settings, version: 1 }, () => ({ color: 'red', size: 1 }));
		await writeFile(path, JSON.stringify({ schema_version: 9, color: 'x', size: 1 }));
		await expect(document.read()).rejects.toThrow(/newer Hangar/);
		await writeFile(path, '{"schema_version": 1, "color": ');
		const error = await document.read().catch((e: unknown) => e);
		expect(error).toBeInstanceOf(HangarError);
		expect((error as Error).message).toContain(path);
	});
});

describe('two processes writing at once', () => {
	it('lose nothing when updating one document', async () => {
		const target = join(home.path, 'shared', 'log.json');
		await mkdir(join(home.path, 'shared'));
		await Promise.all([runWriter('document', target, 'a', 60), runWriter('document', target, 'b', 60)]);
		const { entries } = JSON.parse(await readFile(target, 'utf8')) as { entries: string[] };
		expect(entries).toHaveLength(120);
		expect(new Set(entries).size).toBe(120);
	});

	it('lose nothing when creating groups and updating the default group', async () => {
		const state = join(home.path, 'state');
		await Promise.all([runWriter('groups', state, 'a', 25), runWriter('groups', state, 'b', 25)]);
		const groups = new GroupStore({ state, config: state, data: state, cache: state });
		const all = await groups.list();
		expect(all).toHaveLength(51);
		expect((await groups.get('default')).skills).toHaveLength(50);
	});

	it('an entity being changed by one process holds up no change to another entity, and its own change waits for it', async () => {
		const folder = join(home.path, 'records');
		const records = new JsonCollection(folder, { schema: z.object({ value: z.number() }), version: 1 });
		const holder = await startHolder(join(folder, 'a.json'));
		let waited = false;
		const changingA = records.change('a', () => ({ value: 1 })).then((written) => ((waited = true), written));
		try {
			expect(await records.create('b', { value: 2 })).toBe(true);
			expect(await records.change('b', () => ({ value: 3 }))).toBe(true);
			expect(await records.delete('b')).toBe(true);
			expect(waited).toBe(false);
		} finally {
			holder.stdin!.end();
		}
		expect(await changingA).toBe(true);
		expect(await records.list()).toEqual([{ value: 1 }]);
		expect(await readdir(folder)).toEqual(['a.json']);
	});
});

describe('cross-process locks', () => {
	it('a paused holder keeps its lock however long the pause, and hands it over when it goes on', async () => {
		const target = join(home.path, 'state', 'paused.json');
		const holder = await startHolder(target);
		try {
			holder.kill('SIGSTOP');
			// What the lock looks like after an hour's pause: nothing refreshed it.
			const anHourAgo = new Date(Date.now() - 3_600_000);
			await utimes(`${target}.lock`, anHourAgo, anHourAgo);
			for (const entry of await readdir(`${target}.lock`)) await utimes(join(`${target}.lock`, entry), anHourAgo, anHourAgo);
			expect(await tryLock(target, async () => 'stolen')).toBeUndefined();

			holder.kill('SIGCONT');
			holder.stdin!.end();
			expect(await withLock(target, async () => 'mine after the holder released it')).toBe('mine after the holder released it');
		} finally {
			holder.kill('SIGCONT');
			holder.kill();
		}
	});

	it('a holder killed with -9 leaves a lock taken over at once', async () => {
		const target = join(home.path, 'state', 'killed.json');
		const holder = await startHolder(target);
		holder.kill('SIGKILL');
		await exited(holder);
		expect(await tryLock(target, async () => 'taken')).toEqual({ value: 'taken' });
	});

	it('a holder that exited but was never reaped (a zombie) leaves a lock taken over', async () => {
		// `sleep 30` takes the place of the shell and never reaps the shell's other child, a `cat`
		// that exits when the test closes its input: only once the exec is done, so that the shell
		// cannot reap it first (it did on a loaded machine when the child was a short sleep).
		const parent = spawn('sh', ['-c', 'exec 3<&0; cat <&3 >/dev/null & echo $!; exec sleep 30'], { stdio: ['pipe', 'pipe', 'inherit'] });
		try {
			const pid = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (data: Buffer) => resolve(String(data)))));
			const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
			while ((await readFile(`/proc/${parent.pid}/comm`, 'utf8')).trim() !== 'sleep') await pause();
			parent.stdin!.end();
			const stat = async () => (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
			while ((await stat())[0] !== 'Z') await pause();
			const target = join(home.path, 'state', 'zombie.json');
			await mkdir(`${target}.lock`, { recursive: true });
			await writeFile(join(`${target}.lock`, 'owner-exited'), JSON.stringify({ pid, host: hostname(), started: (await stat())[19] }));
			expect(await tryLock(target, async () => 'taken')).toEqual({ value: 'taken' });
		} finally {
			parent.kill();
		}
	});

	it('a process that exits while taking a lock leaves no scratch folder behind', async () => {
		const state = join(home.path, 'state');
		await mkdir(state, { recursive: true });
		await runWriter('exit-acquiring', join(state, 'proxy.json'), '1', 1);
		expect(await readdir(state)).toEqual([]);
	});

	it('the next taker removes the scratch folder of a process killed while taking the lock', async () => {
		const state = join(home.path, 'state');
		const gone = spawn(process.execPath, ['-e', '0']);
		await exited(gone);
		await mkdir(join(state, `proxy.json.lock.${gone.pid}-0123456789abcdef.tmp`), { recursive: true });
		await writeFile(join(state, `proxy.json.lock.${gone.pid}-0123456789abcdef.tmp`, 'owner-0123456789abcdef'), '');
		expect(await withLock(join(state, 'proxy.json'), async () => 'taken')).toBe('taken');
		expect(await readdir(state)).toEqual([]);
	});

	it('a lock whose pid now belongs to another process is taken over', async () => {
		const target = join(home.path, 'state', 'reused.json');
		await mkdir(`${target}.lock`, { recursive: true });
		// The parent of this test process is alive, but it is not the process that took the lock
		// (written as an older Hangar did: its owner file was named just 'owner').
		await writeFile(join(`${target}.lock`, 'owner'), JSON.stringify({ pid: process.ppid, host: hostname(), started: '1' }));
		expect(await tryLock(target, async () => 'taken')).toEqual({ value: 'taken' });
	});

	it('sixteen processes contending: every change is kept, holders killed -9 are taken over, nothing is left behind', async () => {
		// A lock released and taken again between another process's look and its move used to be
		// moved aside and put back after its holder had gone on: held by a live process forever.
		const state = join(home.path, 'state');
		const counter = join(state, 'counter');
		const writers = Array.from({ length: 16 }, (_, index) => (index % 4 === 0 ? runWriter('count', counter, String(index), 150, '9') : runWriter('count', counter, String(index), 150)));
		await Promise.all(writers);
		expect(Number(await readFile(counter, 'utf8'))).toBe(12 * 150 + 4 * 10);
		expect(await readdir(state)).toEqual(['counter']);
	}, 120_000);

	it('a signal cancels the wait for a live holder, and nothing is left behind', async () => {
		const target = join(home.path, 'state', 'busy.json');
		const holder = await startHolder(target);
		try {
			const controller = new AbortController();
			const waiting = withLock(target, async () => 'never', { signal: controller.signal }).catch((error: unknown) => error);
			controller.abort();
			expect(await waiting).toMatchObject({ status: 499 });
		} finally {
			holder.stdin!.end();
			await exited(holder);
		}
		expect(await readdir(join(home.path, 'state'))).toEqual([]);
	});
});

describe('workload statuses', () => {
	it('a workload being removed stays so: a late status from its start does not hide it, a failed deletion does', async () => {
		const store = new WorkloadStore(resolvePaths(home.env));
		const notifier = new Notifier();
		const announced: unknown[] = [];
		notifier.subscribe((_method, params) => announced.push(params));
		const feed = new StatusFeed(store, notifier, createLogger('test', 'error'));
		await feed.set('w', 'starting', 'creating');
		await feed.set('w', 'removing');
		// The start that was under way finishes after the delete began, as in a bulk delete.
		await Promise.all([feed.set('w', 'running'), feed.set('w', 'stopped', 'the proxy ended'), feed.set('w', 'removing')]);
		expect(await store.statuses.get('w')).toMatchObject({ status: 'removing' });
		await feed.set('w', 'error', 'delete failed: busy');
		expect(await store.statuses.get('w')).toMatchObject({ status: 'error', status_context: 'delete failed: busy' });
		expect(announced).toEqual([
			{ name: 'w', status: 'starting', status_context: 'creating' },
			{ name: 'w', status: 'removing', status_context: undefined },
			{ name: 'w', status: 'error', status_context: 'delete failed: busy' },
		]);
	});

	it('the watcher never announces a status older than the last one announced: a late read of a record this process replaced since', async () => {
		const store = new WorkloadStore(resolvePaths(home.env));
		const notifier = new Notifier();
		const announced: string[] = [];
		notifier.subscribe((_method, params) => announced.push((params as { status: string }).status));
		const feed = new StatusFeed(store, notifier, createLogger('test', 'error'));
		await feed.set('w', 'running');
		feed.watch();
		await new Promise((resolve) => setTimeout(resolve, 100)); // the watcher has read the folder
		// The watcher's read of the record is held (as under load) until the next change is made.
		const read = store.statuses.get.bind(store.statuses);
		let release = () => undefined as void;
		const released = new Promise<void>((resolve) => (release = resolve));
		let reads = 0;
		store.statuses.get = async (name: string) => {
			const record = await read(name);
			if (++reads === 1) await released;
			return record;
		};
		await feed.set('w', 'stopped');
		await waitUntil(() => reads >= 1);
		await feed.set('w', 'starting');
		release();
		await waitUntil(() => reads >= 2); // the watcher's read of `starting`
		await feed.set('w', 'running');
		await waitUntil(() => reads >= 3);
		expect(announced).toEqual(['running', 'stopped', 'starting', 'running']);
	});
});
