/**
 * Reading registries over the network: a static registry file at a URL, or an MCP Registry
 * API (`/v0.1/servers`, cursor-paged) whose pages are gathered into one registry document.
 */
import type { ServerRecord } from '../../protocol/protocol.catalog.js';
import { isPlainObject } from '../json.js';
import { SourceError } from './errors.js';
import { fetchJson, type FetchedJson, type FetchOptions } from './fetch.js';
import { validateRegistry, validateServer, validateSkills, type RegistryDocument } from './format.js';

/** Page size asked of an API; the official MCP registry allows at most 100. */
const API_PAGE_SIZE = 100;
/** Stops a misbehaving API that never ends its cursor chain. */
const MAX_API_PAGES = 1_000;
const OFFICIAL_META = 'io.modelcontextprotocol.registry/official';

export type PageListener = (message: string) => void;

/** A registry file served at a URL. */
export async function fetchRegistryFile(url: string, options: FetchOptions): Promise<RegistryDocument> {
	const response = await fetchJson(url, options);
	expectSuccess(response, url);
	if (response.json === undefined) throw new SourceError('invalid', `${url} did not answer with JSON`);
	return validateRegistry(response.json, url);
}

/**
 * True when `base` speaks the MCP Registry API: `GET /v0.1/servers?limit=1` answers a JSON
 * `servers` array with a `metadata` object, or asks for credentials.
 */
export async function isRegistryApi(base: string, options: FetchOptions): Promise<boolean> {
	const response = await fetchJson(`${trimSlash(base)}/v0.1/servers?limit=1&version=latest`, options);
	if (response.status === 401 || response.status === 403) return true;
	if (response.status < 200 || response.status >= 300) return false;
	const body = response.json as { servers?: unknown; metadata?: unknown } | undefined;
	return Array.isArray(body?.servers) && typeof body?.metadata === 'object' && body.metadata !== null;
}

/** Every server (latest versions, deleted ones left out) and skill an MCP Registry API lists. */
export async function fetchRegistryApi(base: string, options: FetchOptions, onPage?: PageListener): Promise<RegistryDocument> {
	const root = trimSlash(base);
	const serverItems = await fetchAllPages(`${root}/v0.1/servers`, 'servers', options, onPage, { version: 'latest' });
	const servers: ServerRecord[] = [];
	const seen = new Set<string>();
	serverItems.forEach((item, index) => {
		const wrapped = isPlainObject(item) && isPlainObject(item.server);
		const server = wrapped ? item.server : item;
		const official = wrapped && isPlainObject(item._meta) ? item._meta[OFFICIAL_META] : undefined;
		if (isPlainObject(official) && official.status === 'deleted') return;
		const record = validateServer(server, `servers[${index}]`, root);
		if (seen.has(record.name)) return;
		seen.add(record.name);
		servers.push(record);
	});
	// Skills are a ToolHive extension; an API without them (404) simply has none.
	const skillItems = await fetchAllPages(`${root}/v0.1/x/dev.toolhive/skills`, 'skills', options, onPage, {}, true);
	return { servers, skills: validateSkills(skillItems, 'skills', root), groups: [] };
}

async function fetchAllPages(
	endpoint: string,
	key: 'servers' | 'skills',
	options: FetchOptions,
	onPage: PageListener | undefined,
	query: Record<string, string>,
	optional = false,
): Promise<unknown[]> {
	const items: unknown[] = [];
	const cursors = new Set<string>();
	let cursor: string | undefined;
	for (let page = 1; page <= MAX_API_PAGES; page++) {
		const search = new URLSearchParams({ limit: String(API_PAGE_SIZE), ...query });
		if (cursor) search.set('cursor', cursor);
		const url = `${endpoint}?${search}`;
		const response = await fetchJson(url, options);
		if (optional && page === 1 && (response.status === 404 || response.status === 405)) return [];
		expectSuccess(response, url);
		const body = response.json as Record<string, unknown> | undefined;
		const list = body?.[key];
		if (!Array.isArray(list)) throw new SourceError('invalid', `${url} is not an MCP registry API page: "${key}" must be an array`);
		items.push(...list);
		onPage?.(`${key}: page ${page}, ${items.length} so far`);
		const metadata = isPlainObject(body?.metadata) ? body.metadata : {};
		// The OpenAPI spells it nextCursor; older documents next_cursor.
		const next = metadata.nextCursor ?? metadata.next_cursor;
		if (typeof next !== 'string' || next === '') return items;
		if (cursors.has(next)) throw new SourceError('invalid', `${endpoint} repeats cursor ${JSON.stringify(next)}`);
		cursors.add(next);
		cursor = next;
	}
	throw new SourceError('invalid', `${endpoint} has more than ${MAX_API_PAGES} pages`);
}

function expectSuccess(response: FetchedJson, url: string): void {
	if (response.status === 401 || response.status === 403) {
		throw new SourceError('auth', `${url} requires authentication (HTTP ${response.status})`);
	}
	if (response.status < 200 || response.status >= 300) {
		throw new SourceError('http', `${url} answered HTTP ${response.status}`);
	}
}

function trimSlash(url: string): string {
	return url.replace(/\/+$/, '');
}
