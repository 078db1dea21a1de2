/**
 * MCP clients of every protocol revision, for the proxy fidelity tests: the official SDK 1.x
 * client asking for a given 2024–2025 revision (over Streamable HTTP or legacy SSE), the SDK
 * 2.x client at 2026-07-28, and the MCP Inspector CLI as a third-party client. The Inspector
 * and the conformance suite need Node 22, which scripts/test-services.sh puts in the cache.
 */
import { execFile } from 'node:child_process';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientCapabilities, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The revisions before the stateless one, oldest first; the SDK 1.x client speaks them all. */
export const LEGACY_REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'] as const;
export const MODERN_REVISION = '2026-07-28';
export const REVISIONS = [...LEGACY_REVISIONS, MODERN_REVISION] as const;
export type Revision = (typeof REVISIONS)[number];
export type ClientTransport = 'streamable-http' | 'sse';

/** What the fidelity tests do with a client, whichever SDK it comes from. */
export interface RevisionClient {
	/** The revision the handshake settled on, as the client saw it. */
	readonly negotiated: string | undefined;
	readonly serverName: string | undefined;
	listToolNames(): Promise<string[]>;
	callTool(name: string, args: Record<string, unknown>): Promise<unknown>;
	close(): Promise<void>;
}

/**
 * Makes the SDK 1.x client ask for `revision` in its `initialize` (the SDK always asks for its
 * latest) and records the revision it was answered with.
 */
function requesting(transport: Transport, revision: string): Transport & { negotiated?: string } {
	const wrapped = transport as Transport & { negotiated?: string };
	const send = transport.send.bind(transport);
	wrapped.send = (message: JSONRPCMessage, options) => {
		if ('method' in message && message.method === 'initialize') {
			return send({ ...message, params: { ...message.params, protocolVersion: revision } } as JSONRPCMessage, options);
		}
		return send(message, options);
	};
	const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
	wrapped.setProtocolVersion = (version: string) => {
		wrapped.negotiated = version;
		setProtocolVersion?.(version);
	};
	return wrapped;
}

export interface LegacyConnectOptions {
	revision: (typeof LEGACY_REVISIONS)[number];
	transport: ClientTransport;
	capabilities?: ClientCapabilities;
	headers?: Record<string, string>;
}

/** An SDK 1.x client that asked for `options.revision`; `url` without a fragment. */
export async function connectLegacy(url: string, options: LegacyConnectOptions): Promise<{ client: Client; negotiated: string | undefined }> {
	const client = new Client({ name: `hangar-test-${options.revision}`, version: '1.0.0' }, { capabilities: options.capabilities ?? {} });
	const target = new URL(url.split('#')[0]!);
	const requestInit = { headers: options.headers ?? {} };
	const transport = requesting(
		options.transport === 'sse' ? new SSEClientTransport(target, { requestInit }) : new StreamableHTTPClientTransport(target, { requestInit }),
		options.revision,
	);
	await client.connect(transport);
	return { client, negotiated: transport.negotiated };
}

/** An SDK 2.x client pinned to 2026-07-28 (the revision has no legacy SSE transport). */
export async function connectModern(url: string, capabilities: Record<string, unknown> = {}): Promise<ModernClient> {
	const client = new ModernClient(
		{ name: 'hangar-test-2026-07-28', version: '1.0.0' },
		{ capabilities, versionNegotiation: { mode: { pin: MODERN_REVISION } } },
	);
	await client.connect(new ModernHttpTransport(new URL(url.split('#')[0]!)));
	return client;
}

/** A client of `revision` over `transport`, reduced to what every SDK has in common. */
export async function connectAt(url: string, revision: Revision, transport: ClientTransport): Promise<RevisionClient> {
	if (revision === MODERN_REVISION) {
		if (transport !== 'streamable-http') throw new Error(`${MODERN_REVISION} has no ${transport} transport`);
		const client = await connectModern(url);
		return {
			negotiated: client.getNegotiatedProtocolVersion(),
			serverName: client.getServerVersion()?.name,
			listToolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
			callTool: (name, args) => client.callTool({ name, arguments: args }),
			close: () => client.close(),
		};
	}
	const { client, negotiated } = await connectLegacy(url, { revision, transport });
	return {
		negotiated,
		serverName: client.getServerVersion()?.name,
		listToolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
		callTool: (name, args) => client.callTool({ name, arguments: args }),
		close: () => client.close(),
	};
}

/** Where scripts/test-services.sh installs the Node 22 tools (it pins their versions). */
export const MCP_TOOLS = join(process.env.HANGAR_TEST_CACHE ?? join(homedir(), '.cache', 'hangar-test'), 'mcp');
const NODE22 = join(MCP_TOOLS, 'node22', 'bin', 'node');
const INSPECTOR = join(MCP_TOOLS, 'inspector', 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');

export interface ToolOutput {
	code: number;
	stdout: string;
	stderr: string;
}

/** Runs a Node 22 script to its end (no timeout of its own: the test's timeout bounds it). */
export function runNode22(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ToolOutput> {
	return new Promise((resolve, reject) => {
		execFile(NODE22, [script, ...args], { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
			if (error && typeof error.code !== 'number') return reject(error);
			resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
		});
	});
}

/**
 * Runs one method through the MCP Inspector CLI against `url` (Streamable HTTP for `/mcp`,
 * legacy SSE for `/sse`) and returns its JSON result. `home` keeps its catalog files out of
 * the user's home.
 */
export async function inspect(url: string, args: string[], options: { home: string; era?: 'legacy' | 'modern' }): Promise<unknown> {
	const output = await runNode22(
		INSPECTOR,
		// No connect timeout of its own: the test's timeout bounds the run, whatever the machine's speed.
		['--cli', url.split('#')[0]!, '--format', 'json', '--quiet', '--connect-timeout', '0', '--protocol-era', options.era ?? 'legacy', ...args],
		{ HOME: options.home },
	);
	if (output.code !== 0) throw new Error(`the Inspector CLI exited with ${output.code}: ${output.stderr || output.stdout}`);
	return JSON.parse(output.stdout);
}
