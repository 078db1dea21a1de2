/** Small helpers for building run configurations and their views. */
import { HangarError } from '../../protocol/errors.js';
/** The 400 for a request field, named as the request spells it. */
export const invalid = (field, message) => new HangarError(400, `invalid ${field}: ${message}`, 'invalid_params');
/** Drops undefined fields, so stored documents and responses carry only what is set. */
export function prune(value) {
    return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined));
}
//# sourceMappingURL=fields.js.map