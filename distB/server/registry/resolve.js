/**
 * What kind of source a user-supplied location is, decided as ToolHive decides it:
 * `file://…` and plain paths are files; a URL whose path ends in `.json` is a registry file;
 * any other URL is probed at `/v0.1/servers?limit=1` and is an MCP Registry API when it answers
 * like one (or asks for credentials), a registry file otherwise.
 */
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SourceError } from './errors.js';
import { checkUrl } from './fetch.js';
import { isRegistryApi } from './remote.js';
/** The probe is a yes/no question: it gets less time than a full fetch. */
const PROBE_TIMEOUT_MS = 5_000;
/**
 * The location as it will be stored, without touching the network: a file path for paths and
 * `file://` URLs, the normalized URL otherwise. Policies compare against this form.
 */
export function normalizeLocation(location) {
    const value = location.trim();
    if (/^file:/i.test(value))
        return fileUrlToPath(value);
    if (isUrl(value)) {
        try {
            return new URL(value).toString();
        }
        catch {
            throw new SourceError('invalid_url', `invalid URL: ${value}`);
        }
    }
    return value;
}
export async function resolveSource(location, options) {
    const value = location.trim();
    if (/^file:/i.test(value))
        return fileSource(fileUrlToPath(value));
    if (isUrl(value)) {
        const url = checkUrl(value, options.allowPrivate);
        const normalized = url.toString();
        if (url.pathname.toLowerCase().endsWith('.json')) {
            return { type: 'url', location: normalized, allowPrivate: options.allowPrivate };
        }
        const api = await isRegistryApi(normalized, {
            allowPrivate: options.allowPrivate,
            timeoutMs: Math.min(PROBE_TIMEOUT_MS, options.timeoutMs),
            ...(options.signal ? { signal: options.signal } : {}),
        });
        return { type: api ? 'api' : 'url', location: normalized, allowPrivate: options.allowPrivate };
    }
    return fileSource(value);
}
/** Has a URL scheme (`https://`, `file://`, …), as opposed to a file path. */
export function isUrl(value) {
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(value);
}
function fileSource(path) {
    if (!isAbsolute(path))
        throw new SourceError('invalid_url', `registry file path must be absolute: ${path}`);
    if (path.includes('\0'))
        throw new SourceError('invalid_url', 'registry file path may not contain NUL bytes');
    return { type: 'file', location: path, allowPrivate: false };
}
function fileUrlToPath(value) {
    try {
        return fileURLToPath(value);
    }
    catch (error) {
        throw new SourceError('invalid_url', `invalid file URL ${value}: ${error.message}`);
    }
}
//# sourceMappingURL=resolve.js.map