/**
 * What the workloads service needs from other areas, as small ports it receives in its
 * constructor; server/services.ts wires the real implementations.
 */
import type { ImageServer, RemoteServer } from '../../protocol/registryTypes.js';

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
