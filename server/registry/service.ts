/**
 * Registries: the `default` registry (embedded unless pointed elsewhere) and any named ones,
 * searched in precedence order. Serves the management rows (legacy shapes), the v0.1 catalog
 * rows (upstream records, paged), and lookups for the workloads and skills services.
 */
import { join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import {
	HANGAR_META,
	type PageMetadata,
	type RegistrySkill,
	type ServerRecord,
} from '../../protocol/protocol.catalog.js';
import {
	AddRegistry,
	ALL_REGISTRIES,
	UpdateRegistry,
	type RegistryDetail,
	type RegistrySummary,
	type RegistryType,
} from '../../protocol/protocol.registries.js';
import type { ImageServer, RemoteServer } from '../../protocol/registryTypes.js';
import type { ValidParamsOf } from '../../protocol/operation.js';
import type { OperationContext } from '../context.js';
import { implement, type Implementation } from '../dispatch.js';
import type { Environment } from '../environment.js';
import type { Catalog } from './catalog.js';
import { mergeIndexes, type SearchIndex } from './search.js';
import { RegistryConfigStore, DEFAULT_REGISTRY, effectivePriority, type RegistryEntry } from './config.js';
import { toLegacyServer, unrunnableReason } from './convert.js';
import { configureError, readError, SourceError } from './errors.js';
import { RegistryPolicyFile } from './policy.js';
import { isUrl, normalizeLocation, resolveSource } from './resolve.js';
import { SourceLoader, type RegistrySource } from './sources.js';

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;

export interface RegistryServiceOptions {
	/** How long a fetched remote registry is served before it is fetched again. */
	readonly ttlMs: number;
	/** Time allowed for one request to a remote registry. */
	readonly timeoutMs: number;
}

/** `HANGAR_REGISTRY_CACHE_TTL_MS` (default one hour) and `HANGAR_REGISTRY_TIMEOUT_MS` (default 30 s). */
export function registryOptionsFromEnv(env: NodeJS.ProcessEnv): RegistryServiceOptions {
	const positive = (value: string | undefined, fallback: number) => {
		const number = Number(value);
		return value && Number.isFinite(number) && number > 0 ? number : fallback;
	};
	return {
		ttlMs: positive(env.HANGAR_REGISTRY_CACHE_TTL_MS, 60 * 60 * 1000),
		timeoutMs: positive(env.HANGAR_REGISTRY_TIMEOUT_MS, 30_000),
	};
}

/** The legacy answer for one server (spec `getServerResponse`). */
export interface ServerLookup {
	is_remote: boolean;
	server?: ImageServer;
	remote_server?: RemoteServer;
}

interface Loaded {
	readonly entry: RegistryEntry;
	readonly catalog?: Catalog;
	readonly error?: HangarError;
}

/** Every registry's servers and skills in one list, names shadowed by precedence. */
interface MergedView {
	readonly parts: readonly Catalog[];
	readonly names: readonly string[];
	readonly servers: SearchIndex<{ record: ServerRecord; registry: string }>;
	readonly skills: SearchIndex<{ skill: RegistrySkill; registry: string }>;
}

export class RegistryService {
	private readonly config: RegistryConfigStore;
	private readonly policy: RegistryPolicyFile;
	private readonly loader: SourceLoader;
	private merged: MergedView | undefined;
	private knownEntries: readonly RegistryEntry[] | undefined;

	constructor(
		private readonly environment: Environment,
		private readonly options: RegistryServiceOptions = registryOptionsFromEnv(process.env),
	) {
		this.config = new RegistryConfigStore(environment.paths);
		this.policy = new RegistryPolicyFile(environment.paths);
		this.loader = new SourceLoader({
			cacheFolder: join(environment.paths.cache, 'registries'),
			log: environment.log,
			ttlMs: options.ttlMs,
			timeoutMs: options.timeoutMs,
		});
	}

	// --- Lookups for other services ---------------------------------------------------------

	/**
	 * A server by full reverse-DNS name or unique short name, from the first registry (in
	 * precedence order) that has it, in the legacy shape. A short name shared by several
	 * servers of that registry is a 409. When it is found nowhere but a registry could not be
	 * read, that registry's error is thrown rather than an answer that may be wrong.
	 */
	async findServer(name: string): Promise<ServerLookup | undefined> {
		const found = await this.serverNamed(name);
		return found ? toLookup(found.record) : undefined;
	}

	/**
	 * A server by full name (the first registry in precedence order that has it), or by short
	 * name. A short name that names different servers, in one registry or across several, is
	 * a 409 listing them: picking one silently could run the wrong server.
	 */
	private async serverNamed(name: string, signal?: AbortSignal): Promise<{ record: ServerRecord; registry: string } | undefined> {
		if (name.includes('/')) {
			return this.firstFound(async (catalog, entry) => {
				const record = catalog.findServer(name);
				return record ? { record, registry: entry.name } : undefined;
			}, signal);
		}
		const found = new Map<string, { record: ServerRecord; registry: string }>();
		let failure: HangarError | undefined;
		for (const entry of await this.entries()) {
			const { catalog, error } = await this.tryCatalog(entry, signal);
			if (!catalog) {
				failure ??= error;
				continue;
			}
			const record = catalog.findServer(name);
			if (record && !found.has(record.name)) found.set(record.name, { record, registry: entry.name });
		}
		if (found.size > 1) {
			const candidates = [...found.values()].map(({ record, registry }) => `${record.name} (registry '${registry}')`);
			throw new HangarError(409, `server name '${name}' is ambiguous: ${candidates.join(', ')}; use the full name`, 'server_ambiguous');
		}
		const [only] = found.values();
		if (!only && failure) throw failure;
		return only;
	}

	/**
	 * A skill by `name` or `namespace/name`, from the first registry that has it. A bare name
	 * published in several namespaces of that registry is a 409.
	 */
	async findSkill(name: string): Promise<RegistrySkill | undefined> {
		const slash = name.lastIndexOf('/');
		const namespace = slash > 0 ? name.slice(0, slash) : undefined;
		const skillName = slash > 0 ? name.slice(slash + 1) : name;
		return this.firstFound(async (catalog) => catalog.findSkill(skillName, namespace));
	}

	// --- Management rows ---------------------------------------------------------------------

	async list(signal?: AbortSignal): Promise<RegistrySummary[]> {
		const loaded = await this.loadAll(signal);
		return loaded.map(({ entry, catalog, error }) => summaryOf(entry, catalog, error));
	}

	async get(name: string, signal?: AbortSignal): Promise<RegistryDetail> {
		const entry = await this.entry(name);
		const catalog = await this.catalogOf(entry, signal);
		return { ...summaryOf(entry, catalog), registry: catalog.legacy };
	}

	async listServers(name: string, signal?: AbortSignal): Promise<{ servers: ImageServer[]; remote_servers: RemoteServer[] }> {
		const catalog = await this.catalogOf(await this.entry(name), signal);
		const { servers = {}, remote_servers = {} } = catalog.legacy;
		return { servers: Object.values(servers), remote_servers: Object.values(remote_servers) };
	}

	async getServer(name: string, serverName: string, signal?: AbortSignal): Promise<ServerLookup> {
		const catalog = await this.catalogOf(await this.entry(name), signal);
		const record = catalog.findServer(serverName);
		if (!record) throw serverNotFound(serverName, name);
		const lookup = toLookup(record);
		if (!lookup) throw HangarError.notFound(`server '${record.name}' has no package or remote Hangar can run`, 'server_not_runnable');
		return lookup;
	}

	async add(params: ValidParamsOf<typeof AddRegistry>, context: OperationContext): Promise<RegistrySummary> {
		const { name } = params;
		if (await this.config.find(name)) throw registryExists(name);
		await this.checkPolicy(name, 'add', params.source);
		const { source, catalog } = await this.configure(params.source, params.allow_private_ip ?? false, context);
		const entry: RegistryEntry = compactEntry({
			name,
			type: source.type,
			source: source.location,
			allow_private_ip: source.allowPrivate || undefined,
			priority: params.priority,
		});
		await this.config.update((stored) => {
			if (name === DEFAULT_REGISTRY || stored.some((existing) => existing.name === name)) throw registryExists(name);
			return [...stored, entry];
		});
		return summaryOf(entry, catalog);
	}

	async update(params: ValidParamsOf<typeof UpdateRegistry>, context: OperationContext): Promise<{ type: RegistryType }> {
		const { name } = params;
		const current = await this.entry(name);
		const given = params.url || params.api_url || params.local_path || undefined;
		const reset = !given && name === DEFAULT_REGISTRY;
		const location = given ?? current.source;
		if (params.local_path && isUrl(params.local_path) && !/^file:/i.test(params.local_path)) {
			throw HangarError.badRequest(`local_path must be a file path, not a URL: ${params.local_path}`, 'invalid_registry_path');
		}
		await this.checkPolicy(name, reset ? 'reset' : 'change', reset ? undefined : location);
		let next: RegistryEntry;
		if (reset) {
			next = compactEntry({ name, type: 'default', source: '', priority: params.priority ?? current.priority });
		} else {
			// A named registry updated without a new source keeps its address rules unless told otherwise.
			const allowPrivate = params.allow_private_ip ?? (given ? false : (current.allow_private_ip ?? false));
			const { source } = await this.configure(location, allowPrivate, context);
			next = compactEntry({
				name,
				type: source.type,
				source: source.location,
				allow_private_ip: source.allowPrivate || undefined,
				priority: params.priority ?? current.priority,
				auth: params.auth,
			});
		}
		await this.config.update((stored) => {
			const others = stored.filter((entry) => entry.name !== name);
			if (name !== DEFAULT_REGISTRY && others.length === stored.length) throw registryNotFound(name);
			return [...others, next];
		});
		return { type: next.type };
	}

	async remove(name: string): Promise<void> {
		if (name === DEFAULT_REGISTRY) throw HangarError.badRequest('cannot remove the default registry', 'registry_protected');
		await this.entry(name);
		await this.policy.check(name, 'remove');
		await this.config.update((stored) => {
			const others = stored.filter((entry) => entry.name !== name);
			if (others.length === stored.length) throw registryNotFound(name);
			return others;
		});
	}

	async refresh(name: string, context: OperationContext): Promise<{ status: string }> {
		const entry = await this.entry(name);
		const source = sourceOf(entry);
		if (source.type === 'url' || source.type === 'api') {
			context.progress.begin('Refreshing registry', entry.name);
			try {
				const onPage = (message: string) => context.progress.report(message);
				await this.loader.load(source, { force: true, signal: context.signal, onPage });
			} catch (error) {
				throw refreshError(entry.name, error);
			} finally {
				context.progress.end();
			}
		} else {
			await this.catalogOf(entry, context.signal);
		}
		return { status: 'refreshed' };
	}

	// --- Catalog rows (v0.1) -----------------------------------------------------------------

	async listCatalogServers(
		registryName: string,
		query: PageQuery,
		signal?: AbortSignal,
	): Promise<{ servers: ServerRecord[]; metadata: PageMetadata }> {
		if (registryName === ALL_REGISTRIES) {
			const view = await this.mergedView(signal);
			const matches = view.servers.search(query.q);
			const { items, metadata } = pageOf(matches, query);
			return { servers: items.map(({ record, registry }) => withRegistry(record, registry)), metadata };
		}
		const catalog = await this.catalogOf(await this.entry(registryName), signal);
		const { items, metadata } = pageOf(catalog.searchServers(query.q), query);
		return { servers: items, metadata };
	}

	async getCatalogServer(registryName: string, serverName: string, signal?: AbortSignal): Promise<ServerRecord> {
		if (registryName === ALL_REGISTRIES) {
			const found = await this.serverNamed(serverName, signal);
			if (!found) throw serverNotFound(serverName);
			return withRegistry(found.record, found.registry);
		}
		const catalog = await this.catalogOf(await this.entry(registryName), signal);
		const record = catalog.findServer(serverName);
		if (!record) throw serverNotFound(serverName, registryName);
		return record;
	}

	async listCatalogSkills(
		registryName: string,
		query: PageQuery,
		signal?: AbortSignal,
	): Promise<{ skills: RegistrySkill[]; metadata: PageMetadata }> {
		if (registryName === ALL_REGISTRIES) {
			const view = await this.mergedView(signal);
			const matches = view.skills.search(query.q);
			const { items, metadata } = pageOf(matches, query);
			return { skills: items.map(({ skill, registry }) => withRegistry(skill, registry)), metadata };
		}
		const catalog = await this.catalogOf(await this.entry(registryName), signal);
		const { items, metadata } = pageOf(catalog.searchSkills(query.q), query);
		return { skills: items, metadata };
	}

	async getCatalogSkill(registryName: string, namespace: string, skillName: string, signal?: AbortSignal): Promise<RegistrySkill> {
		if (registryName === ALL_REGISTRIES) {
			const found = await this.firstFound(async (catalog, entry) => {
				const skill = catalog.findSkill(skillName, namespace);
				return skill ? withRegistry(skill, entry.name) : undefined;
			}, signal);
			if (!found) throw skillNotFound(namespace, skillName);
			return found;
		}
		const catalog = await this.catalogOf(await this.entry(registryName), signal);
		const skill = catalog.findSkill(skillName, namespace);
		if (!skill) throw skillNotFound(namespace, skillName, registryName);
		return skill;
	}

	// --- Internals ---------------------------------------------------------------------------

	/** The policy sees the location as it would be stored, before any request is made to it. */
	private async checkPolicy(name: string, action: string, location?: string): Promise<void> {
		let normalized: string | undefined;
		try {
			normalized = location === undefined ? undefined : normalizeLocation(location);
		} catch (error) {
			throw configureError(error);
		}
		await this.policy.check(name, action, normalized);
	}

	private async entries(): Promise<readonly RegistryEntry[]> {
		const entries = await this.config.entries();
		if (entries !== this.knownEntries) {
			this.knownEntries = entries;
			this.loader.retain(entries.map(sourceOf));
		}
		return entries;
	}

	private async entry(name: string): Promise<RegistryEntry> {
		const entry = (await this.entries()).find((candidate) => candidate.name === name);
		if (!entry) throw registryNotFound(name);
		return entry;
	}

	private async catalogOf(entry: RegistryEntry, signal?: AbortSignal): Promise<Catalog> {
		try {
			return await this.loader.load(sourceOf(entry), signal ? { signal } : {});
		} catch (error) {
			throw readError(entry.name, error);
		}
	}

	private async loadAll(signal?: AbortSignal): Promise<Loaded[]> {
		const entries = await this.entries();
		return Promise.all(entries.map((entry) => this.tryCatalog(entry, signal)));
	}

	/** A registry's catalog, or why it cannot be read; cancellation and unexpected failures are thrown. */
	private async tryCatalog(entry: RegistryEntry, signal?: AbortSignal): Promise<Loaded> {
		try {
			return { entry, catalog: await this.catalogOf(entry, signal) };
		} catch (error) {
			if (!(error instanceof HangarError) || error.status === 499) throw error;
			return { entry, error };
		}
	}

	/**
	 * The first answer `find` gives, registry by registry in precedence order. Registries that
	 * cannot be read are skipped; if nothing is found, the first of their errors is thrown.
	 */
	private async firstFound<T>(
		find: (catalog: Catalog, entry: RegistryEntry) => Promise<T | undefined>,
		signal?: AbortSignal,
	): Promise<T | undefined> {
		let failure: HangarError | undefined;
		for (const entry of await this.entries()) {
			const { catalog, error } = await this.tryCatalog(entry, signal);
			if (!catalog) {
				failure ??= error;
				continue;
			}
			const found = await find(catalog, entry);
			if (found !== undefined) return found;
		}
		if (failure) throw failure;
		return undefined;
	}

	/** Every readable registry merged; rebuilt only when a registry or the configuration changed. */
	private async mergedView(signal?: AbortSignal): Promise<MergedView> {
		const loaded = await this.loadAll(signal);
		const readable = loaded.filter((part): part is Loaded & { catalog: Catalog } => part.catalog !== undefined);
		if (readable.length === 0 && loaded[0]?.error) throw loaded[0].error;
		for (const { entry, error } of loaded) {
			if (error) this.environment.log.warn(`searching without registry '${entry.name}': ${error.message}`);
		}
		const parts = readable.map((part) => part.catalog);
		const names = readable.map((part) => part.entry.name);
		const cached = this.merged;
		if (cached && sameItems(cached.parts, parts) && sameItems(cached.names, names)) return cached;
		// Each record keeps the search text and the index its catalog already holds.
		const servers = mergeIndexes(
			readable.map(({ catalog, entry }) => ({ index: catalog.serverIndex, wrap: (record: ServerRecord) => ({ record, registry: entry.name }) })),
			(record) => record.name,
		);
		const skills = mergeIndexes(
			readable.map(({ catalog, entry }) => ({ index: catalog.skillIndex, wrap: (skill: RegistrySkill) => ({ skill, registry: entry.name }) })),
			(skill) => `${skill.namespace ?? ''}/${skill.name}`,
		);
		this.merged = { parts, names, servers, skills };
		return this.merged;
	}

	/** Resolves and loads a new source, reporting progress; failures carry the configure statuses. */
	private async configure(
		location: string,
		allowPrivate: boolean,
		context: OperationContext,
	): Promise<{ source: RegistrySource; catalog: Catalog }> {
		context.progress.begin('Checking registry', location);
		try {
			const source = await resolveSource(location, { allowPrivate, timeoutMs: this.options.timeoutMs, signal: context.signal });
			const catalog = await this.loader.load(source, {
				force: true,
				signal: context.signal,
				onPage: (message) => context.progress.report(message),
			});
			return { source, catalog };
		} catch (error) {
			throw configureError(error);
		} finally {
			context.progress.end();
		}
	}
}

export interface PageQuery {
	readonly q?: string | undefined;
	readonly page?: number | undefined;
	readonly limit?: number | undefined;
}

/** One page: `page` is 1-based (below 1 means 1); `limit` defaults to 50 and is clamped to 200. */
export function pageOf<T>(items: readonly T[], query: PageQuery): { items: T[]; metadata: PageMetadata } {
	const limit = !query.limit || query.limit < 1 ? DEFAULT_PAGE_SIZE : Math.min(query.limit, MAX_PAGE_SIZE);
	const page = !query.page || query.page < 1 ? 1 : Math.min(query.page, Math.floor(Number.MAX_SAFE_INTEGER / limit));
	const start = (page - 1) * limit;
	return { items: items.slice(start, start + limit), metadata: { total: items.length, page, limit } };
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
	return a.length === b.length && a.every((item, index) => item === b[index]);
}

/** A record with the registry it came from under `_meta["dev.hangar"]`. */
function withRegistry<T extends { _meta?: Record<string, unknown> | undefined }>(record: T, registry: string): T {
	return { ...record, _meta: { ...record._meta, [HANGAR_META]: { registry } } };
}

function toLookup(record: ServerRecord): ServerLookup | undefined {
	const legacy = toLegacyServer(record);
	if (!legacy) throw HangarError.badRequest(unrunnableReason(record)!, 'server_not_runnable');
	return legacy.kind === 'image' ? { is_remote: false, server: legacy.server } : { is_remote: true, remote_server: legacy.server };
}

function sourceOf(entry: RegistryEntry): RegistrySource {
	return { type: entry.type, location: entry.source, allowPrivate: entry.allow_private_ip ?? false };
}

function summaryOf(entry: RegistryEntry, catalog?: Catalog, error?: HangarError): RegistrySummary {
	const summary: RegistrySummary = {
		name: entry.name,
		type: entry.type,
		source: entry.source,
		auth_status: entry.auth ? 'configured' : 'none',
		auth_type: entry.auth ? 'oauth' : '',
		priority: effectivePriority(entry),
	};
	if (entry.auth) summary.auth_config = entry.auth;
	if (catalog) {
		if (catalog.version !== undefined) summary.version = catalog.version;
		if (catalog.lastUpdated !== undefined) summary.last_updated = catalog.lastUpdated;
		summary.server_count = catalog.counts.image;
		summary.remote_server_count = catalog.counts.remote;
		summary.skill_count = catalog.skills.length;
	}
	if (error) summary.error = error.message;
	return summary;
}

function compactEntry(entry: RegistryEntry): RegistryEntry {
	const compacted: Record<string, unknown> = { ...entry };
	for (const key of Object.keys(compacted)) if (compacted[key] === undefined) delete compacted[key];
	return compacted as RegistryEntry;
}

/** Refresh is an explicit fetch: the upstream's failures are reported as such. */
function refreshError(registry: string, error: unknown): HangarError {
	if (error instanceof SourceError && (error.failure === 'unreachable' || error.failure === 'timeout')) {
		return new HangarError(504, `registry '${registry}': ${error.message}`, 'registry_unreachable');
	}
	return readError(registry, error);
}

function registryNotFound(name: string): HangarError {
	return HangarError.notFound(`registry '${name}' not found`, 'registry_not_found');
}

function registryExists(name: string): HangarError {
	return HangarError.conflict(`registry '${name}' already exists`, 'registry_exists');
}

function serverNotFound(name: string, registry?: string): HangarError {
	const where = registry ? ` in registry '${registry}'` : ' in any registry';
	return HangarError.notFound(`server '${name}' not found${where}`, 'server_not_found');
}

function skillNotFound(namespace: string, name: string, registry?: string): HangarError {
	const where = registry ? ` in registry '${registry}'` : ' in any registry';
	return HangarError.notFound(`skill '${namespace}/${name}' not found${where}`, 'skill_not_found');
}

export function registryImplementations(registries: RegistryService): Implementation[] {
	return [
		implement('registries/list', async (_, { signal }) => ({ registries: await registries.list(signal) })),
		implement('registries/add', (params, context) => registries.add(params, context)),
		implement('registries/get', ({ name }, { signal }) => registries.get(name, signal)),
		implement('registries/update', (params, context) => registries.update(params, context)),
		implement('registries/remove', async ({ name }) => {
			await registries.remove(name);
			return null;
		}),
		implement('registries/refresh', ({ name }, context) => registries.refresh(name, context)),
		implement('registries/listServers', ({ name }, { signal }) => registries.listServers(name, signal)),
		implement('registries/getServer', ({ name, serverName }, { signal }) => registries.getServer(name, serverName, signal)),
		implement('catalog/listServers', ({ registryName, ...query }, { signal }) =>
			registries.listCatalogServers(registryName, query, signal),
		),
		implement('catalog/getServer', ({ registryName, serverName }, { signal }) =>
			registries.getCatalogServer(registryName, serverName, signal),
		),
		implement('catalog/listSkills', ({ registryName, ...query }, { signal }) =>
			registries.listCatalogSkills(registryName, query, signal),
		),
		implement('catalog/getSkill', ({ registryName, namespace, skillName }, { signal }) =>
			registries.getCatalogSkill(registryName, namespace, skillName, signal),
		),
	];
}
