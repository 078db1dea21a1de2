/**
 * What the workloads service needs from other areas, as small ports it receives in its
 * constructor (with its options); server/services.ts wires the real implementations.
 */
import type { ImageServer, RemoteServer } from '../../protocol/registryTypes.js';
import type { Environment } from '../environment.js';
import type { PackagePlanner } from '../packages/builder.js';
import type { Runtime } from '../runtime/runtime.js';

/** A registry entry found by name (the registries area). */
export interface CatalogEntry {
	readonly is_remote: boolean;
	readonly server?: ImageServer;
	readonly remote_server?: RemoteServer;
}

/** Looks servers up in the configured registry. */
export interface ServerCatalog {
	/** The entry named `name` (full reverse-DNS name or short name), or undefined. */
	findServer(name: string): Promise<CatalogEntry | undefined>;
}

/** Reads secret values from the secrets provider (the secrets area). */
export interface SecretResolver {
	/** The value of secret `name`; a 404 HangarError when there is none. */
	resolve(name: string): Promise<string>;
	/** Deletes secret `key` (a removed workload's cached OAuth credentials); absent where secrets cannot be deleted. */
	delete?(key: string): Promise<void>;
}

/** Rewrites registered clients' configuration files (the clients area). */
export interface ClientConfigSync {
	/** Brings every registered client up to date with the running workloads. */
	syncWorkloads(): Promise<void>;
}

/** Tells which groups exist (the groups area). */
export interface GroupDirectory {
	exists(name: string): Promise<boolean>;
}

export interface WorkloadServiceOptions {
	readonly environment: Environment;
	readonly runtime: Runtime;
	readonly catalog: ServerCatalog;
	readonly secrets: SecretResolver;
	readonly clients: ClientConfigSync;
	readonly groups: GroupDirectory;
	/** How long a new proxy may take to reach its server before the workload is `unhealthy`. */
	readonly readyTimeoutMs?: number;
	/** The `hangar` script that runs proxies (default: this build's). */
	readonly proxyEntry?: string;
	/** Environment of proxies; it must lead to the same state folders (default: this process's). */
	readonly env?: NodeJS.ProcessEnv;
	/** Builds the images of package references (default: with the runtime and the per-scheme defaults). */
	readonly packages?: PackagePlanner;
}

/** Workloads by name (unknown names are skipped) or by group. */
export interface WorkloadSelection {
	readonly names?: string[];
	readonly group?: string;
}
