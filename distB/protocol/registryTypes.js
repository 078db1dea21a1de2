/**
 * Registry entries in the "legacy ToolHive" shape the management API returns (spec 2.4–2.7;
 * ToolHive `registry.Registry`, `ImageMetadata`, `RemoteServerMetadata`). Map keys of `servers`
 * and `remote_servers` are full reverse-DNS names (`io.github.stacklok/fetch`).
 */
import { z } from 'zod';
import { StringMap } from './common.js';
import { PermissionProfile } from './runConfig.js';
/** An environment variable a server accepts (spec 2.7). */
export const EnvVar = z.object({
    name: z.string(),
    description: z.string().optional(),
    default: z.string().optional(),
    required: z.boolean().optional(),
    /** The value is sensitive: supply it through a secret. */
    secret: z.boolean().optional(),
});
/** An HTTP header a remote server accepts (spec 2.6); workload requests carry the same shape. */
export const RegistryHeader = z.object({
    name: z.string(),
    description: z.string().optional(),
    default: z.string().optional(),
    required: z.boolean().optional(),
    secret: z.boolean().optional(),
    choices: z.array(z.string()).optional(),
});
/** Where a server is deployed when it comes from a cluster. */
export const KubernetesMetadata = z.object({
    kind: z.string().optional(),
    namespace: z.string().optional(),
    name: z.string().optional(),
    uid: z.string().optional(),
    image: z.string().optional(),
    transport: z.string().optional(),
});
/** Popularity and freshness of an entry. */
export const ServerMetadata = z.object({
    stars: z.number().int().optional(),
    last_updated: z.string().optional(),
    kubernetes: KubernetesMetadata.optional(),
});
/** How a remote server authenticates its users (spec 2.6 `oauth_config`). */
export const RegistryOAuthConfig = z.object({
    issuer: z.string().optional(),
    authorize_url: z.string().optional(),
    token_url: z.string().optional(),
    client_id: z.string().optional(),
    scopes: z.array(z.string()).optional(),
    use_pkce: z.boolean().optional(),
    oauth_params: StringMap.optional(),
    callback_port: z.number().int().optional(),
    resource: z.string().optional(),
});
/** Signing provenance of an image (spec 2.5). */
export const ServerProvenance = z.object({
    sigstore_url: z.string().optional(),
    repository_uri: z.string().optional(),
    repository_ref: z.string().optional(),
    signer_identity: z.string().optional(),
    runner_environment: z.string().optional(),
    cert_issuer: z.string().optional(),
    attestation: z.object({ predicate_type: z.string().optional(), predicate: z.unknown().optional() }).optional(),
});
const BaseServerFields = {
    name: z.string().optional(),
    title: z.string().optional(),
    description: z.string().optional(),
    overview: z.string().optional(),
    /** `Official`, `Community`, … */
    tier: z.string().optional(),
    /** `active`, `deprecated`, … (case varies between sources). */
    status: z.string().optional(),
    /** `stdio`, `sse` or `streamable-http`. */
    transport: z.string().optional(),
    /** The server only supports POST (no SSE/GET). */
    stateless: z.boolean().optional(),
    tools: z.array(z.string()).optional(),
    /** MCP tool definitions, when the source lists them. */
    tool_definitions: z.array(z.record(z.string(), z.unknown())).optional(),
    tags: z.array(z.string()).optional(),
    repository_url: z.string().optional(),
    metadata: ServerMetadata.optional(),
    custom_metadata: z.record(z.string(), z.unknown()).optional(),
};
/** A server run from a container image (spec 2.5). */
export const ImageServer = z.object({
    ...BaseServerFields,
    image: z.string().optional(),
    args: z.array(z.string()).optional(),
    docker_tags: z.array(z.string()).optional(),
    env_vars: z.array(EnvVar).optional(),
    permissions: PermissionProfile.optional(),
    provenance: ServerProvenance.optional(),
    proxy_port: z.number().int().optional(),
    target_port: z.number().int().optional(),
});
/** A server reached at a remote URL (spec 2.6). */
export const RemoteServer = z.object({
    ...BaseServerFields,
    url: z.string().optional(),
    headers: z.array(RegistryHeader).optional(),
    env_vars: z.array(EnvVar).optional(),
    oauth_config: RegistryOAuthConfig.optional(),
    proxy_port: z.number().int().optional(),
});
/** A named set of registry servers (spec 2.4 group). */
export const RegistryGroup = z.object({
    name: z.string().optional(),
    description: z.string().optional(),
    servers: z.record(z.string(), ImageServer).optional(),
    remote_servers: z.record(z.string(), RemoteServer).optional(),
});
/** The whole content of a registry (spec 2.4 `registry`). */
export const RegistryData = z.object({
    version: z.string().optional(),
    last_updated: z.string().optional(),
    servers: z.record(z.string(), ImageServer).optional(),
    remote_servers: z.record(z.string(), RemoteServer).optional(),
    groups: z.array(RegistryGroup).optional(),
});
//# sourceMappingURL=registryTypes.js.map