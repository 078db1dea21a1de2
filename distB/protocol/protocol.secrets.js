/**
 * Secrets: the secrets provider and the keys it stores. Until a provider is set up every
 * operation but `secrets/setup` fails with 404. Results never carry a secret's value.
 */
import { z } from 'zod';
import { NoParams, NoResult, requiredString } from './common.js';
import { operation } from './operation.js';
export const SECRETS_PROVIDER_TYPES = ['encrypted', '1password', 'environment'];
/**
 * `encrypted` (AES-256-GCM file, scrypt-derived key), `1password` (read-only, through the `op`
 * CLI) or `environment` (read-only, `HANGAR_SECRET_<NAME>` variables).
 */
export const SecretsProviderType = z.enum(SECRETS_PROVIDER_TYPES, {
    error: (issue) => issue.input === undefined || issue.input === ''
        ? 'provider type cannot be empty'
        : `invalid secrets provider type: ${String(issue.input)} (valid types: ${SECRETS_PROVIDER_TYPES.join(', ')})`,
});
/** What the configured provider can do; a missing capability makes the operation a 405. */
export const ProviderCapabilities = z.object({
    can_read: z.boolean(),
    can_write: z.boolean(),
    can_delete: z.boolean(),
    can_list: z.boolean(),
    can_cleanup: z.boolean(),
});
/** The configured provider. */
export const SecretsProvider = z.object({
    name: z.string(),
    provider_type: z.string(),
    capabilities: ProviderCapabilities.optional(),
});
/** A stored key (never its value). */
export const SecretKey = z.object({
    key: z.string(),
    description: z.string().optional(),
});
/** Result of a write (spec 2.14). */
export const SecretWriteResult = z.object({ key: z.string(), message: z.string() });
/** A secret's key. Keys starting with `__thv_` are reserved for the service's own secrets. */
export const SecretKeyName = requiredString('key')
    .refine((key) => !key.startsWith('__thv_'), 'keys starting with "__thv_" are reserved');
/**
 * Sets up or reconfigures the provider; reconfiguring `encrypted` re-encrypts the stored secrets.
 * Without `password`, `encrypted` uses `HANGAR_SECRETS_PASSWORD` or generates a key, kept in the
 * OS keyring or, where none runs, in a 0600 key file beside the store. A given password needs the
 * keyring (or the same value in `HANGAR_SECRETS_PASSWORD`): 400 otherwise.
 */
export const SetupSecrets = operation({
    method: 'secrets/setup',
    summary: 'Set up or reconfigure the secrets provider',
    params: z.object({
        provider_type: SecretsProviderType,
        /** Password of the `encrypted` provider. */
        password: z.string().optional(),
    }),
    result: z.object({ provider_type: z.string(), message: z.string() }),
    rest: { verb: 'POST', path: '/api/v1beta/secrets', status: 201 },
    errors: [400, 500],
    example: { provider_type: 'encrypted' },
});
/** Returns the configured provider and its capabilities. */
export const GetSecretsProvider = operation({
    method: 'secrets/getProvider',
    summary: 'Get the secrets provider',
    params: NoParams,
    result: SecretsProvider,
    rest: { verb: 'GET', path: '/api/v1beta/secrets/default', status: 200 },
    errors: [404, 500],
    example: {},
});
/** Lists the stored keys (405 when the provider cannot list). */
export const ListSecretKeys = operation({
    method: 'secrets/listKeys',
    summary: 'List secrets',
    params: NoParams,
    result: z.object({ keys: z.array(SecretKey) }),
    rest: { verb: 'GET', path: '/api/v1beta/secrets/default/keys', status: 200 },
    errors: [404, 405, 500],
    example: {},
});
/** Stores a new secret. 409 when the key exists; 405 unless the provider can write (`encrypted`). */
export const CreateSecret = operation({
    method: 'secrets/create',
    summary: 'Create a secret',
    params: z.object({ key: SecretKeyName, value: requiredString('value') }),
    result: SecretWriteResult,
    rest: { verb: 'POST', path: '/api/v1beta/secrets/default/keys', status: 201 },
    errors: [400, 404, 405, 409, 500],
    example: { key: 'contract', value: 'not-a-real-secret' },
});
/** Replaces the value of an existing secret (404 when the key does not exist). */
export const UpdateSecret = operation({
    method: 'secrets/update',
    summary: 'Update a secret',
    params: z.object({ key: SecretKeyName, value: requiredString('value') }),
    result: SecretWriteResult,
    rest: { verb: 'PUT', path: '/api/v1beta/secrets/default/keys/{key}', status: 200 },
    errors: [400, 404, 405, 500],
    example: { key: 'contract', value: 'not-a-real-secret-either' },
});
/** Deletes a secret (404 when the key does not exist; 405 unless the provider can delete). */
export const DeleteSecret = operation({
    method: 'secrets/delete',
    summary: 'Delete a secret',
    params: z.object({ key: SecretKeyName }),
    result: NoResult,
    rest: { verb: 'DELETE', path: '/api/v1beta/secrets/default/keys/{key}', status: 204, response: 'empty' },
    errors: [400, 404, 405, 500],
    example: { key: 'contract' },
});
//# sourceMappingURL=protocol.secrets.js.map