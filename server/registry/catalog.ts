/**
 * A loaded registry, indexed for the questions callers ask: a server by full or short name,
 * a skill by name and namespace, a ranked case-insensitive search (its index built on the first
 * query), and the legacy view. Immutable once built; a changed source produces a new Catalog.
 */
import { HangarError } from '../../protocol/errors.js';
import type { RegistrySkill, ServerRecord } from '../../protocol/protocol.catalog.js';
import type { RegistryData } from '../../protocol/registryTypes.js';
import { legacyKind, toLegacyRegistry } from './convert.js';
import type { RegistryDocument } from './format.js';
import { SearchIndex, searchText, type SearchText } from './search.js';

export class Catalog {
	readonly version: string | undefined;
	readonly lastUpdated: string | undefined;
	readonly servers: readonly ServerRecord[];
	readonly skills: readonly RegistrySkill[];
	private readonly byName = new Map<string, ServerRecord>();
	private readonly byShortName = new Map<string, ServerRecord[]>();
	/** The servers with what a search looks in. */
	readonly serverIndex: SearchIndex<ServerRecord>;
	/** The skills with what a search looks in. */
	readonly skillIndex: SearchIndex<RegistrySkill>;
	private legacyData: RegistryData | undefined;
	private countsValue: { image: number; remote: number } | undefined;

	constructor(private readonly document: RegistryDocument) {
		this.version = document.version;
		this.lastUpdated = document.lastUpdated;
		this.servers = document.servers;
		this.skills = document.skills;
		const serverText = new Array<SearchText>(this.servers.length);
		this.servers.forEach((server, index) => {
			this.byName.set(server.name, server);
			const short = shortName(server.name);
			const sharing = this.byShortName.get(short);
			if (sharing) sharing.push(server);
			else this.byShortName.set(short, [server]);
			serverText[index] = searchText(short, server.title, server.description, server.name);
		});
		this.serverIndex = new SearchIndex(this.servers, serverText);
		this.skillIndex = new SearchIndex(
			this.skills,
			this.skills.map((skill) => searchText(skill.name, skill.title, skill.description, skill.namespace ? qualifiedName(skill) : skill.name)),
		);
	}

	/**
	 * A server by its full reverse-DNS name, or by the part after the `/` when only one server
	 * has it. A short name several servers share is a 409 listing them.
	 */
	findServer(name: string): ServerRecord | undefined {
		if (name.includes('/')) return this.byName.get(name);
		const matches = this.byShortName.get(name);
		if (!matches) return undefined;
		if (matches.length > 1) {
			throw new HangarError(
				409,
				`server name '${name}' is ambiguous: ${matches.map((server) => server.name).join(', ')}; use the full name`,
				'server_ambiguous',
			);
		}
		return matches[0];
	}

	/** Servers matching `query`, best first (see `SearchIndex`); all without one. */
	searchServers(query: string | undefined): readonly ServerRecord[] {
		return this.serverIndex.search(query);
	}

	/**
	 * A skill by name, optionally within a namespace. Without one, a name published in several
	 * namespaces is a 409 listing them.
	 */
	findSkill(name: string, namespace?: string): RegistrySkill | undefined {
		const matches = this.skills.filter((skill) => skill.name === name && (namespace === undefined || skill.namespace === namespace));
		if (matches.length > 1 && namespace === undefined) {
			throw new HangarError(
				409,
				`skill name '${name}' is ambiguous: ${matches.map(qualifiedName).join(', ')}; use namespace/name`,
				'skill_ambiguous',
			);
		}
		return matches[0];
	}

	/** Skills matching `query`, best first (see `SearchIndex`); all without one. */
	searchSkills(query: string | undefined): readonly RegistrySkill[] {
		return this.skillIndex.search(query);
	}

	/** The whole registry in the legacy shape (spec 2.4), built on first use. */
	get legacy(): RegistryData {
		return (this.legacyData ??= toLegacyRegistry(this.document));
	}

	/** Image and remote servers, as the legacy view counts them (without building it). */
	get counts(): { image: number; remote: number } {
		if (!this.countsValue) {
			const counts = { image: 0, remote: 0 };
			for (const server of this.servers) {
				const kind = legacyKind(server);
				if (kind) counts[kind]++;
			}
			this.countsValue = counts;
		}
		return this.countsValue;
	}
}

function qualifiedName(skill: RegistrySkill): string {
	return `${skill.namespace}/${skill.name}`;
}

/** `io.github.stacklok/fetch` → `fetch`. */
export function shortName(name: string): string {
	return name.slice(name.lastIndexOf('/') + 1);
}
