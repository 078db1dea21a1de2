/**
 * A loaded registry, indexed for the questions callers ask: a server by full or short name,
 * a skill by name and namespace, a ranked case-insensitive search, and the legacy view.
 * Immutable once built; a changed source produces a new Catalog.
 */
import { HangarError } from '../../protocol/errors.js';
import { legacyKind, toLegacyRegistry } from './convert.js';
export class Catalog {
    document;
    version;
    lastUpdated;
    servers;
    skills;
    byName = new Map();
    byShortName = new Map();
    /** What a search looks in, per server, in `servers` order. */
    serverText;
    /** What a search looks in, per skill, in `skills` order. */
    skillText;
    legacyData;
    countsValue;
    constructor(document) {
        this.document = document;
        this.version = document.version;
        this.lastUpdated = document.lastUpdated;
        this.servers = document.servers;
        this.skills = document.skills;
        const serverText = new Array(this.servers.length);
        this.servers.forEach((server, index) => {
            this.byName.set(server.name, server);
            const short = shortName(server.name);
            const sharing = this.byShortName.get(short);
            if (sharing)
                sharing.push(server);
            else
                this.byShortName.set(short, [server]);
            serverText[index] = searchText(short, server.title, server.description, server.name);
        });
        this.serverText = serverText;
        this.skillText = this.skills.map((skill) => searchText(skill.name, skill.title, skill.description, skill.namespace ? qualifiedName(skill) : skill.name));
    }
    /**
     * A server by its full reverse-DNS name, or by the part after the `/` when only one server
     * has it. A short name several servers share is a 409 listing them.
     */
    findServer(name) {
        if (name.includes('/'))
            return this.byName.get(name);
        const matches = this.byShortName.get(name);
        if (!matches)
            return undefined;
        if (matches.length > 1) {
            throw new HangarError(409, `server name '${name}' is ambiguous: ${matches.map((server) => server.name).join(', ')}; use the full name`, 'server_ambiguous');
        }
        return matches[0];
    }
    /** Servers matching `query`, best first (see `search`); all without one. */
    searchServers(query) {
        return search(this.servers, this.serverText, query);
    }
    /**
     * A skill by name, optionally within a namespace. Without one, a name published in several
     * namespaces is a 409 listing them.
     */
    findSkill(name, namespace) {
        const matches = this.skills.filter((skill) => skill.name === name && (namespace === undefined || skill.namespace === namespace));
        if (matches.length > 1 && namespace === undefined) {
            throw new HangarError(409, `skill name '${name}' is ambiguous: ${matches.map(qualifiedName).join(', ')}; use namespace/name`, 'skill_ambiguous');
        }
        return matches[0];
    }
    /** Skills matching `query`, best first (see `search`); all without one. */
    searchSkills(query) {
        return search(this.skills, this.skillText, query);
    }
    /** The whole registry in the legacy shape (spec 2.4), built on first use. */
    get legacy() {
        return (this.legacyData ??= toLegacyRegistry(this.document));
    }
    /** Image and remote servers, as the legacy view counts them (without building it). */
    get counts() {
        if (!this.countsValue) {
            const counts = { image: 0, remote: 0 };
            for (const server of this.servers) {
                const kind = legacyKind(server);
                if (kind)
                    counts[kind]++;
            }
            this.countsValue = counts;
        }
        return this.countsValue;
    }
}
function qualifiedName(skill) {
    return `${skill.namespace}/${skill.name}`;
}
/** `io.github.stacklok/fetch` → `fetch`. */
export function shortName(name) {
    return name.slice(name.lastIndexOf('/') + 1);
}
function searchText(name, title, description, fullName) {
    return {
        name: name.toLowerCase(),
        title: (title ?? '').toLowerCase(),
        description: (description ?? '').toLowerCase(),
        fullName: fullName.toLowerCase(),
    };
}
/**
 * How well an item matches a lower-cased query; 0 for no match. The short name counts most
 * (whole, then one of its `-`/`_`/`.` segments, then a prefix, then anywhere), then the title,
 * then the description (a word start, then anywhere). The namespace (`io.github.…`), shared
 * by most of a catalog, counts only when the query names one (it holds `/` or `.`).
 */
export function relevance(text, needle) {
    if (text.name === needle)
        return 100;
    if (text.name.split(/[-_.]/).includes(needle))
        return 90;
    if (text.name.startsWith(needle))
        return 80;
    if (text.name.includes(needle))
        return 70;
    if (text.title === needle)
        return 65;
    if (text.title.includes(needle))
        return 60;
    if (new RegExp(`(^|[^a-z0-9])${escapeRegExp(needle)}`).test(text.description))
        return 40;
    if (text.description.includes(needle))
        return 20;
    if (/[/.]/.test(needle) && text.fullName.includes(needle))
        return 10;
    return 0;
}
/** The items matching `query`, best first, in catalog order among equals; all without one. */
export function search(items, texts, query) {
    const needle = query?.trim().toLowerCase();
    if (!needle)
        return items;
    const scored = [];
    for (let index = 0; index < items.length; index++) {
        const score = relevance(texts[index], needle);
        if (score > 0)
            scored.push({ item: items[index], score });
    }
    return scored.sort((a, b) => b.score - a.score).map((entry) => entry.item);
}
function escapeRegExp(value) {
    return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
//# sourceMappingURL=catalog.js.map