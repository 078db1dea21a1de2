/**
 * Tar archives written header by header, so tests can make the hostile ones no honest packer
 * makes: `..` and absolute paths, links, devices, thousands of files, gzip bombs.
 */
import { Header, Pax } from 'tar';
import { createGzip, gzipSync } from 'node:zlib';

export interface ArchiveEntry {
	readonly path: string;
	readonly type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'CharacterDevice' | 'BlockDevice' | 'FIFO';
	readonly content?: string | Buffer;
	readonly linkpath?: string;
	readonly mode?: number;
}

export function tarBlocks(entries: readonly ArchiveEntry[]): Buffer {
	const blocks: Buffer[] = [];
	for (const entry of entries) {
		const content = Buffer.from(entry.content ?? '');
		const header = new Header({
			path: entry.path,
			type: entry.type ?? 'File',
			mode: entry.mode ?? (entry.type === 'Directory' ? 0o755 : 0o644),
			size: entry.type === undefined || entry.type === 'File' ? content.length : 0,
			mtime: new Date(0),
			uid: 0,
			gid: 0,
			...(entry.linkpath !== undefined && { linkpath: entry.linkpath }),
		});
		// A path longer than the header holds goes in a PAX extended header before it.
		if (header.encode()) blocks.push(new Pax({ path: entry.path, mtime: new Date(0) }).encode());
		blocks.push(header.block!);
		if (header.size) blocks.push(content, Buffer.alloc((512 - (content.length % 512)) % 512));
	}
	blocks.push(Buffer.alloc(1024));
	return Buffer.concat(blocks);
}

export function targz(entries: readonly ArchiveEntry[]): Buffer {
	return gzipSync(tarBlocks(entries));
}

export const SKILL_MD = (name: string) => `---\nname: ${name}\ndescription: A hostile test skill.\n---\n# ${name}\n`;

/**
 * A gzip bomb: a valid skill archive followed by `zeros` bytes of zeros that no header
 * declares, as a multi-member gzip stream (one compressed 16 MiB run of zeros, repeated):
 * well under a MiB on the wire.
 */
export function gzipBomb(name: string, zeros: number): Buffer {
	const tar = tarBlocks([{ path: 'SKILL.md', content: SKILL_MD(name) }]);
	const run = gzipSync(Buffer.alloc(16 * 1024 * 1024), { level: 9 });
	return Buffer.concat([gzipSync(tar.subarray(0, tar.length - 1024)), ...Array.from({ length: Math.ceil(zeros / (16 * 1024 * 1024)) }, () => run)]);
}

/** A file whose header declares `size` bytes of zeros: tiny compressed, huge inflated. */
export async function declaredGiant(name: string, size: number): Promise<Buffer> {
	const gzip = createGzip({ level: 1 });
	const chunks: Buffer[] = [];
	gzip.on('data', (chunk: Buffer) => chunks.push(chunk));
	const done = new Promise((resolve) => gzip.on('end', resolve));
	const head = tarBlocks([{ path: 'SKILL.md', content: SKILL_MD(name) }]);
	gzip.write(head.subarray(0, head.length - 1024));
	const header = new Header({ path: 'big.bin', type: 'File', mode: 0o644, size, mtime: new Date(0), uid: 0, gid: 0 });
	header.encode();
	gzip.write(header.block!);
	// Only the header matters: the extractor must refuse before reading the body.
	gzip.write(Buffer.alloc(4096));
	gzip.end();
	await done;
	return Buffer.concat(chunks);
}
