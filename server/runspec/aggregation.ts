/**
 * Aggregates: a workload whose image is `group://NAME` serves the workloads of group NAME as
 * one MCP server. It has no container; its proxy's backend is the aggregator
 * (proxy/backends/aggregate/), whose upstreams are the members' own proxies.
 */
import { groupOfImage } from '../../protocol/aggregateImage.js';
import { isServing, type StoredWorkload, type WorkloadStore } from './store.js';

/** The group whose workloads an aggregate serves; undefined for a workload that is not one. */
export function aggregatedGroupOf(workload: Pick<StoredWorkload, 'image'>): string | undefined {
	return groupOfImage(workload.image);
}

/** Whether `workload` is an aggregate's member: in `group` and not an aggregate itself. */
export function isMemberOf(workload: StoredWorkload, group: string): boolean {
	return (workload.group ?? 'default') === group && aggregatedGroupOf(workload) === undefined;
}

/** What every name an aggregate exposes matches (tools and prompts). */
export const EXPOSED_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Where a member serves: its proxy's Streamable HTTP endpoint, and which start of its proxy that is. */
export interface MemberEndpoint {
	/** Undefined while it does not serve. */
	readonly url: URL | undefined;
	/** The Unix socket its proxy serves `url`'s routes and the link (core/link.ts) on, when it has one. */
	readonly socket?: string;
	/** Changes when its proxy restarts (empty while it does not serve). */
	readonly generation: string;
}

/** The endpoint of workload `name`'s proxy, as its status and proxy records say now. */
export async function memberEndpoint(store: WorkloadStore, name: string): Promise<MemberEndpoint> {
	const [status, proxy] = await Promise.all([store.statuses.get(name).catch(() => undefined), store.proxies.get(name).catch(() => undefined)]);
	if (!status || !isServing(status.status) || !proxy) return { url: undefined, generation: '' };
	const host = proxy.host === '0.0.0.0' || proxy.host === '::' ? '127.0.0.1' : proxy.host;
	const url = new URL(`http://${host.includes(':') ? `[${host}]` : host}:${proxy.port}/mcp`);
	return { url, ...(proxy.socket ? { socket: proxy.socket } : {}), generation: `${proxy.pid}@${proxy.started_at}` };
}
