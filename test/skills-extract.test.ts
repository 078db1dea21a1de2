/**
 * Safe extraction of skill layers: every hostile archive is refused and leaves nothing
 * behind — not the target folder, not a file beside it. (The install tests push the same
 * archives to a real registry and check the client folders stay untouched.)
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../server/oci/client.js';
import { extractSkillArchive } from '../server/skills/extract.js';
import { declaredGiant, gzipBomb, SKILL_MD, tarBlocks, targz, type ArchiveEntry } from './support/archives.js';

let work: string;
let counter = 0;
beforeAll(async () => (work = await mkdtemp(join(tmpdir(), 'hangar-extract-'))));
afterAll(() => rm(work, { recursive: true, force: true }));

async function* chunksOf(bytes: Buffer): AsyncGenerator<Buffer> {
	for (let offset = 0; offset < bytes.length; offset += 64 * 1024) yield bytes.subarray(offset, offset + 64 * 1024);
}

/** Extracts into a fresh `<case>/skill`; returns the case folder, the outcome and what is left. */
async function attempt(archive: Buffer, options: Parameters<typeof extractSkillArchive>[2] = {}) {
	const folder = join(work, `case-${++counter}`);
	await mkdir(folder);
	const into = join(folder, 'skill');
	const outcome = await extractSkillArchive(chunksOf(archive), into, options).then(
		(files) => ({ files }),
		(error: unknown) => ({ error: error as { status: number; code: string; message: string } }),
	);
	return { folder, into, outcome, left: await readdir(folder) };
}

const cutOff = (archive: Buffer) => archive.subarray(0, Math.floor(archive.length / 2));

const skill: ArchiveEntry = { path: 'SKILL.md', content: SKILL_MD('hostile') };

describe('hostile archives are refused with nothing written', () => {
	const cases: [string, () => Promise<Buffer> | Buffer, RegExp][] = [
		['path traversal', () => targz([skill, { path: '../evil.txt', content: 'pwned' }]), /leaves the skill folder/],
		['nested path traversal', () => targz([skill, { path: 'docs/../../evil.txt', content: 'pwned' }]), /leaves the skill folder/],
		['an absolute path', () => targz([skill, { path: '/tmp/hangar-absolute-evil', content: 'pwned' }]), /absolute path/],
		['a symlink', () => targz([skill, { path: 'passwd', type: 'SymbolicLink', linkpath: '/etc/passwd' }]), /symlink/],
		['a hardlink', () => targz([skill, { path: 'hard', type: 'Link', linkpath: 'SKILL.md' }]), /hardlink/],
		['a character device', () => targz([skill, { path: 'null', type: 'CharacterDevice' }]), /device/],
		['a block device', () => targz([skill, { path: 'disk', type: 'BlockDevice' }]), /device/],
		['a named pipe', () => targz([skill, { path: 'pipe', type: 'FIFO' }]), /named pipe/],
		['10,000 files', () => targz([skill, ...Array.from({ length: 10_000 }, (_, index) => ({ path: `f/${index}.txt`, content: 'x' }))]), /more than 1000 files/],
		['a file twice', () => targz([skill, { path: 'a.md', content: '1' }, { path: 'a.md', content: '2' }]), /appears twice/],
		['a file inside a file', () => targz([skill, { path: 'a', content: '1' }, { path: 'a/b', content: '2' }]), /inside a file/],
		['a gzip bomb (600 MB of undeclared zeros)', () => gzipBomb('hostile', 600 * 1024 * 1024), /gzip bomb/],
		['a file declared at 1 GB', () => declaredGiant('hostile', 1024 * 1024 * 1024), /at most 100000000 per file/],
		['bytes that are not gzip', () => Buffer.from('this is not an archive at all'), /invalid gzip/],
		['a cut-off archive', () => cutOff(targz([skill, { path: 'big.md', content: randomBytes(20_000) }])), /invalid gzip/],
		['an empty archive', () => gzipSync(tarBlocks([])), /invalid tar/],
		// 60,000 folders are a 276 KiB layer: every entry counts, not only files.
		['60,000 folders', () => targz([skill, ...Array.from({ length: 60_000 }, (_, index) => ({ path: `d${index}/`, type: 'Directory' as const }))]), /more than 2000 entries/],
		['a name longer than the file system allows', () => targz([skill, { path: `${'n'.repeat(300)}.md`, content: 'long' }]), /longer than 255 bytes/],
		['a path longer than the file system allows', () => targz([skill, { path: `${Array.from({ length: 40 }, () => 'd'.repeat(200)).join('/')}/deep.md`, content: 'deep' }]), /path of \d+ bytes; at most 1024/],
	];

	it.each(cases)('%s', async (_label, make, message) => {
		const { outcome, left } = await attempt(await make());
		expect('error' in outcome && outcome.error).toMatchObject({ status: 422, code: 'unsafe_archive', message: expect.stringMatching(message) });
		expect(left).toEqual([]);
		await expect(stat('/tmp/hangar-absolute-evil')).rejects.toThrow(/ENOENT/);
		await expect(stat(join(work, 'evil.txt'))).rejects.toThrow(/ENOENT/);
	}, 60_000);

	// A skill installed here may be synced to a Windows machine (or a case-insensitive macOS disk):
	// names that cannot exist there, or that would become one file there, are refused everywhere.
	const unportable: [string, string, RegExp][] = [
		['a reserved device name', 'CON', /CON.*reserved name on Windows/],
		['a reserved name with an extension', 'docs/con.txt', /docs\/con\.txt.*reserved name on Windows/],
		['a reserved name in a folder name', 'nul/readme.md', /nul\/readme\.md.*reserved name on Windows/],
		['a reserved port name', 'Com1.md', /Com1\.md.*reserved name on Windows/],
		['a printer port name', 'lpt9', /lpt9.*reserved name on Windows/],
		['a trailing dot', 'notes.', /notes\..*ends with a dot or a space/],
		['a trailing space', 'docs /a.md', /docs \/a\.md.*ends with a dot or a space/],
		['an alternate data stream', 'SKILL.md:hidden', /SKILL\.md:hidden.*cannot hold on Windows/],
		['a character Windows forbids', 'what?.md', /what\?\.md.*cannot hold on Windows/],
		['a drive-relative path', 'C:evil.txt', /C:evil\.txt.*(absolute|cannot hold on Windows)/],
		['a UNC path', '//server/share/evil.txt', /absolute path/],
		['a backslash', 'docs\\..\\..\\evil.txt', /backslash/],
	];
	it.each(unportable)('%s (%s)', async (_label, path, message) => {
		const { outcome, left } = await attempt(targz([skill, { path, content: 'x' }]));
		expect('error' in outcome && outcome.error).toMatchObject({ status: 422, code: 'unsafe_archive', message: expect.stringMatching(message) });
		expect(left).toEqual([]);
	});

	it('two entries differing only in case', async () => {
		const { outcome, left } = await attempt(targz([skill, { path: 'docs/Guide.md', content: '1' }, { path: 'docs/guide.md', content: '2' }]));
		expect('error' in outcome && outcome.error).toMatchObject({ status: 422, message: expect.stringMatching(/docs\/guide\.md and docs\/Guide\.md differ only in case/) });
		expect(left).toEqual([]);
	});

	it('folders differing only in case', async () => {
		const { outcome } = await attempt(targz([skill, { path: 'Docs/a.md', content: '1' }, { path: 'docs/b.md', content: '2' }]));
		expect('error' in outcome && outcome.error).toMatchObject({ status: 422, message: expect.stringMatching(/docs and Docs differ only in case/) });
	});

	it('a skill whose names are portable: a folder listed before its files, names that only contain reserved words', async () => {
		const { outcome } = await attempt(
			targz([skill, { path: 'docs/', type: 'Directory' }, { path: 'docs/console.md', content: '1' }, { path: 'docs/com10.md', content: '2' }, { path: 'docs/a.b.c', content: '3' }]),
		);
		expect('files' in outcome && outcome.files.map((file) => file.path)).toEqual(['SKILL.md', 'docs/console.md', 'docs/com10.md', 'docs/a.b.c']);
	});

	it('more bytes in all than the limit', async () => {
		const files = Array.from({ length: 3 }, (_, index) => ({ path: `part${index}.bin`, content: Buffer.alloc(400_000) }));
		const { outcome, left } = await attempt(targz([skill, ...files]), { limits: { maxFiles: 1000, maxFileBytes: 1_000_000, maxTotalBytes: 1_000_000 } });
		expect('error' in outcome && outcome.error.message).toMatch(/more than 1000000 bytes in all/);
		expect(left).toEqual([]);
	});

	it('bytes that do not match the expected digest', async () => {
		const archive = targz([skill]);
		const { outcome, left } = await attempt(archive, { digest: sha256(Buffer.from('something else')) });
		expect('error' in outcome && outcome.error).toMatchObject({ status: 502, code: 'digest_mismatch' });
		expect(left).toEqual([]);
	});

	it('a cancelled extraction', async () => {
		const controller = new AbortController();
		controller.abort();
		const { outcome, left } = await attempt(targz([skill]), { signal: controller.signal });
		expect('error' in outcome && outcome.error).toMatchObject({ status: 499, code: 'cancelled' });
		expect(left).toEqual([]);
	});
});

describe('honest archives', () => {
	it('extracts files and folders, normalises paths, and sanitises modes', async () => {
		const archive = targz([
			{ path: './', type: 'Directory' },
			{ path: './SKILL.md', content: SKILL_MD('honest'), mode: 0o4755 },
			{ path: 'scripts/', type: 'Directory', mode: 0o777 },
			{ path: 'scripts//run.sh', content: 'echo\n', mode: 0o6777 },
			{ path: 'private.md', content: 'p', mode: 0o600 },
		]);
		const { into, outcome } = await attempt(archive, { digest: sha256(archive) });
		const hex = (text: string) => createHash('sha256').update(text).digest('hex');
		expect('files' in outcome && outcome.files).toEqual([
			{ path: 'SKILL.md', size: SKILL_MD('honest').length, sha256: hex(SKILL_MD('honest')), executable: true },
			{ path: 'scripts/run.sh', size: 5, sha256: hex('echo\n'), executable: true },
			{ path: 'private.md', size: 1, sha256: hex('p'), executable: false },
		]);
		// Execute bits are kept; setuid, setgid, sticky and write for others never are.
		expect((await stat(join(into, 'SKILL.md'))).mode & 0o7777).toBe(0o755);
		expect((await stat(join(into, 'scripts/run.sh'))).mode & 0o7777).toBe(0o755);
		expect((await stat(join(into, 'private.md'))).mode & 0o7777).toBe(0o600);
	});

});
