import { isPlainObject } from '../json.js';
import { SourceError } from './errors.js';
import { fetchJson } from './fetch.js';
import { validateRegistry, validateServer, validateSkills } from './format.js';
/** Page size asked of an API; the official MCP registry allows at most 100. */
const API_PAGE_SIZE = 100;
/** Stops a misbehaving API that never ends its cursor chain. */
const MAX_API_PAGES = 1_000;
const OFFICIAL_META = 'io.modelcontextprotocol.registry/official';
/** A registry file served at a URL. */
export async function fetchRegistryFile(url, options) {
    const response = await fetchJson(url, options);
    expectSuccess(response, url);
    if (response.json === undefined)
        throw new SourceError('invalid', `${url} did not answer with JSON`);
    return validateRegistry(response.json, url);
}
/**
 * True when `base` speaks the MCP Registry API: `GET /v0.1/servers?limit=1` answers a JSON
 * `servers` array with a `metadata` object, or asks for credentials.
 */
export async function isRegistryApi(base, options) {
    const response = await fetchJson(`${trimSlash(base)}/v0.1/servers?limit=1&version=latest`, options);
    if (response.status === 401 || response.status === 403)
        return true;
    if (response.status < 200 || response.status >= 300)
        return false;
    const body = response.json;
    return Array.isArray(body?.servers) && typeof body?.metadata === 'object' && body.metadata !== null;
}
/** Every server (latest versions, deleted ones left out) and skill an MCP Registry API lists. */
export async function fetchRegistryApi(base, options, onPage) {
    const root = trimSlash(base);
    const serverItems = await fetchAllPages(`${root}/v0.1/servers`, 'servers', options, onPage, { version: 'latest' });
    const servers = [];
    const seen = new Set();
    serverItems.forEach((item, index) => {
        const wrapped = isPlainObject(item) && isPlainObject(item.server);
        const server = wrapped ? item.server : item;
        const official = wrapped && isPlainObject(item._meta) ? item._meta[OFFICIAL_META] : undefined;
        if (isPlainObject(official) && official.status === 'deleted')
            return;
        const record = validateServer(server, `servers[${index}]`, root);
        if (seen.has(record.name))
            return;
        seen.add(record.name);
        servers.push(record);
    });
    // Skills are a ToolHive extension; an API without them (404) simply has none.
    const skillItems = await fetchAllPages(`${root}/v0.1/x/dev.toolhive/skills`, 'skills', options, onPage, {}, true);
    return { servers, skills: validateSkills(skillItems, 'skills', root), groups: [] };
}
async function fetchAllPages(endpoint, key, options, onPage, query, optional = false) {
    const items = [];
    const cursors = new Set();
    let cursor;
    for (let page = 1; page <= MAX_API_PAGES; page++) {
        const search = new URLSearchParams({ limit: String(API_PAGE_SIZE), ...query });
        if (cursor)
            search.set('cursor', cursor);
        const url = `${endpoint}?${search}`;
        const response = await fetchJson(url, options);
        if (optional && page === 1 && (response.status === 404 || response.status === 405))
            return [];
        expectSuccess(response, url);
        const body = response.json;
        const list = body?.[key];
        if (!Array.isArray(list))
            throw new SourceError('invalid', `${url} is not an MCP registry API page: "${key}" must be an array`);
        items.push(...list);
        onPage?.(`${key}: page ${page}, ${items.length} so far`);
        const metadata = isPlainObject(body?.metadata) ? body.metadata : {};
        // The OpenAPI spells it nextCursor; older documents next_cursor.
        const next = metadata.nextCursor ?? metadata.next_cursor;
        if (typeof next !== 'string' || next === '')
            return items;
        if (cursors.has(next))
            throw new SourceError('invalid', `${endpoint} repeats cursor ${JSON.stringify(next)}`);
        cursors.add(next);
        cursor = next;
    }
    throw new SourceError('invalid', `${endpoint} has more than ${MAX_API_PAGES} pages`);
}
function expectSuccess(response, url) {
    if (response.status === 401 || response.status === 403) {
        throw new SourceError('auth', `${url} requires authentication (HTTP ${response.status})`);
    }
    if (response.status < 200 || response.status >= 300) {
        throw new SourceError('http', `${url} answered HTTP ${response.status}`);
    }
}
function trimSlash(url) {
    return url.replace(/\/+$/, '');
}
//# sourceMappingURL=remote.js.map