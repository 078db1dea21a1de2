/**
 * What a registry's answers mean for a caller of Hangar: each failure becomes a
 * `HangarError` with the status the skills rows list for its real cause.
 */
import { HangarError } from '../../protocol/errors.js';
/** A registry answered with a status that is not success. */
export function registryStatusError(status, registry, what, headers, detail) {
    const suffix = detail ? `: ${detail}` : '';
    if (status === 401 || status === 403) {
        return new HangarError(401, `registry ${registry} refused access to ${what}${suffix}; log in with \`docker login ${registry}\` or check the credentials`, 'registry_unauthorized');
    }
    if (status === 404)
        return new HangarError(404, `${what} not found in registry ${registry}${suffix}`, 'artifact_not_found');
    if (status === 429) {
        const retryAfter = retryAfterSeconds(headers?.get('retry-after'));
        return new HangarError(429, `registry ${registry} is rate-limiting requests for ${what}; try again later`, 'registry_rate_limited', {
            ...(retryAfter !== undefined && { retryAfter }),
        });
    }
    return new HangarError(502, `registry ${registry} answered ${status} for ${what}${suffix}`, 'registry_error');
}
/** A request that got no answer: timed out, cancelled, or never reached the registry. */
export function registryTransportError(error, registry, what, reason) {
    if (error instanceof HangarError)
        return error;
    if (reason === 'cancelled')
        return HangarError.cancelled(`pulling ${what}`);
    if (reason === 'timeout')
        return new HangarError(504, `registry ${registry} did not answer in time for ${what}`, 'registry_timeout');
    const cause = error?.cause;
    const why = cause?.code ?? cause?.message ?? error?.message ?? String(error);
    return new HangarError(502, `cannot reach registry ${registry} (${why})`, 'registry_unreachable', { cause: error });
}
/** An answer that arrived but cannot be trusted. */
export function integrityError(registry, message) {
    return new HangarError(502, `registry ${registry}: ${message}`, 'digest_mismatch');
}
function retryAfterSeconds(value) {
    if (!value)
        return undefined;
    const seconds = Number(value);
    if (Number.isFinite(seconds) && seconds >= 0)
        return Math.ceil(seconds);
    const date = Date.parse(value);
    return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
//# sourceMappingURL=errors.js.map