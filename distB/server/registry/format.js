import { describeJsonError, isPlainObject } from '../json.js';
import { SourceError } from './errors.js';
/** Reverse-DNS server names as the MCP registry defines them: recommended, not required. */
const REVERSE_DNS_NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;
/**
 * What a server name must be to be looked up and typed on a command line. ToolHive accepts
 * plain names (`test-server`) in registry files, so Hangar does too, with a warning.
 */
const SERVER_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._\/@-]*$/;
/** Parses the text of a registry file. */
export function parseRegistryText(text, origin) {
    let raw;
    try {
        raw = JSON.parse(text);
    }
    catch (error) {
        throw new SourceError('invalid', `${origin} is not valid JSON: ${describeJsonError(error)}`);
    }
    return validateRegistry(raw, origin);
}
/** True for ToolHive's pre-v0.25 file shape: servers keyed by short name at the top level. */
function isLegacyRegistry(raw) {
    return isPlainObject(raw) && !isPlainObject(raw.data) && ('servers' in raw || 'remote_servers' in raw || 'groups' in raw);
}
/** `allowEmpty` accepts a registry with nothing in it (an API may legitimately list nothing). */
export function validateRegistry(raw, origin, allowEmpty = false) {
    if (isLegacyRegistry(raw)) {
        throw new SourceError('legacy', `${origin} is in the legacy ToolHive registry format (top-level "servers"/"remote_servers"); ` +
            'convert it to the upstream MCP registry format {"version", "meta", "data": {"servers", "skills"}}');
    }
    if (!isPlainObject(raw))
        throw new SourceError('invalid', `${origin} is not a registry: expected a JSON object`);
    if (!isPlainObject(raw.data))
        throw new SourceError('invalid', `${origin} is not a registry: "data" must be an object`);
    const data = raw.data;
    const servers = validateServers(data.servers, 'data.servers', origin);
    const skills = validateSkills(data.skills, 'data.skills', origin);
    const groups = validateGroups(data.groups, origin);
    if (!allowEmpty && servers.length === 0 && skills.length === 0 && groups.every((group) => group.servers.length === 0)) {
        throw new SourceError('invalid', `${origin} holds no servers and no skills`);
    }
    const meta = isPlainObject(raw.meta) ? raw.meta : {};
    return {
        ...(typeof raw.version === 'string' ? { version: raw.version } : {}),
        ...(typeof meta.last_updated === 'string' ? { lastUpdated: meta.last_updated } : {}),
        servers,
        groups,
        skills,
    };
}
/** A warning for server names that are not reverse-DNS (`io.github.owner/server`); none when all are. */
export function nameWarning(document, origin) {
    const names = [...document.servers, ...document.groups.flatMap((group) => group.servers)]
        .map((server) => server.name)
        .filter((name) => !REVERSE_DNS_NAME.test(name));
    if (names.length === 0)
        return undefined;
    const shown = names.slice(0, 5).map((name) => `'${name}'`).join(', ');
    return `${origin}: ${names.length} server name(s) are not reverse-DNS names such as io.github.owner/server (${shown}${names.length > 5 ? ', …' : ''}); they are served as they are`;
}
export function validateServers(value, field, origin) {
    if (value === undefined || value === null)
        return [];
    if (!Array.isArray(value))
        throw invalid(origin, `${field} must be an array`);
    const seen = new Set();
    const servers = [];
    value.forEach((entry, index) => {
        const server = validateServer(entry, `${field}[${index}]`, origin);
        // A name listed twice keeps its first entry, as a lookup would find it.
        if (seen.has(server.name))
            return;
        seen.add(server.name);
        servers.push(server);
    });
    return servers;
}
export function validateServer(entry, field, origin) {
    if (!isPlainObject(entry))
        throw invalid(origin, `${field} must be an object`);
    const { name } = entry;
    if (typeof name !== 'string' || name.length < 3 || name.length > 200 || !SERVER_NAME.test(name)) {
        throw invalid(origin, `${field}.name must be 3-200 letters, digits, ".", "_", "-", "/" or "@", such as io.github.owner/server (got ${JSON.stringify(name)})`);
    }
    for (const key of ['description', 'title', 'version']) {
        if (entry[key] !== undefined && typeof entry[key] !== 'string')
            throw invalid(origin, `${field}.${key} must be a string`);
    }
    for (const key of ['packages', 'remotes']) {
        const list = entry[key];
        if (list === undefined)
            continue;
        if (!Array.isArray(list) || !list.every(isPlainObject))
            throw invalid(origin, `${field}.${key} must be an array of objects`);
    }
    if (entry._meta !== undefined && !isPlainObject(entry._meta))
        throw invalid(origin, `${field}._meta must be an object`);
    return entry;
}
export function validateSkills(value, field, origin) {
    if (value === undefined || value === null)
        return [];
    if (!Array.isArray(value))
        throw invalid(origin, `${field} must be an array`);
    return value.map((entry, index) => validateSkill(entry, `${field}[${index}]`, origin));
}
export function validateSkill(entry, field, origin) {
    if (!isPlainObject(entry))
        throw invalid(origin, `${field} must be an object`);
    if (typeof entry.name !== 'string' || entry.name === '')
        throw invalid(origin, `${field}.name must be a non-empty string`);
    for (const key of ['namespace', 'description', 'version', 'title']) {
        if (entry[key] !== undefined && typeof entry[key] !== 'string')
            throw invalid(origin, `${field}.${key} must be a string`);
    }
    if (entry.packages !== undefined && (!Array.isArray(entry.packages) || !entry.packages.every(isPlainObject))) {
        throw invalid(origin, `${field}.packages must be an array of objects`);
    }
    return entry;
}
function validateGroups(value, origin) {
    if (value === undefined || value === null)
        return [];
    if (!Array.isArray(value))
        throw invalid(origin, 'data.groups must be an array');
    return value.map((entry, index) => {
        const field = `data.groups[${index}]`;
        if (!isPlainObject(entry) || typeof entry.name !== 'string')
            throw invalid(origin, `${field}.name must be a string`);
        return {
            name: entry.name,
            ...(typeof entry.description === 'string' ? { description: entry.description } : {}),
            servers: validateServers(entry.servers, `${field}.servers`, origin),
        };
    });
}
function invalid(origin, problem) {
    return new SourceError('invalid', `${origin} is not a valid registry: ${problem}`);
}
//# sourceMappingURL=format.js.map