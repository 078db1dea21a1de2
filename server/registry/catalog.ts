/**
 * A loaded registry, indexed for the questions callers ask: a server by full or short name,
 * a skill by name and namespace, a case-insensitive substring search, and the legacy view.
 * Immutable once built; a changed source produces a new Catalog.
 */
import { HangarError } from '../../protocol/errors.js';
import type { RegistrySkill, ServerRecord } from '../../protocol/protocol.catalog.js';
import type { RegistryData } from '../../protocol/registryTypes.js';
import { legacyKind, toLegacyRegistry } from './convert.js';
import type { RegistryDocument } from './format.js';

export class Catalog {
	readonly version: string | undefined;
	readonly lastUpdated: string | undefined;
	readonly servers: readonly ServerRecord[];
	readonly skills: readonly RegistrySkill[];
	private readonly byName = new Map<string, ServerRecord>();
	private readonly byShortName = new Map<string, ServerRecord[]>();
	/** Lower-cased `name \n description` per server, in `servers` order: what a search looks in. */
	readonly serverText: readonly string[];
	/** Lower-cased `name \n namespace \n description` per skill, in `skills` order. */
	readonly skillText: readonly string[];
	private legacyData: RegistryData | undefined;
	private countsValue: { image: number; remote: number } | undefined;

	constructor(private readonly document: RegistryDocument) {
		this.version = document.version;
		this.lastUpdated = document.lastUpdated;
		this.servers = document.servers;
		this.skills = document.skills;
		const serverText = new Array<string>(this.servers.length);
		this.servers.forEach((server, index) => {
			this.byName.set(server.name, server);
			const short = shortName(server.name);
			const sharing = this.byShortName.get(short);
			if (sharing) sharing.push(server);
			else this.byShortName.set(short, [server]);
			serverText[index] = `${server.name}\n${server.description ?? ''}`.toLowerCase();
		});
		this.serverText = serverText;
		this.skillText = this.skills.map((skill) => `${skill.name}\n${skill.namespace ?? ''}\n${skill.description ?? ''}`.toLowerCase());
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

	/** Servers whose name or description contains `query`, case-insensitively; all without one. */
	searchServers(query: string | undefined): readonly ServerRecord[] {
		return filterText(this.servers, this.serverText, query);
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

	/** Skills whose name, namespace or description contains `query`, case-insensitively. */
	searchSkills(query: string | undefined): readonly RegistrySkill[] {
		return filterText(this.skills, this.skillText, query);
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

/** The items whose search text (`text`, in the same order) contains `query`, case-insensitively; all without one. */
export function filterText<T>(items: readonly T[], text: readonly string[], query: string | undefined): readonly T[] {
	if (!query) return items;
	const needle = query.toLowerCase();
	const found: T[] = [];
	for (let index = 0; index < items.length; index++) if (text[index]!.includes(needle)) found.push(items[index]!);
	return found;
}
