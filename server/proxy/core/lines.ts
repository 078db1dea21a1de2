/**
 * JSON-RPC as lines, one message of JSON each: how a stdio server speaks (backends/stdio.ts) and
 * what the link between an aggregate and a member's proxy carries (link.ts).
 */

/**
 * The longest line read from a stdio server or either end of a link, in characters: 4 Mi, as a
 * message over Streamable HTTP. Past it the reader stops, so a peer that never ends its line
 * cannot make the proxy buffer more.
 */
export const MAX_LINE_LENGTH = 4 * 1024 * 1024;

/** Where lines are written: a server's stdin, a link's request body or response. */
export interface LineSink {
	readonly writableCorked: number;
	cork(): void;
	uncork(): void;
	write(chunk: string): boolean;
}

/**
 * Writes `message` as a line. While other calls are in flight (`busy`), the lines of one turn of
 * the event loop (the requests read from every connection that had one) leave together, in one
 * system call rather than one each; a call alone goes at once, as there is nothing to wait for.
 */
export function writeLine(sink: LineSink, message: object, busy: boolean): void {
	if (busy && !sink.writableCorked) {
		sink.cork();
		setImmediate(() => sink.uncork());
	}
	sink.write(`${JSON.stringify(message)}\n`);
}
