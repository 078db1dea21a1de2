/**
 * The tools an aggregate's members list now, asked through each serving member's own proxy (as
 * the aggregate will ask them), so the workloads service can resolve the aggregate's names when
 * it is created: `conflict: manual` with a clash left unresolved is refused then.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isMemberOf, memberEndpoint } from '../runspec/aggregation.js';
import type { MemberList } from '../runspec/aggregationNames.js';
import type { WorkloadStore } from '../runspec/store.js';
import { VERSION } from '../version.js';

/** How long each member may take to list; one that does not answer is left out. */
const MEMBER_WAIT_MS = 10_000;

export interface MemberTool {
	readonly name: string;
	readonly description?: string;
}

/** The serving members' tool lists of `group` (a member not serving, or not answering in time, is left out). */
export async function memberTools(store: WorkloadStore, group: string, signal?: AbortSignal): Promise<MemberList<MemberTool>[]> {
	const members = (await store.configs.list()).filter((config) => isMemberOf(config, group));
	const lists = await Promise.all(
		members.map(async ({ name }) => {
			const { url } = await memberEndpoint(store, name);
			if (!url) return undefined;
			const bounded = AbortSignal.any([AbortSignal.timeout(MEMBER_WAIT_MS), ...(signal ? [signal] : [])]);
			return listTools(url, bounded).then(
				(items) => ({ member: name, items }),
				() => undefined,
			);
		}),
	);
	return lists.filter((list) => list !== undefined);
}

async function listTools(url: URL, signal: AbortSignal): Promise<MemberTool[]> {
	// As the aggregate asks (no client capabilities): the tools a client declaring none sees.
	const client = new Client({ name: 'hangar-aggregate-check', version: VERSION }, { capabilities: {} });
	try {
		await client.connect(new StreamableHTTPClientTransport(url), { signal });
		if (!client.getServerCapabilities()?.tools) return [];
		const tools: MemberTool[] = [];
		let cursor: string | undefined;
		do {
			const page = await client.listTools(cursor ? { cursor } : {}, { signal });
			tools.push(...page.tools);
			cursor = page.nextCursor;
		} while (cursor);
		return tools;
	} finally {
		await client.close().catch(() => undefined);
	}
}
