/**
 * The transport of an image run without one, found instead of guessed: the image's labels
 * (`hangar.transport`, as Hangar labels its containers, or ToolHive's `toolhive-transport`),
 * else a probe: a throwaway container that a stdio server answers `initialize` in on its
 * stdin. One that does not answer is taken to serve HTTP (streamable-http).
 */
import { randomBytes } from 'node:crypto';
import type { Attachment, Runtime } from '../runtime/runtime.js';
import { within } from '../within.js';

export type ImageTransport = 'stdio' | 'sse' | 'streamable-http';

const TRANSPORT_LABELS = ['hangar.transport', 'toolhive-transport'];
const TRANSPORTS = new Set<string>(['stdio', 'sse', 'streamable-http']);
/** How long a stdio server may take to answer `initialize` (a cold Node or Python start). */
const PROBE_MS = 15_000;
const PROBE_ID = 'hangar-transport-probe';

export interface ProbeTarget {
	readonly image: string;
	readonly args: readonly string[];
	readonly env: Readonly<Record<string, string>>;
	/** The workload's container name; the probe's is derived from it. */
	readonly containerName: string;
}

/** The transport of `target.image`, and how it was found (for the log and the progress). */
export async function discoverTransport(runtime: Runtime, target: ProbeTarget): Promise<{ transport: ImageTransport; found: string }> {
	const labels = await runtime.imageLabels(target.image);
	for (const label of TRANSPORT_LABELS) {
		const value = labels[label];
		if (value && TRANSPORTS.has(value)) return { transport: value as ImageTransport, found: `the image's label ${label}` };
	}
	return (await answersOnStdin(runtime, target))
		? { transport: 'stdio', found: 'a probe: the server answered initialize on its stdin' }
		: { transport: 'streamable-http', found: 'a probe: the server did not answer on its stdin' };
}

async function answersOnStdin(runtime: Runtime, target: ProbeTarget): Promise<boolean> {
	const id = await runtime.create({
		name: `${target.containerName}-probe-${randomBytes(3).toString('hex')}`,
		image: target.image,
		args: target.args,
		env: { ...target.env, MCP_TRANSPORT: 'stdio' },
		labels: { 'hangar.probe': 'true' },
		interactive: true,
		mounts: [],
		network: 'none',
		restartPolicy: 'no',
	});
	let attachment: Attachment | undefined;
	try {
		attachment = await runtime.attach(id);
		await runtime.start(id);
		const answered = answerOf(attachment);
		attachment.stdin.write(
			`${JSON.stringify({ jsonrpc: '2.0', id: PROBE_ID, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'hangar-probe', version: '1' } } })}\n`,
		);
		return await within(Promise.race([answered, attachment.closed.then(() => false)]), PROBE_MS, false);
	} finally {
		attachment?.close();
		await runtime.remove(id);
	}
}

/** Resolves true once a line of stdout answers the probe's `initialize`. */
function answerOf(attachment: Attachment): Promise<true> {
	return new Promise((resolve) => {
		let buffered = '';
		attachment.onStdout((chunk) => {
			buffered += chunk.toString('utf8');
			const lines = buffered.split('\n');
			buffered = lines.pop() ?? '';
			for (const line of lines) {
				try {
					if ((JSON.parse(line) as { id?: unknown }).id === PROBE_ID) resolve(true);
				} catch {
					// a line that is not JSON: a log on stdout, not an answer
				}
			}
		});
	});
}
