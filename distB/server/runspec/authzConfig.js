/**
 * The authorization configuration file (`--authz-config`, JSON or YAML, ToolHive's format):
 *
 * ```yaml
 * version: "1.0"
 * type: cedarv1
 * cedar:
 *   policies:
 *     - 'permit(principal, action == Action::"call_tool", resource == Tool::"weather");'
 *   entities_json: "[]"        # optional: entities policies may refer to
 *   group_claim_name: ""       # optional: the claim holding the caller's groups (dot paths allowed)
 *   role_claim_name: ""        # optional: a claim of roles, counted as groups too
 *   group_entity_type: ""      # optional: entity type of groups (default THVGroup)
 * ```
 *
 * Loading it checks every policy with Cedar's parser, so that a mistake is reported with the
 * policy it is in when the workload is created, and again when its proxy starts.
 */
import { readFile } from 'node:fs/promises';
import { isPlainObject } from '../json.js';
export const AUTHZ_TYPE = 'cedarv1';
export const DEFAULT_GROUP_ENTITY_TYPE = 'THVGroup';
const ENTITY_TYPE = /^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$/;
const CEDAR_KEYS = new Set(['policies', 'entities_json', 'group_claim_name', 'role_claim_name', 'group_entity_type']);
/** A mistake in the file; the message names the file and the field or policy at fault. */
export class AuthzConfigError extends Error {
    name = 'AuthzConfigError';
}
/** Reads, parses and checks an authorization configuration file. */
export async function loadAuthzConfig(path) {
    let text;
    try {
        text = await readFile(path, 'utf8');
    }
    catch (error) {
        throw new AuthzConfigError(`cannot read ${path}: ${error.code ?? error.message}`);
    }
    const { parse } = await import('yaml'); // YAML is a superset of JSON: one parser reads both
    let document;
    try {
        document = parse(text);
    }
    catch (error) {
        throw new AuthzConfigError(`${path} is neither JSON nor YAML: ${error.message.split('\n')[0]}`);
    }
    const cedar = await import('@cedar-policy/cedar-wasm/nodejs');
    return checkAuthzConfig(document, path, cedar);
}
function checkAuthzConfig(document, file, cedar) {
    const fail = (message) => {
        throw new AuthzConfigError(`${file}: ${message}`);
    };
    if (!isPlainObject(document))
        return fail('expected an object with version, type and cedar');
    if (document.type !== AUTHZ_TYPE)
        return fail(`type must be ${AUTHZ_TYPE} (found ${JSON.stringify(document.type ?? null)})`);
    const version = document.version === undefined ? '1.0' : document.version;
    if (typeof version !== 'string')
        return fail('version must be a string such as "1.0"');
    const options = document.cedar;
    if (!isPlainObject(options))
        return fail('cedar must be an object with policies');
    for (const [key, value] of Object.entries(options)) {
        if (!CEDAR_KEYS.has(key) && !isEmpty(value))
            fail(`cedar.${key} is not supported`);
    }
    const policies = options.policies;
    if (!Array.isArray(policies) || policies.length === 0)
        return fail('cedar.policies must list at least one policy');
    policies.forEach((policy, index) => {
        if (typeof policy !== 'string' || !policy.trim())
            fail(`cedar.policies[${index}] must be a policy text`);
        const parsed = cedar.checkParsePolicySet({ staticPolicies: { [`policy${index}`]: policy } });
        if (parsed.type === 'failure')
            fail(`cedar.policies[${index}] is not a valid Cedar policy: ${describe(parsed.errors[0], policy)}`);
    });
    const entities = parseEntities(options.entities_json, fail);
    const checked = cedar.checkParseEntities({ entities: entities });
    if (checked.type === 'failure')
        fail(`cedar.entities_json: ${checked.errors.map((error) => error.message).join('; ')}`);
    const claimName = (key) => {
        const value = options[key];
        if (value === undefined || value === null || value === '')
            return undefined;
        if (typeof value !== 'string')
            return fail(`cedar.${key} must be a claim name`);
        return value;
    };
    const groupEntityType = claimName('group_entity_type') ?? DEFAULT_GROUP_ENTITY_TYPE;
    if (!ENTITY_TYPE.test(groupEntityType))
        fail(`cedar.group_entity_type ${JSON.stringify(groupEntityType)} is not a Cedar entity type`);
    return {
        version,
        policies: policies,
        entities: entities,
        groupClaimName: claimName('group_claim_name'),
        roleClaimName: claimName('role_claim_name'),
        groupEntityType,
    };
}
function parseEntities(value, fail) {
    if (value === undefined || value === null || value === '')
        return [];
    if (typeof value !== 'string')
        return fail('cedar.entities_json must be a string holding a JSON array');
    let entities;
    try {
        entities = JSON.parse(value);
    }
    catch (error) {
        return fail(`cedar.entities_json is not JSON: ${error.message}`);
    }
    if (!Array.isArray(entities))
        return fail('cedar.entities_json must hold a JSON array of entities');
    return entities;
}
/** Cedar's message, without the policy-id preamble, with the place in the policy it points at. */
function describe(error, policy) {
    if (!error)
        return 'unknown parse error';
    const message = error.message.replace(/^failed to parse policy with id `[^`]*` from string: /, '');
    const location = error.sourceLocations?.[0];
    if (!location)
        return message;
    const line = policy.slice(0, location.start).split('\n').length;
    const near = policy.slice(Math.max(0, location.start - 20), location.start + 20).replace(/\s+/g, ' ');
    return `${message} at line ${line}, offset ${location.start} (near ${JSON.stringify(near)})${location.label ? `: ${location.label}` : ''}`;
}
function isEmpty(value) {
    return value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);
}
//# sourceMappingURL=authzConfig.js.map