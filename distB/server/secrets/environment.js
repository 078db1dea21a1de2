/**
 * The `environment` provider: read-only secrets from `HANGAR_SECRET_<NAME>` variables of the
 * Hangar process. The name is tried as written, then upper-cased with other characters than
 * letters, digits and `_` turned into `_` (`github-token` → `HANGAR_SECRET_GITHUB_TOKEN`).
 */
export const SECRET_VARIABLE_PREFIX = 'HANGAR_SECRET_';
export function readEnvironmentSecret(env, name) {
    const normalized = name.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
    return env[`${SECRET_VARIABLE_PREFIX}${name}`] || env[`${SECRET_VARIABLE_PREFIX}${normalized}`] || undefined;
}
//# sourceMappingURL=environment.js.map