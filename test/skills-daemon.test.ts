/**
 * The daemon's progress and cancellation path, with skills as the long work: a pull and a
 * clone report `$/progress` for a `workDoneToken`, `$/cancelRequest` stops them with
 * RequestCancelled, nothing is left behind, and `skills/didChange` tells the editor.
 */
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InstallSkill, ListSkills } from '../protocol/index.js';
import { startFaultProxy, type FaultProxy } from './support/faults.js';
import { createRepo, startGitServer, type GitServer } from './support/git.js';
import { spawnRawDaemon, type RawDaemon } from './support/raw-daemon.js';
import { startRegistry, type Registry } from './support/registry.js';
import { createSkillsWorld, exists, publishSkill, type SkillsWorld } from './support/skills-world.js';
import { skillMd } from './support/skills.js';

let world: SkillsWorld;
let registry: Registry;
let gitServer: GitServer;
let slowRegistry: FaultProxy;
let slowGit: FaultProxy;
let daemon: RawDaemon;
let nextId = 1;

beforeAll(async () => {
	[world, registry] = await Promise.all([createSkillsWorld({ HANGAR_DEV: '1' }), startRegistry()]);
	// Random bytes do not compress: the layer is as large on the wire as on disk.
	await publishSkill(world.work, `${registry.host}/skills/hefty:1`, 'hefty', { files: { 'data.bin': randomBytes(2 * 1024 * 1024).toString('base64') } });
	const repos = join(world.work, 'repos');
	await createRepo(repos, 'org', 'heavy-skill', { 'SKILL.md': skillMd('heavy-skill'), 'blob.txt': randomBytes(2 * 1024 * 1024).toString('base64') });
	gitServer = await startGitServer(repos);
	[slowRegistry, slowGit] = await Promise.all([startFaultProxy(registry.url), startFaultProxy(`http://${gitServer.host}`)]);
}, 60_000);

afterAll(async () => {
	await Promise.all([slowRegistry?.stop(), slowGit?.stop(), gitServer?.stop()]);
	await registry?.stop();
	await world?.dispose();
});

afterEach(async () => {
	slowRegistry.fault = undefined;
	slowGit.fault = undefined;
	if (daemon?.child.exitCode === null) daemon.child.kill();
	await daemon?.exited();
});

async function start(): Promise<void> {
	daemon = spawnRawDaemon(world.env);
	const id = nextId++;
	daemon.send({ jsonrpc: '2.0', id, method: 'initialize', params: { processId: process.pid, capabilities: {} } });
	await daemon.next((message) => message.id === id);
	daemon.send({ jsonrpc: '2.0', method: 'initialized', params: {} });
}

function request(method: string, params: unknown): number {
	const id = nextId++;
	daemon.send({ jsonrpc: '2.0', id, method, params });
	return id;
}

const progressOf = (token: string) => (message: Record<string, unknown>) =>
	message.method === '$/progress' && (message.params as { token: string }).token === token;

/** Nothing of an install anywhere: no folder, no staging, no journal, no half-written cache blob. */
async function expectNothingLeft(name: string, folder: string): Promise<void> {
	expect(await exists(join(world.userHome, folder, name))).toBe(false);
	expect(await exists(join(world.userHome, folder, '.hangar'))).toBe(false);
	const hangar = world.env.HANGAR_HOME!;
	expect(await readdir(join(hangar, 'cache/skills/staging')).catch(() => [])).toEqual([]);
	expect(await readdir(join(hangar, 'cache/skills/git')).catch(() => [])).toEqual([]);
	expect(await readdir(join(hangar, 'state/skills/journal')).catch(() => [])).toEqual([]);
	const blobs = await readdir(join(hangar, 'cache/skills/oci/blobs/sha256')).catch(() => [] as string[]);
	expect(blobs.filter((name) => name.endsWith('.tmp'))).toEqual([]);
}

describe('$/progress', () => {
	it('an install from a registry reports begin, downloads and end for its work-done token', async () => {
		await start();
		const id = request(InstallSkill.method, { name: `${registry.host}/skills/hefty:1`, clients: ['claude-code'], workDoneToken: 'pull-1' });
		const response = await daemon.next((message) => message.id === id, 30_000);
		expect(response.result).toMatchObject({ skill: { status: 'installed' } });
		const progress = daemon.messages.filter((message) => progressOf('pull-1')(message as never)).map((message) => (message as unknown as { params: { value: { kind: string; title?: string; message?: string } } }).params.value);
		expect(progress[0]).toMatchObject({ kind: 'begin', title: `Installing ${registry.host}/skills/hefty:1`, cancellable: true });
		expect(progress.some((value) => value.kind === 'report' && /downloading .* of /.test(value.message ?? ''))).toBe(true);
		expect(progress.at(-1)).toMatchObject({ kind: 'end', message: 'done' });
		const changed = await daemon.next((message) => message.method === 'skills/didChange');
		expect(changed.params).toEqual({ name: 'hefty', scope: 'user', change: 'installed' });
	});
});

describe('$/cancelRequest', () => {
	it('stops a slow registry pull mid-download and leaves nothing behind', async () => {
		slowRegistry.fault = (request) => (request.path.includes('/blobs/') ? { kind: 'slow', bytesPerSecond: 40_000 } : undefined);
		await publishSkill(world.work, `${registry.host}/skills/crawl:1`, 'crawl', { files: { 'data.bin': randomBytes(1024 * 1024).toString('base64') } });
		await start();
		const id = request(InstallSkill.method, { name: `${slowRegistry.host}/skills/crawl:1`, clients: ['cursor'], workDoneToken: 'slow-1' });
		await daemon.next((message) => progressOf('slow-1')(message) && /downloading/.test(JSON.stringify(message.params)), 15_000);
		daemon.send({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id } });
		// The download takes 25 s at this pace: an answer within 10 s is the cancellation's.
		const response = await daemon.next((message) => message.id === id, 10_000);
		expect(response.error).toMatchObject({ code: -32800, data: { status: 499, code: 'cancelled' } });
		await daemon.next((message) => progressOf('slow-1')(message) && (message.params as { value: { kind: string } }).value.kind === 'end');
		await expectNothingLeft('crawl', '.cursor/skills');
		// The daemon carries on.
		const listId = request(ListSkills.method, {});
		const list = await daemon.next((message) => message.id === listId);
		expect((list.result as { skills: { metadata: { name: string } }[] }).skills.map((skill) => skill.metadata.name)).not.toContain('crawl');
	});

	it('stops a slow git clone and leaves nothing behind', async () => {
		slowGit.fault = (request) => (request.method === 'POST' ? { kind: 'slow', bytesPerSecond: 30_000 } : undefined);
		await start();
		const id = request(InstallSkill.method, { name: `git://${slowGit.host}/org/heavy-skill`, clients: ['windsurf'], workDoneToken: 'clone-1' });
		await daemon.next((message) => progressOf('clone-1')(message) && (message.params as { value: { kind: string } }).value.kind === 'report', 15_000);
		await new Promise((resolve) => setTimeout(resolve, 500));
		daemon.send({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id } });
		const response = await daemon.next((message) => message.id === id, 10_000);
		expect(response.error).toMatchObject({ code: -32800, data: { status: 499 } });
		await expectNothingLeft('heavy-skill', '.codeium/windsurf/skills');
	});
});
