/**
 * Aggregates: a workload whose image is `group://NAME` serves the workloads of group NAME as
 * one MCP server. It has no container; its proxy's backend is the aggregator
 * (proxy/backends/aggregate/), whose upstreams are the members' own proxies.
 */
import type { StoredWorkload } from './store.js';

export const GROUP_SCHEME = 'group://';

/** The group an image `group://NAME` names, or undefined for any other image. */
export function groupOfImage(image: string | undefined): string | undefined {
	return image?.startsWith(GROUP_SCHEME) ? image.slice(GROUP_SCHEME.length) : undefined;
}

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
