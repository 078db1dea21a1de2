const DEFAULT_GROUP_CLAIMS = ['groups', 'roles', 'cognito:groups'];
const ESCAPES = new Set(['__entity', '__extn', '__expr']);
/** Cedar decimals are 64-bit with four decimal places. */
const MAX_DECIMAL = 922_337_203_685_477;
/** A JSON value as Cedar reads it, or undefined when it has no Cedar form. */
export function cedarValue(value) {
    switch (typeof value) {
        case 'string':
        case 'boolean':
            return value;
        case 'number':
            if (Number.isSafeInteger(value))
                return value;
            return Math.abs(value) < MAX_DECIMAL ? { __extn: { fn: 'decimal', arg: value.toFixed(4) } } : String(value);
        case 'object': {
            if (value === null)
                return undefined;
            if (Array.isArray(value)) {
                const items = [];
                for (const item of value) {
                    const converted = cedarValue(item);
                    if (converted !== undefined)
                        items.push(converted);
                }
                return items;
            }
            const record = {};
            for (const [key, item] of Object.entries(value)) {
                if (ESCAPES.has(key))
                    continue;
                const converted = cedarValue(item);
                if (converted !== undefined)
                    record[key] = converted;
            }
            return record;
        }
        default:
            return undefined;
    }
}
/** Every claim as `claim_<name>`. */
export function claimAttributes(claims) {
    const attributes = {};
    for (const [name, value] of Object.entries(claims)) {
        const converted = cedarValue(value);
        if (converted !== undefined)
            attributes[`claim_${name}`] = converted;
    }
    return attributes;
}
/** Scalar arguments as `arg_<name>`; objects and arrays only as `arg_<name>_present: true`. */
export function argumentAttributes(args) {
    const attributes = {};
    if (typeof args !== 'object' || args === null || Array.isArray(args))
        return attributes;
    for (const [name, value] of Object.entries(args)) {
        if (typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number')
            attributes[`arg_${name}`] = cedarValue(value);
        else if (value !== null && value !== undefined)
            attributes[`arg_${name}_present`] = true;
    }
    return attributes;
}
/** A claim by exact name, else by dot path (`realm_access.roles`). */
function claimAt(claims, name) {
    if (name in claims)
        return claims[name];
    let value = claims;
    for (const part of name.split('.')) {
        if (typeof value !== 'object' || value === null)
            return undefined;
        value = value[part];
    }
    return value;
}
/**
 * The caller's groups: from `groupClaimName` when the token has it, else from the first of
 * `groups`, `roles`, `cognito:groups` it has; plus the values of `roleClaimName`.
 */
export function groupsOf(claims, groupClaimName, roleClaimName) {
    const groups = new Set();
    const add = (value) => {
        if (typeof value === 'string' && value)
            groups.add(value);
        else if (Array.isArray(value))
            for (const item of value)
                if (typeof item === 'string' && item)
                    groups.add(item);
    };
    const named = groupClaimName ? claimAt(claims, groupClaimName) : undefined;
    add(named ?? DEFAULT_GROUP_CLAIMS.map((name) => claims[name]).find((value) => value !== undefined));
    if (roleClaimName)
        add(claimAt(claims, roleClaimName));
    return [...groups];
}
/** The tool annotations Cedar policies may test (`resource has readOnlyHint && …`). */
export const TOOL_HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'];
export function hintAttributes(annotations) {
    const attributes = {};
    if (typeof annotations !== 'object' || annotations === null)
        return attributes;
    for (const hint of TOOL_HINTS) {
        const value = annotations[hint];
        if (typeof value === 'boolean')
            attributes[hint] = value;
    }
    return attributes;
}
//# sourceMappingURL=cedarEntities.js.map