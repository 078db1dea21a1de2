/**
 * Why a registry source could not be used, and how that reads to a caller.
 *
 * The same failure is a different status depending on when it happens: while a user points a
 * registry at a new source it is their request that failed (400, 502, 504, as ToolHive answers
 * `PUT /registry/default`); while serving a registry already configured it is the upstream
 * that is unavailable (503, ToolHive's `registry_unavailable`).
 */
import { HangarError } from '../../protocol/errors.js';
export class SourceError extends Error {
    failure;
    name = 'SourceError';
    constructor(failure, message) {
        super(message);
        this.failure = failure;
    }
}
/** The error a caller sees when a new source is being configured. */
export function configureError(error) {
    if (!(error instanceof SourceError))
        return unexpected(error);
    switch (error.failure) {
        case 'invalid_url':
            return new HangarError(400, error.message, 'invalid_registry_url');
        case 'refused':
            return new HangarError(400, error.message, 'registry_address_refused');
        case 'missing_file':
            return new HangarError(400, error.message, 'registry_file_not_found');
        case 'unreachable':
        case 'timeout':
            return new HangarError(504, error.message, 'registry_unreachable');
        case 'legacy':
            return new HangarError(502, error.message, 'registry_legacy_format');
        case 'auth':
            return new HangarError(502, `${error.message}; Hangar cannot sign in to registries yet, so use one that answers without credentials`, 'registry_auth_required');
        case 'http':
        case 'invalid':
            return new HangarError(502, error.message, 'registry_invalid');
        case 'cancelled':
            return HangarError.cancelled('registry update');
    }
}
/** The error a caller sees when a configured registry cannot be read. */
export function readError(registry, error) {
    if (!(error instanceof SourceError))
        return unexpected(error);
    const message = `registry '${registry}': ${error.message}`;
    switch (error.failure) {
        case 'legacy':
            return new HangarError(502, message, 'registry_legacy_format');
        case 'invalid':
            return new HangarError(502, message, 'registry_invalid');
        case 'auth':
            return new HangarError(503, `${message}; Hangar cannot sign in to registries yet`, 'registry_auth_required');
        case 'cancelled':
            return HangarError.cancelled('registry read');
        default:
            return new HangarError(503, message, 'registry_unavailable');
    }
}
/** Keeps a HangarError; anything else is a bug, rethrown for the dispatcher to log as a 500. */
function unexpected(error) {
    if (error instanceof HangarError)
        return error;
    throw error;
}
//# sourceMappingURL=errors.js.map