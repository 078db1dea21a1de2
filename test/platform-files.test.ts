/**
 * Writes that survive Windows sharing violations. A Windows rename over a file another program
 * holds open fails for a moment with EPERM; here the same refusal comes from the real file
 * system, a target made immutable (`chattr +i`, which makes Linux refuse the rename with EPERM
 * even to root), and the rename is told it runs on Windows.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renameRetrying } from '../server/store/atomic.js';

let work: string;
beforeAll(async () => (work = await mkdtemp(join(tmpdir(), 'hangar-rename-'))));
afterAll(() => rm(work, { recursive: true, force: true }));

const immutable = (path: string, on: boolean) => execFileSync('chattr', [on ? '+i' : '-i', path]);

function canMakeImmutable(): boolean {
	try {
		const probe = join(tmpdir(), `hangar-chattr-${process.pid}`);
		execFileSync('sh', ['-c', `: > '${probe}' && chattr +i '${probe}' && chattr -i '${probe}' && rm '${probe}'`], { stdio: 'ignore' });
		return true;
	} catch {
		return false;
	}
}

describe.skipIf(!canMakeImmutable())('a rename over a file held by another program (needs chattr and root)', () => {
	it('waits on Windows until the file is released, then puts the new file in place whole', async () => {
		const target = join(work, 'mcp.json');
		const next = join(work, '.mcp.json.tmp');
		await writeFile(target, 'old');
		await writeFile(next, 'new');
		immutable(target, true);
		const renamed = renameRetrying(next, target, 'win32');
		await new Promise((resolve) => setTimeout(resolve, 100));
		immutable(target, false); // the other program closes the file
		await renamed; // a rename that did not wait would have failed already
		expect(await readFile(target, 'utf8')).toBe('new');
		expect(await readdir(work)).toEqual(['mcp.json']);
	});

	it('gives up with what to do next when the file stays held, and leaves the old file as it was', async () => {
		const target = join(work, 'held.json');
		const next = join(work, '.held.json.tmp');
		await writeFile(target, 'old');
		await writeFile(next, 'new');
		immutable(target, true);
		try {
			await expect(renameRetrying(next, target, 'win32')).rejects.toMatchObject({ code: 'EPERM', message: expect.stringMatching(/held\.json stayed in use by another program \(EPERM\); close what holds it open and try again/) });
			expect(await readFile(target, 'utf8')).toBe('old');
		} finally {
			immutable(target, false);
		}
	});

	it('fails at once on Linux, where EPERM on a rename is no passing state', async () => {
		const target = join(work, 'linux.json');
		const next = join(work, '.linux.json.tmp');
		await writeFile(target, 'old');
		await writeFile(next, 'new');
		immutable(target, true);
		try {
			// The file system's own error, not the message of one that waited.
			await expect(renameRetrying(next, target, 'linux')).rejects.toMatchObject({ code: 'EPERM', syscall: 'rename' });
		} finally {
			immutable(target, false);
		}
	});
});
