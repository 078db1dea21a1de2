/**
 * Safe extraction of a skill layer (a gzip tar) into a fresh folder.
 *
 * Every entry is checked before anything of it is written: regular files and folders only
 * (no symlinks, hardlinks, devices, pipes or unknown types), relative paths without `..`,
 * names of at most 255 bytes and paths of at most 1024 (what every file system takes, below the
 * client folder), names Windows and a case-insensitive disk can hold (`portableNames.ts`), at
 * most 1000 files and 2000 entries of any kind, 100 MB per file and 500 MB in
 * all, and decompression stops when the stream outgrows what the headers declared (a gzip
 * bomb). Modes are sanitised: execute bits are kept, never setuid/setgid/sticky, never write
 * for others (at most 0755). Any refusal removes the folder: nothing is left.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { finished } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { HangarError } from '../../protocol/errors.js';
import { CaseCollisions, unportableNameProblem } from './portableNames.js';

export interface ExtractionLimits {
	readonly maxFiles: number;
	/** Entries of any kind (files and folders): a layer of empty folders costs as much as files. */
	readonly maxEntries?: number;
	readonly maxFileBytes: number;
	readonly maxTotalBytes: number;
}

export const DEFAULT_LIMITS: ExtractionLimits = {
	maxFiles: 1000,
	maxEntries: 2000,
	maxFileBytes: 100 * 1000 * 1000,
	maxTotalBytes: 500 * 1000 * 1000,
};

export interface ExtractOptions {
	/** The compressed bytes must have this digest, or nothing is kept. */
	readonly digest?: string;
	readonly limits?: ExtractionLimits;
	readonly signal?: AbortSignal;
}

export interface ExtractedFile {
	readonly path: string;
	readonly size: number;
	/** Hex sha256 of the content, when it was hashed on the way (see `contentDigest`). */
	readonly sha256?: string;
	/** The file keeps execute bits (a script). */
	readonly executable?: boolean;
}

/** Longest name of one path component on Linux and macOS file systems. */
export const MAX_NAME_BYTES = 255;
/** Longest path inside a skill: leaves room below PATH_MAX (4096) for the client folder above it. */
export const MAX_PATH_BYTES = 1024;

/** A file's mode in a skill: readable by its owner, execute bits where it can be read, nothing more. */
export function skillFileMode(mode: number): number {
	const readable = (mode & 0o644) | 0o600;
	return mode & 0o111 ? readable | ((readable & 0o444) >> 2) : readable;
}

/** Decompressed bytes allowed beyond the declared contents: headers, padding, end blocks. */
const SLACK_BYTES = 1024 * 1024;

export function unsafeArchive(message: string): HangarError {
	return new HangarError(422, `refusing skill archive: ${message}`, 'unsafe_archive');
}

/** Extracts `source` into `into`, which must not exist yet; returns the files written. */
export async function extractSkillArchive(source: AsyncIterable<Buffer>, into: string, options: ExtractOptions = {}): Promise<ExtractedFile[]> {
	await mkdir(dirname(into), { recursive: true });
	await mkdir(into, { mode: 0o755 });
	try {
		return await unpack(source, into, options);
	} catch (error) {
		await rm(into, { recursive: true, force: true });
		throw error;
	}
}

async function unpack(source: AsyncIterable<Buffer>, into: string, options: ExtractOptions): Promise<ExtractedFile[]> {
	const { Parser } = await import('tar');
	const limits = options.limits ?? DEFAULT_LIMITS;
	const files: ExtractedFile[] = [];
	const folders = new Set<string>(['']);
	const collisions = new CaseCollisions();
	let declared = 0;
	let entries = 0;
	let failure: Error | undefined;
	let writing: Promise<void> = Promise.resolve();
	let output: NodeJS.WritableStream & { destroy(error?: Error): void } | undefined;
	const fail = (error: Error) => (failure ??= error);

	const parser = new Parser({ strict: true, maxMetaEntrySize: 1024 * 1024 });
	parser.on('warn', (_code: string, message: string | Error) => fail(unsafeArchive(`invalid tar: ${String(message)}`)));
	parser.on('error', (error: Error) => fail(unsafeArchive(`invalid tar: ${error.message}`)));
	parser.on('ignoredEntry', (entry: { type: string; path: string }) => fail(unsafeArchive(`unsupported entry ${entry.path} (${entry.type})`)));
	const maxEntries = limits.maxEntries ?? limits.maxFiles * 2;
	parser.on('entry', (entry) => {
		if (++entries > maxEntries) {
			fail(unsafeArchive(`more than ${maxEntries} entries`));
			entry.resume();
			return;
		}
		const problem = checkEntry(entry.type, entry.path, entry.size ?? 0, limits);
		const path = problem ? undefined : normalise(entry.path);
		const unportable = path ? (unportableNameProblem(path) ?? collisions.add(path)) : undefined;
		if (problem || unportable || path === undefined) {
			fail(unsafeArchive(problem ?? unportable ?? `invalid path ${JSON.stringify(entry.path)}`));
			entry.resume();
			return;
		}
		if (entry.type === 'Directory') {
			entry.resume();
			if (path) folders.add(path);
			writing = writing
				.then(() => (failure || !path ? undefined : mkdir(join(into, path), { recursive: true, mode: 0o755 }).then(() => undefined)))
				.catch((error: NodeJS.ErrnoException) => void fail(fileSystemRefusal(error, path)));
			return;
		}
		if (!path) {
			fail(unsafeArchive('a file entry without a name'));
			entry.resume();
			return;
		}
		declared += entry.size;
		if (files.length + 1 > limits.maxFiles) fail(unsafeArchive(`more than ${limits.maxFiles} files`));
		else if (declared > limits.maxTotalBytes) fail(unsafeArchive(`more than ${limits.maxTotalBytes} bytes in all`));
		if (failure) {
			entry.resume();
			return;
		}
		const mode = skillFileMode(entry.mode ?? 0o644);
		const file: { path: string; size: number; sha256?: string; executable: boolean } = { path, size: entry.size, executable: (mode & 0o100) !== 0 };
		files.push(file);
		const target = join(into, path);
		entry.pause();
		writing = writing
			.then(async () => {
				if (failure) return void entry.resume();
				await mkdir(dirname(target), { recursive: true, mode: 0o755 }).catch((error: NodeJS.ErrnoException) => {
					throw error.code === 'EEXIST' || error.code === 'ENOTDIR' ? unsafeArchive(`${path} is inside a file`) : error;
				});
				// `wx`: never through an existing file or link, never twice the same path.
				const stream = createWriteStream(target, { flags: 'wx', mode });
				output = stream;
				const digest = createHash('sha256');
				// Hash on the way to the file, so no one reads it back to know its digest.
				entry.on('data', (chunk: Buffer) => {
					digest.update(chunk);
					if (!stream.write(chunk)) entry.pause();
				});
				stream.on('drain', () => entry.resume());
				entry.on('end', () => stream.end());
				entry.resume();
				await finished(stream);
				file.sha256 = digest.digest('hex');
			})
			.catch((error: NodeJS.ErrnoException) => {
				entry.resume();
				fail(error.code === 'EEXIST' ? unsafeArchive(`${path} appears twice`) : fileSystemRefusal(error, path));
			});
	});

	const hash = options.digest ? createHash(options.digest.split(':')[0]!) : undefined;
	const gunzip = createGunzip();
	const compressed: Promise<Error | undefined> = (async () => {
		try {
			for await (const chunk of source) {
				if (options.signal?.aborted) throw HangarError.cancelled('extracting the skill');
				hash?.update(chunk);
				// After a refusal the rest is still read: a digest mismatch is the cause to report.
				if (failure || gunzip.destroyed) continue;
				if (!gunzip.write(chunk)) await drained(gunzip);
			}
		} finally {
			gunzip.end();
		}
	})().then(
		() => undefined,
		(error: Error) => error,
	);

	let inflated = 0;
	try {
		for await (const chunk of gunzip as AsyncIterable<Buffer>) {
			inflated += chunk.length;
			if (inflated > declared + (entries + 2) * 1024 + SLACK_BYTES) fail(unsafeArchive('decompresses to more than its entries declare (gzip bomb)'));
			if (failure) break;
			if (!parser.write(chunk)) await new Promise((resolve) => parser.once('drain', resolve));
		}
	} catch (error) {
		fail(unsafeArchive(`invalid gzip: ${(error as Error).message}`));
	}
	gunzip.destroy();
	// A failing source (cancelled, cut off, wrong digest upstream) is the cause to report.
	const sourceError = await compressed;
	if (sourceError) failure = sourceError;
	if (!failure) await new Promise<void>((resolve) => parser.end(resolve));
	// A file cut off by a failure will never get the rest of its bytes.
	if (failure) output?.destroy(failure);
	await writing;
	if (options.digest && hash && !sourceError) {
		const digest = `${options.digest.split(':')[0]}:${hash.digest('hex')}`;
		if (digest !== options.digest) throw new HangarError(502, `skill layer has digest ${digest}, expected ${options.digest}`, 'digest_mismatch');
	}
	if (failure) throw failure;
	return files;
}

/** A write the file system refused because of the archive (a name too long for it) as a 422; other errors as they are. */
function fileSystemRefusal(error: NodeJS.ErrnoException, path: string): Error {
	if (error.code === 'ENAMETOOLONG') return unsafeArchive(`${path.slice(0, 40)}… is longer than this file system allows`);
	if (error.code === 'ENOTDIR' || error.code === 'EEXIST') return unsafeArchive(`${path} is inside a file`);
	return error;
}

/** Resolves when a writable stream wants more, or will never want any. */
function drained(stream: NodeJS.EventEmitter): Promise<void> {
	return new Promise((resolve) => {
		const done = () => {
			stream.off('drain', done).off('close', done).off('error', done);
			resolve();
		};
		stream.on('drain', done).on('close', done).on('error', done);
	});
}

/** Why an entry may not be extracted, or undefined when it may. */
function checkEntry(type: string, path: string, size: number, limits: ExtractionLimits): string | undefined {
	if (type === 'SymbolicLink') return `${path} is a symlink`;
	if (type === 'Link') return `${path} is a hardlink`;
	if (type === 'CharacterDevice' || type === 'BlockDevice') return `${path} is a device`;
	if (type === 'FIFO') return `${path} is a named pipe`;
	if (type !== 'File' && type !== 'OldFile' && type !== 'ContiguousFile' && type !== 'Directory') return `${path} has unsupported type ${type}`;
	if (path.includes('\0') || path.includes('\\')) return `${JSON.stringify(path)} has a NUL or backslash`;
	if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return `${path} is an absolute path`;
	if (path.split('/').includes('..')) return `${path} leaves the skill folder`;
	const long = path.split('/').find((part) => Buffer.byteLength(part) > MAX_NAME_BYTES);
	if (long) return `${long.slice(0, 40)}… has a name longer than ${MAX_NAME_BYTES} bytes`;
	if (Buffer.byteLength(path) > MAX_PATH_BYTES) return `${path.slice(0, 40)}… has a path of ${Buffer.byteLength(path)} bytes; at most ${MAX_PATH_BYTES}`;
	if (size > limits.maxFileBytes) return `${path} has ${size} bytes; at most ${limits.maxFileBytes} per file`;
	return undefined;
}

/** `./a//b/` → `a/b`; undefined for a path that is not plain. */
function normalise(path: string): string | undefined {
	const parts = path.split('/').filter((part) => part !== '' && part !== '.');
	return parts.every((part) => part !== '..') ? parts.join('/') : undefined;
}
