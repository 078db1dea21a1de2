/**
 * The zod schemas of the records on disk that are read without zod: those a workload's proxy
 * reads (run configuration, status, proxy record, pins, the pinning default), and those the
 * everyday commands read (groups, clients, installed skills, the build defaults a workload's service holds). The TypeScript types and the one definition of each. The stores do not
 * parse with them: they check with the JSON Schemas generated from them (records.generated.ts,
 * written by `npm run records`; a test keeps the two equal), so that neither a proxy nor a
 * command's start loads zod.
 */
import { z } from 'zod';
import { Group } from '../../protocol/protocol.groups.js';
import { RestartPolicy, WorkloadStatus } from '../../protocol/protocol.workloads.js';
import { RegistryHeader } from '../../protocol/registryTypes.js';
import { RunConfig, RuntimeConfig, ToolPinning } from '../../protocol/runConfig.js';
import type { JsonSchema } from '../store/jsonSchema.js';

export const StoredWorkload = RunConfig.extend({
	name: z.string(),
	created_at: z.string(),
	/** Hangar: the image built for a package reference (`image` is then the pinned `npx://…`). */
	built_image: z.string().optional(),
	restart_policy: RestartPolicy,
	/** Seconds; absent means the proxy's default. */
	request_timeout: z.number().int().optional(),
	/** Seconds a request may take in all, progress or not; absent means the proxy's default. */
	request_timeout_max: z.number().int().optional(),
	/** Headers a remote server accepts (from its registry entry or the request). */
	headers: z.array(RegistryHeader).optional(),
	/** Port of the egress proxy on the isolated network's gateway, for a network-isolated container. */
	egress_port: z.number().int().optional(),
});
export type StoredWorkload = z.infer<typeof StoredWorkload>;

export const StoredStatus = z.object({
	status: WorkloadStatus,
	status_context: z.string().optional(),
	started_at: z.string().optional(),
	updated_at: z.string(),
});
export type StoredStatus = z.infer<typeof StoredStatus>;

/** `unauthenticated` and `auth_retrying`: a remote server behind OAuth the proxy cannot get a token for (upstreamAuth/). */
export const BackendState = z.enum(['connecting', 'connected', 'disconnected', 'unauthenticated', 'auth_retrying']);
export type BackendState = z.infer<typeof BackendState>;

export const ProxyRecord = z.object({
	pid: z.number().int(),
	host: z.string(),
	port: z.number().int(),
	/**
	 * A Unix socket serving the same routes behind the same middleware, and the link the aggregates
	 * of the workload's group reach it by (core/link.ts); only its user may connect.
	 */
	socket: z.string().optional(),
	started_at: z.string(),
	backend: BackendState,
	backend_detail: z.string().optional(),
	/** The bearer token of the proxy's statistics (see `stats.ts`). */
	stats_token: z.string().optional(),
	/** Replicas with `session_redis`: false while Redis does not answer (sessions stay on their replica). */
	sessions_shared: z.boolean().optional(),
	/** The tool pinning policy the proxy started with (its run configuration's, else the global default then). */
	tool_pinning: ToolPinning.optional(),
});
export type ProxyRecord = z.infer<typeof ProxyRecord>;

// Pins (pins/store.ts)

export const FlagRecord = z.object({
	rule: z.enum(['hidden_unicode', 'zero_width', 'model_directive', 'other_tools', 'credentials', 'home_path', 'long_description']),
	detail: z.string(),
});

/** One definition with its fingerprint and the flags found in it. */
export const PinnedItem = z.object({
	fingerprint: z.string(),
	definition: z.record(z.string(), z.unknown()),
	flags: z.array(FlagRecord).optional(),
	/** When it was pinned (approved or first seen); absent on what was only seen. */
	pinned_at: z.string().optional(),
});
export type PinnedItem = z.infer<typeof PinnedItem>;

/** The last list the proxy passed on to clients of one capability set (its first page onwards). */
export const Observation = z.object({
	at: z.string(),
	/** The list came whole (one page): a pinned name missing from it was removed. */
	complete: z.boolean(),
	items: z.record(z.string(), PinnedItem),
	/** Names the list carried more than once. */
	duplicates: z.array(z.string()).optional(),
	/** The pages of the set's first list are still coming: what they add is pinned on sight too. */
	initial: z.boolean().optional(),
});
export type Observation = z.infer<typeof Observation>;

export const KindPins = z.object({
	pinned: z.record(z.string(), PinnedItem),
	/** By capability set (capabilities.ts). */
	observed: z.record(z.string(), Observation),
});
export type KindPins = z.infer<typeof KindPins>;

export const WorkloadPins = z.object({
	tools: KindPins.optional(),
	prompts: KindPins.optional(),
});
export type WorkloadPins = z.infer<typeof WorkloadPins>;

/** `<config>/tool-pinning.json` (pins/policy.ts). */
export const PinningDefaults = z.object({ tool_pinning: ToolPinning.optional() });
export type PinningDefaults = z.infer<typeof PinningDefaults>;

/** `<state>/groups/<name>.json` (groups/store.ts). */
export const StoredGroup = Group.extend({
	registered_clients: z.array(z.string()),
	skills: z.array(z.string()),
});
export type StoredGroup = z.infer<typeof StoredGroup>;

/** `<state>/clients.json` (clients/state.ts). */
export const ProjectRegistration = z.object({
	client: z.string(),
	project_root: z.string(),
	groups: z.array(z.string()),
});
export type ProjectRegistration = z.infer<typeof ProjectRegistration>;

/** The entries Hangar wrote into one configuration file. */
export const ManagedFile = z.object({
	path: z.string(),
	client: z.string(),
	project_root: z.string().optional(),
	entries: z.array(z.string()),
});
export type ManagedFile = z.infer<typeof ManagedFile>;

export const ClientsState = z.object({
	/** Clients registered without groups (`clients/registerMany` with no `groups`): every running workload. */
	global: z.array(z.string()),
	projects: z.array(ProjectRegistration),
	managed: z.array(ManagedFile),
	/**
	 * Detection targets (toolhive-facts §4.2) that did not exist until Hangar wrote a client's
	 * configuration there: they alone do not make the client installed.
	 */
	created: z.array(z.string()).optional(),
});
export type ClientsState = z.infer<typeof ClientsState>;

/** `<config>/runtimes.json` (packages/defaults.ts). */
export const RuntimeDefaultsDocument = z.object({
	runtime_configs: z.object({ npx: RuntimeConfig.optional(), uvx: RuntimeConfig.optional(), go: RuntimeConfig.optional() }).optional(),
});
export type RuntimeDefaultsDocument = z.infer<typeof RuntimeDefaultsDocument>;

/** `<state>/skills/installed/<key>.json` (skills/store.ts). */
export const SkillRecord = z.object({
	name: z.string(),
	scope: z.enum(['user', 'project']),
	project_root: z.string(),
	/** What the user asked for (a name, a reference), re-resolved by upgrade. */
	source: z.string(),
	/** The resolved reference: `registry/repo:tag`, `git://host/owner/repo@ref#path`, a local tag. */
	reference: z.string(),
	tag: z.string().optional(),
	/** OCI digest or git commit. */
	digest: z.string(),
	/** A reference to exactly this content (`repo@digest`, `git://…@commit#path`). */
	pinned: z.string(),
	/** The reference can resolve to other content later (a tag or branch). */
	movable: z.boolean(),
	/** Digest of the files (files.ts `contentDigest`): always for project scope, where the lock file pins it. */
	content_digest: z.string().optional(),
	version: z.string().optional(),
	description: z.string().optional(),
	license: z.string().optional(),
	author: z.string().optional(),
	tags: z.array(z.string()).optional(),
	installed_at: z.string(),
	/** One entry per folder written, with the clients reading it there. */
	folders: z.array(z.object({ path: z.string(), clients: z.array(z.string()) })),
	/** Paths of the files written into every folder, relative to it. */
	files: z.array(z.string()),
	dependencies: z.array(z.object({ name: z.string(), reference: z.string(), digest: z.string() })),
	/** Skills (same scope and project) that require this one. */
	required_by: z.array(z.string()),
	/** Installed by request, not only as a dependency. */
	explicit: z.boolean(),
	/** Recorded in the project's lock file. */
	managed: z.boolean(),
	/**
	 * Installed from a local repository (`git+file://`), which only development mode allows:
	 * the skill's later sync and upgrade may read that repository without `HANGAR_DEV`.
	 */
	allow_local: z.boolean().optional(),
});
export type SkillRecord = z.infer<typeof SkillRecord>;

/** The records, by the name the generated JSON Schemas are exported under. */
export const RECORDS = { StoredWorkload, StoredStatus, ProxyRecord, WorkloadPins, PinningDefaults, StoredGroup, ClientsState, RuntimeDefaultsDocument, SkillRecord };

/**
 * The JSON Schema of a record, as stored (zod's input side). A refinement has no JSON Schema and
 * would be dropped silently, so one is refused here, as `z.toJSONSchema` refuses a transform.
 */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
	const refuseRefinements = ({ zodSchema }: { zodSchema: z.core.$ZodTypes }) => {
		if (zodSchema._zod.def.checks?.some((check) => check._zod.def.check === 'custom')) throw new Error('a stored record may not carry a refinement: its generated JSON Schema could not check it');
	};
	return z.toJSONSchema(schema, { io: 'input', override: refuseRefinements }) as JsonSchema;
}

/** The JSON Schema of each record (records.generated.ts). */
export function recordJsonSchemas(): Record<keyof typeof RECORDS, JsonSchema> {
	return Object.fromEntries(Object.entries(RECORDS).map(([name, schema]) => [name, jsonSchemaOf(schema)])) as Record<keyof typeof RECORDS, JsonSchema>;
}
