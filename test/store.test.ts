/**
 * The state store: atomic writes with safe modes, versioned documents with migrations, and
 * locks that keep two processes writing at once from losing each other's changes.
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HangarError } from '../protocol/errors.js';
import { GroupStore } from '../server/groups/store.js';
import { writeFileAtomic } from '../server/store/atomic.js';
import { JsonDocument } from '../server/store/document.js';
import { resolvePaths } from '../server/store/paths.js';
import { createTestHome, type TestHome } from './support/home.js';

const DIST = fileURLToPath(new URL('../dist', import.meta.url));
const WRITER = fileURLToPath(new URL('./fixtures/store-writer.mjs', import.meta.url));

let home: TestHome;
beforeEach(async () => (home = await createTestHome()));
afterEach(() => home.dispose());

function runWriter(kind: string, target: string, writer: string, count: number): Promise<void> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [WRITER, kind, DIST, target, writer, String(count)], { stdio: ['ignore', 'ignore', 'pipe'] });
		let stderr = '';
		child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${writer} failed: ${stderr}`))));
	});
}

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
});
