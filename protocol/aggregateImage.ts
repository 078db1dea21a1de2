/**
 * Aggregates, without zod: the image `group://NAME` (read by a workload's proxy, which does not
 * load zod) and what a client is offered of a group an aggregate serves.
 */
const GROUP_SCHEME = 'group://';

/** The group an aggregate's image `group://NAME` names, or undefined for any other image. */
export function groupOfImage(image: string | undefined): string | undefined {
	return image?.startsWith(GROUP_SCHEME) ? image.slice(GROUP_SCHEME.length) : undefined;
}

/**
 * What a client is offered of `workloads` (client files, VS Code's MCP servers): a group served
 * by an aggregate among them is reached through it, its other workloads (the members) left out,
 * so each member's tools reach the client once. `aggregated` is the group a workload serves as
 * an aggregate, if it is one.
 */
export function throughAggregates<T>(workloads: readonly T[], groupOf: (workload: T) => string, aggregated: (workload: T) => string | undefined): T[] {
	const served = new Set(workloads.map(aggregated).filter((group) => group !== undefined));
	return workloads.filter((workload) => aggregated(workload) !== undefined || !served.has(groupOf(workload)));
}
