/**
 * The registry file format: the upstream MCP registry shape ToolHive reads
 * (`{$schema, version, meta: {last_updated}, data: {servers, groups, skills}}`), with server
 * entries in the MCP `server.json` shape.
 *
 * Validation is structural and by hand: a registry of 10,000 servers is checked in a few
 * milliseconds, and each message names the offending field. Unknown fields are kept.
 */
import type { RegistrySkill, ServerRecord } from '../../protocol/protocol.catalog.js';
import { describeJsonError, isPlainObject } from '../json.js';
import { SourceError } from './errors.js';

/** Reverse-DNS server names as the MCP registry defines them: recommended, not required. */
const REVERSE_DNS_NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;
/**
 * What a server name must be to be looked up and typed on a command line. ToolHive accepts
 * plain names (`test-server`) in registry files, so Hangar does too, with a warning.
 */
const SERVER_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._\/@-]*$/;

export interface RegistryGroupDocument {
	readonly name: string;
	readonly description?: string;
	readonly servers: readonly ServerRecord[];
}

/** A validated registry, whatever its source. */
export interface RegistryDocument {
	readonly version?: string;
	readonly lastUpdated?: string;
	readonly servers: readonly ServerRecord[];
	readonly groups: readonly RegistryGroupDocument[];
	readonly skills: readonly RegistrySkill[];
}

/** Parses the text of a registry file. */
export function parseRegistryText(text: string, origin: string): RegistryDocument {
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch (error) {
		throw new SourceError('invalid', `${origin} is not valid JSON: ${describeJsonError(error)}`);
	}
	return validateRegistry(raw, origin);
}

/** True for ToolHive's pre-v0.25 file shape: servers keyed by short name at the top level. */
function isLegacyRegistry(raw: unknown): boolean {
	return isPlainObject(raw) && !isPlainObject(raw.data) && ('servers' in raw || 'remote_servers' in raw || 'groups' in raw);
}

/** `allowEmpty` accepts a registry with nothing in it (an API may legitimately list nothing). */
export function validateRegistry(raw: unknown, origin: string, allowEmpty = false): RegistryDocument {
	if (isLegacyRegistry(raw)) {
		throw new SourceError(
			'legacy',
			`${origin} is in the legacy ToolHive registry format (top-level "servers"/"remote_servers"); ` +
				'convert it to the upstream MCP registry format {"version", "meta", "data": {"servers", "skills"}}',
		);
	}
	if (!isPlainObject(raw)) throw new SourceError('invalid', `${origin} is not a registry: expected a JSON object`);
	if (!isPlainObject(raw.data)) throw new SourceError('invalid', `${origin} is not a registry: "data" must be an object`);
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
export function nameWarning(document: RegistryDocument, origin: string): string | undefined {
	const names = [...document.servers, ...document.groups.flatMap((group) => group.servers)]
		.map((server) => server.name)
		.filter((name) => !REVERSE_DNS_NAME.test(name));
	if (names.length === 0) return undefined;
	const shown = names.slice(0, 5).map((name) => `'${name}'`).join(', ');
	return `${origin}: ${names.length} server name(s) are not reverse-DNS names such as io.github.owner/server (${shown}${names.length > 5 ? ', …' : ''}); they are served as they are`;
}

export function validateServers(value: unknown, field: string, origin: string): ServerRecord[] {
	if (value === undefined || value === null) return [];
	if (!Array.isArray(value)) throw invalid(origin, `${field} must be an array`);
	const seen = new Set<string>();
	const servers: ServerRecord[] = [];
	value.forEach((entry, index) => {
		const server = validateServer(entry, `${field}[${index}]`, origin);
		// A name listed twice keeps its first entry, as a lookup would find it.
		if (seen.has(server.name)) return;
		seen.add(server.name);
		servers.push(server);
	});
	return servers;
}

export function validateServer(entry: unknown, field: string, origin: string): ServerRecord {
	if (!isPlainObject(entry)) throw invalid(origin, `${field} must be an object`);
	const { name } = entry;
	if (typeof name !== 'string' || name.length < 3 || name.length > 200 || !SERVER_NAME.test(name)) {
		throw invalid(
			origin,
			`${field}.name must be 3-200 letters, digits, ".", "_", "-", "/" or "@", such as io.github.owner/server (got ${JSON.stringify(name)})`,
		);
	}
	for (const key of ['description', 'title', 'version'] as const) {
		if (entry[key] !== undefined && typeof entry[key] !== 'string') throw invalid(origin, `${field}.${key} must be a string`);
	}
	for (const key of ['packages', 'remotes'] as const) {
		const list = entry[key];
		if (list === undefined) continue;
		if (!Array.isArray(list) || !list.every(isPlainObject)) throw invalid(origin, `${field}.${key} must be an array of objects`);
	}
	if (entry._meta !== undefined && !isPlainObject(entry._meta)) throw invalid(origin, `${field}._meta must be an object`);
	return entry as ServerRecord;
}

export function validateSkills(value: unknown, field: string, origin: string): RegistrySkill[] {
	if (value === undefined || value === null) return [];
	if (!Array.isArray(value)) throw invalid(origin, `${field} must be an array`);
	return value.map((entry, index) => validateSkill(entry, `${field}[${index}]`, origin));
}

export function validateSkill(entry: unknown, field: string, origin: string): RegistrySkill {
	if (!isPlainObject(entry)) throw invalid(origin, `${field} must be an object`);
	if (typeof entry.name !== 'string' || entry.name === '') throw invalid(origin, `${field}.name must be a non-empty string`);
	for (const key of ['namespace', 'description', 'version', 'title'] as const) {
		if (entry[key] !== undefined && typeof entry[key] !== 'string') throw invalid(origin, `${field}.${key} must be a string`);
	}
	if (entry.packages !== undefined && (!Array.isArray(entry.packages) || !entry.packages.every(isPlainObject))) {
		throw invalid(origin, `${field}.packages must be an array of objects`);
	}
	return entry as RegistrySkill;
}

function validateGroups(value: unknown, origin: string): RegistryGroupDocument[] {
	if (value === undefined || value === null) return [];
	if (!Array.isArray(value)) throw invalid(origin, 'data.groups must be an array');
	return value.map((entry, index) => {
		const field = `data.groups[${index}]`;
		if (!isPlainObject(entry) || typeof entry.name !== 'string') throw invalid(origin, `${field}.name must be a string`);
		return {
			name: entry.name,
			...(typeof entry.description === 'string' ? { description: entry.description } : {}),
			servers: validateServers(entry.servers, `${field}.servers`, origin),
		};
	});
}

function invalid(origin: string, problem: string): SourceError {
	return new SourceError('invalid', `${origin} is not a valid registry: ${problem}`);
}
