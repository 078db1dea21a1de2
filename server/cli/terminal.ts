/**
 * The CLI's output, guarded at one place: once `guardOutput` ran, every string written to stdout
 * or stderr has its control characters made visible (`protocol/visibleText.ts`), whichever print
 * site wrote it, so a server's text (a status reason, a log line, a tool's text, an error) cannot
 * clear the screen, move the cursor or write the clipboard (OSC 52). The CLI's own sequences
 * (progress lines redrawn in place, `hangar top`'s screen) go through `writeControl`.
 */
import { visibleText } from '../../protocol/visibleText.js';

const originals = new Map<NodeJS.WriteStream, NodeJS.WriteStream['write']>();

export function guardOutput(streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
	for (const stream of streams) {
		if (originals.has(stream)) continue;
		const write = stream.write.bind(stream) as NodeJS.WriteStream['write'];
		originals.set(stream, write);
		stream.write = ((chunk: unknown, ...rest: unknown[]) =>
			(write as (chunk: unknown, ...rest: unknown[]) => boolean)(typeof chunk === 'string' ? visibleText(chunk) : chunk, ...rest)) as NodeJS.WriteStream['write'];
	}
}

/** Writes one of the CLI's own terminal sequences as it is. */
export function writeControl(stream: NodeJS.WriteStream, sequence: string): void {
	(originals.get(stream) ?? stream.write.bind(stream))(sequence);
}
