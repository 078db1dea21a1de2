/**
 * A lean MCP load generator: raw keep-alive HTTP POSTs after one `initialize`, answers parsed
 * just enough to find the response (JSON, or the SSE event that carries it). The SDK's client
 * spends about a core on its own under load; this one leaves the machine to the front under
 * measurement, so the fronts' own costs show.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

const ECHO_ARGUMENTS = { message: 'hello from the benchmark' };
const TICKS_PER_SECOND = 100;

export interface LeanSession {
	/** One `tools/call` (echo, or the call the session was opened with); rejects unless a result comes back. */
	call(): Promise<void>;
	close(): void;
}

interface Answer {
	readonly status: number;
	readonly sessionId: string | undefined;
	readonly body: string;
}

/**
 * One POST. A front may close an idle keep-alive connection just as a request goes out on it
 * (the alternating rounds leave each front idle for a while): that request is sent again on a
 * new connection, as Node's documentation advises.
 */
function post(agent: Agent, url: URL, headers: Record<string, string>, payload: string): Promise<Answer> {
	return postOnce(agent, url, headers, payload).catch((error: NodeJS.ErrnoException & { reusedSocket?: boolean }) => {
		if (error.reusedSocket && error.code === 'ECONNRESET') return postOnce(agent, url, headers, payload);
		throw error;
	});
}

function postOnce(agent: Agent, url: URL, headers: Record<string, string>, payload: string): Promise<Answer> {
	return new Promise((resolve, reject) => {
		const outgoing = request(
			url,
			{
				method: 'POST',
				agent,
				headers: { ...headers, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Content-Length': Buffer.byteLength(payload) },
			},
			(response) => {
				const chunks: Buffer[] = [];
				response.on('data', (chunk: Buffer) => chunks.push(chunk));
				response.on('end', () =>
					resolve({ status: response.statusCode ?? 0, sessionId: response.headers['mcp-session-id'] as string | undefined, body: Buffer.concat(chunks).toString('utf8') }),
				);
				response.on('error', reject);
			},
		);
		outgoing.on('error', (error) => reject(Object.assign(error, { reusedSocket: outgoing.reusedSocket })));
		outgoing.end(payload);
	});
}

/** The response to request `id` in a JSON body or an event stream: `"result"` present, or an error. */
function checkAnswer(answer: Answer, id: number): void {
	if (answer.status !== 200) throw new Error(`HTTP ${answer.status}: ${answer.body.slice(0, 200)}`);
	const marker = `"id":${id}`;
	const line = answer.body.startsWith('{') ? answer.body : answer.body.split('\n').find((candidate) => candidate.startsWith('data:') && candidate.includes(marker));
	if (!line?.includes('"result"')) throw new Error(`no result for request ${id}: ${answer.body.slice(0, 200)}`);
}

/**
 * Opens one session (Streamable HTTP, 2025-06-18): `initialize`, `notifications/initialized`,
 * then one `tools/list` as a client does before it calls (Hangar's tool pinning checks calls
 * against what was listed). `headers` go with every request (a bearer token, say); `tool` is the
 * echo tool's name where the server exposes it under another (an aggregate prefixes it), or the
 * name of the tool `args` are for.
 */
export async function openSession(address: string, headers: Record<string, string> = {}, tool = 'echo', args: Record<string, unknown> = ECHO_ARGUMENTS): Promise<LeanSession> {
	const echo = { name: tool, arguments: args };
	const url = new URL(address);
	const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
	const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lean-bench', version: '1.0.0' } } };
	const opened = await post(agent, url, headers, JSON.stringify(initialize));
	checkAnswer(opened, 0);
	const session = { ...headers, ...(opened.sessionId ? { 'Mcp-Session-Id': opened.sessionId } : {}), 'MCP-Protocol-Version': '2025-06-18' };
	await post(agent, url, session, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
	checkAnswer(await post(agent, url, session, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })), 1);
	let nextId = 2;
	return {
		async call() {
			const id = nextId++;
			checkAnswer(await post(agent, url, session, JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: echo })), id);
		},
		close: () => agent.destroy(),
	};
}

const HAS_SCHEDSTAT = (() => {
	try {
		return readFileSync('/proc/self/schedstat', 'utf8').length > 0;
	} catch {
		return false;
	}
})();

/**
 * CPU seconds a process has used so far, from /proc: the sum of its threads' run time in
 * nanoseconds (`schedstat`) where the kernel keeps it, since the user + system times of `stat`
 * count in 10 ms ticks, coarser than a short round's whole share of CPU. The threads of a Node
 * process live as long as it does; one that ends between the listing and its read is skipped.
 */
export function cpuSecondsOf(pid: number): number {
	if (HAS_SCHEDSTAT) {
		let nanoseconds = 0;
		for (const thread of readdirSync(`/proc/${pid}/task`)) {
			try {
				nanoseconds += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ', 1)[0]);
			} catch {
				// ended meanwhile
			}
		}
		return nanoseconds / 1e9;
	}
	const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
	// Fields after the command name, which is in parentheses and may contain spaces.
	const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
	return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}
