/**
 * The one size-capped body reader, for requests Hangar serves and answers it fetches: it
 * stops reading at the first chunk past the cap, so a peer cannot make Hangar buffer more.
 * `readCapped` reads any async iterable (a fetch body), `readBody` a Node stream (a request
 * the proxy serves, an answer of its HTTP backend), `readLines` a body that stays open as lines
 * (the proxy's link; `lineSplitter` splits any bytes so), and `sendJson` writes a JSON answer.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** A body went past its cap; the caller turns it into its own error (413, a refused source…). */
export class BodyTooLarge extends Error {
	override readonly name = 'BodyTooLarge';

	constructor(readonly limit: number) {
		super(`body larger than ${limit} bytes`);
	}
}

/** Reads a body of at most `limit` bytes; `onChunk` runs on every chunk (to refresh an inactivity timer). */
export async function readCapped(body: AsyncIterable<Uint8Array>, limit: number, onChunk?: () => void): Promise<Buffer> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of body) {
		onChunk?.();
		size += chunk.byteLength;
		if (size > limit) throw new BodyTooLarge(limit);
		chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
	}
	return Buffer.concat(chunks);
}

/**
 * Reads a Node stream of at most `limit` bytes and resolves with what `parse` makes of it (a
 * throw of `parse` rejects). Past the cap it rejects with what `tooLarge` makes (BodyTooLarge
 * without) and drains the rest unread. Events rather than async iteration, and one promise:
 * the proxy reads every request so.
 */
export function readBody<T>(stream: Readable, limit: number, parse: (body: Buffer) => T, tooLarge: () => Error = () => new BodyTooLarge(limit)): Promise<T> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		let size = 0;
		stream.on('data', (chunk: Buffer) => {
			size += chunk.length;
			if (size > limit) {
				stream.removeAllListeners('data');
				stream.resume();
				reject(tooLarge());
			} else {
				chunks.push(chunk);
			}
		});
		// `on`, not `once`: each `once` wraps its listener, and both events come once anyway.
		stream.on('error', reject);
		stream.on('end', () => {
			try {
				resolve(parse(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
			} catch (error) {
				reject(error);
			}
		});
	});
}

/**
 * Splits bytes into lines as they come (a stdio server's output, a link): each line that is not
 * blank goes to `onLine`. A line over `maxLength` characters calls `tooLong` once, and nothing
 * after it is split.
 */
export function lineSplitter(onLine: (line: string) => void, maxLength = Infinity, tooLong: () => void = () => undefined): (chunk: Buffer) => void {
	const decoder = new StringDecoder('utf8');
	let buffered = '';
	let stopped = false;
	const stop = () => {
		stopped = true;
		buffered = '';
		tooLong();
	};
	return (chunk) => {
		if (stopped) return;
		buffered += decoder.write(chunk);
		for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
			if (newline > maxLength) return stop();
			const line = buffered.slice(0, newline);
			buffered = buffered.slice(newline + 1);
			if (line.trim()) onLine(line);
		}
		if (buffered.length > maxLength) stop();
	};
}

/**
 * Reads `stream` line by line as it comes (see `lineSplitter`); a line over `maxLength`
 * characters stops the reading (the rest is drained unread) and calls `tooLong`.
 */
export function readLines(stream: Readable, maxLength: number, onLine: (line: string) => void, tooLong: () => void): void {
	stream.on(
		'data',
		lineSplitter(onLine, maxLength, () => {
			stream.removeAllListeners('data');
			stream.resume();
			tooLong();
		}),
	);
}

/** Writes `body` as the JSON answer, with `headers` besides its type and length. */
export function sendJson(response: ServerResponse, status: number, body: unknown, headers?: Readonly<OutgoingHttpHeaders>): void {
	const text = JSON.stringify(body);
	const all: OutgoingHttpHeaders = Object.assign({}, headers);
	all['Content-Type'] = 'application/json';
	all['Content-Length'] = Buffer.byteLength(text);
	response.writeHead(status, all).end(text);
}
