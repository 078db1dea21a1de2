/**
 * The run configuration of an aggregate (image `group://NAME`, runspec/aggregation.ts): its
 * `aggregation` settings checked, each bad field named in a 400, and the fields that only a
 * container or a remote server has refused.
 */
import { HangarError } from '../../protocol/errors.js';
import type { AggregationConfig } from '../../protocol/runConfig.js';
import { aggregatedGroupOf, EXPOSED_NAME } from '../runspec/aggregation.js';
import { checkProviderUrl, ProviderError } from '../net/providerUrl.js';
import { resolveNames, type MemberList } from '../runspec/aggregationNames.js';
import { compositeProblems } from '../runspec/composite.js';
import type { StoredWorkload } from '../runspec/store.js';
import { invalid } from './fields.js';
import type { MemberTool } from './memberTools.js';

/** Request fields that configure a container or a remote server, which an aggregate has not. */
const SERVER_FIELDS = ['url', 'cmd_arguments', 'env_vars', 'secrets', 'volumes', 'target_port', 'permission_profile', 'oauth_config', 'header_forward', 'headers', 'session_mode'] as const;

export interface AggregateContext {
	/** The workload of that name, if any. */
	readonly workloadOf: (name: string) => Promise<StoredWorkload | undefined>;
	readonly groupExists: (group: string) => Promise<boolean>;
	/** The tools the group's serving members list now (memberTools.ts); without it, clashes are not looked for. */
	readonly memberTools?: (group: string) => Promise<MemberList<MemberTool>[]>;
}

/**
 * Checks an aggregate of `group`: the group exists and is not an aggregate's name, no member
 * setting names an aggregate, and the settings hold together; under `conflict: manual`, no tool
 * name of the serving members is left to two of them.
 */
export async function checkAggregate(group: string, request: Record<string, unknown>, aggregation: AggregationConfig | undefined, context: AggregateContext): Promise<void> {
	for (const field of SERVER_FIELDS) {
		const value = request[field];
		if (value !== undefined && !(Array.isArray(value) && value.length === 0) && !(typeof value === 'object' && value !== null && Object.keys(value).length === 0)) {
			throw invalid(field, `an aggregate (image group://${group}) has no server of its own to give ${field} to`);
		}
	}
	if (request.transport && request.transport !== 'streamable-http') throw invalid('transport', 'an aggregate is served over streamable-http (and legacy SSE on /sse)');
	if (!(await context.groupExists(group))) {
		const workload = await context.workloadOf(group);
		if (workload && aggregatedGroupOf(workload)) throw invalid('image', `${group} is an aggregate, not a group: an aggregate of an aggregate is not supported`);
		throw HangarError.notFound(`group '${group}' not found`, 'group_not_found');
	}
	if (!aggregation) return;
	checkEmbeddings(aggregation);
	const conflict = aggregation.conflict ?? 'prefix';
	if (aggregation.prefix_format !== undefined) {
		if (conflict !== 'prefix') throw invalid('aggregation.prefix_format', `only with conflict prefix (not ${conflict})`);
		if (!aggregation.prefix_format.includes('{workload}')) throw invalid('aggregation.prefix_format', 'must contain {workload}');
		if (!EXPOSED_NAME.test(aggregation.prefix_format.replaceAll('{workload}', 'x'))) throw invalid('aggregation.prefix_format', 'may hold only letters, digits, _ and - besides {workload}');
	}
	if (aggregation.priority !== undefined && conflict !== 'priority') throw invalid('aggregation.priority', `only with conflict priority (not ${conflict})`);
	if (conflict === 'priority' && !aggregation.priority?.length) throw invalid('aggregation.priority', 'conflict priority needs the ordered list of member names');
	const named = [...(aggregation.priority ?? []).map((name, index) => [name, `aggregation.priority[${index}]`] as const), ...Object.keys(aggregation.members ?? {}).map((name) => [name, `aggregation.members.${name}`] as const)];
	for (const [name, field] of named) {
		const workload = await context.workloadOf(name);
		if (workload && aggregatedGroupOf(workload)) throw invalid(field, `${name} is an aggregate: an aggregate of an aggregate is not supported`);
	}
	if (new Set(aggregation.priority).size !== (aggregation.priority?.length ?? 0)) throw invalid('aggregation.priority', 'names a member twice');
	for (const [member, settings] of Object.entries(aggregation.members ?? {})) {
		if (settings.exclude_all && settings.tools?.length) throw invalid(`aggregation.members.${member}.tools`, 'give either tools or exclude_all, not both');
		for (const [tool, override] of Object.entries(settings.overrides ?? {})) {
			const field = `aggregation.members.${member}.overrides.${tool}`;
			if (!override.name && !override.description) throw invalid(field, 'must have either name or description set');
			if (override.name !== undefined && !EXPOSED_NAME.test(override.name)) throw invalid(`${field}.name`, `${JSON.stringify(override.name)} does not match ${EXPOSED_NAME.source}`);
		}
	}
	if (aggregation.mode === 'code' && aggregation.code?.enabled === false) throw invalid('aggregation.code.enabled', 'mode code lists only run_code: leave enabled out, or choose another mode');
	const lists = context.memberTools && (conflict === 'manual' || aggregation.composite_tools?.length) ? await context.memberTools(group) : undefined;
	checkComposites(aggregation, lists);
	if (conflict === 'manual' && lists) {
		const [clash] = resolveNames(aggregation, lists, true).clashes;
		if (clash) {
			const [first, second] = clash.members;
			throw invalid(
				'aggregation.members',
				`tool ${clash.name} is held by ${first} and ${second} (conflict manual): rename one with aggregation.members.${second}.overrides.${clash.name}.name, or hide it from one (tools, exclude_all)`,
			);
		}
	}
}

/** The aggregate's own tools' names: no search or code tool's, none twice. */
const RESERVED_NAMES = ['find_tool', 'call_tool', 'run_code'];

/**
 * Composite tools: each name its own, each definition whole (runspec/composite.ts); each step's
 * tool one the serving members list, when they could be asked (`lists`).
 */
function checkComposites(aggregation: AggregationConfig, lists: readonly MemberList<MemberTool>[] | undefined): void {
	const names = new Set<string>();
	const served = lists && new Map(lists.map((list) => [list.member, new Set(list.items.map((tool) => tool.name))]));
	// A member not serving now is not judged: its tools are not known.
	const toolExists = served && ((member: string, tool: string) => !served.has(member) || served.get(member)!.has(tool));
	for (const [index, tool] of (aggregation.composite_tools ?? []).entries()) {
		const field = `aggregation.composite_tools[${index}]`;
		if (!EXPOSED_NAME.test(tool.name)) throw invalid(`${field}.name`, `${JSON.stringify(tool.name)} does not match ${EXPOSED_NAME.source}`);
		if (RESERVED_NAMES.includes(tool.name)) throw invalid(`${field}.name`, `${tool.name} is a tool of the aggregate's own modes`);
		if (names.has(tool.name)) throw invalid(`${field}.name`, `composite tool ${tool.name} is declared twice`);
		names.add(tool.name);
		const [problem] = compositeProblems(tool, field, toolExists);
		if (problem) throw invalid(problem.field, problem.message);
	}
}

/** An embeddings endpoint: only for search mode, at a URL the outbound-address policy lets an aggregate reach. */
function checkEmbeddings(aggregation: AggregationConfig): void {
	const embeddings = aggregation.search?.embeddings;
	if (!embeddings) return;
	if (aggregation.mode !== 'search') throw invalid('aggregation.search.embeddings', `ranks find_tool, which only mode search has (not ${aggregation.mode ?? 'all'})`);
	if (!embeddings.model.trim()) throw invalid('aggregation.search.embeddings.model', 'name the embedding model to ask for');
	if (embeddings.api_key_secret !== undefined && !embeddings.api_key_secret.trim()) throw invalid('aggregation.search.embeddings.api_key_secret', 'name a Hangar secret (hangar secret ls), or leave it out');
	try {
		checkProviderUrl(embeddings.url, { allowPrivateIP: embeddings.allow_private_ip, settings: { allowPrivateIP: 'aggregation.search.embeddings.allow_private_ip' } });
	} catch (error) {
		if (error instanceof ProviderError) throw invalid('aggregation.search.embeddings.url', error.message);
		throw error;
	}
}
