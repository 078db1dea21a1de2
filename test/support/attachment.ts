/** Speaking to a stdio server through a runtime `Attachment`. */
import type { Attachment } from '../../server/runtime/runtime.js';

/** Sends `initialize` with request id `id`. */
export function sendInitialize(attachment: Attachment, id: number): void {
	attachment.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`);
}

/** The first line of the server's stdout that is a response. */
export function readLine(attachment: Attachment): Promise<Record<string, unknown>> {
	return new Promise((resolve) => {
		let buffered = '';
		attachment.onStdout((chunk) => {
			buffered += chunk.toString('utf8');
			const lines = buffered.split('\n').slice(0, -1).map((line) => JSON.parse(line) as Record<string, unknown>);
			const answer = lines.find((message) => 'id' in message);
			if (answer) resolve(answer);
		});
	});
}
