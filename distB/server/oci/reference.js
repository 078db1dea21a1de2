/**
 * OCI references (`[registry/]repository[:tag][@digest]`), by the grammar of the
 * distribution project: the first path component names a registry when it has a `.` or a
 * `:` or is `localhost`; otherwise the registry is Docker Hub and one-component names live
 * under `library/`.
 */
export const DOCKER_HUB = 'docker.io';
const DOCKER_HUB_API = 'registry-1.docker.io';
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^(sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$/;
const REGISTRY = /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::\d{1,5})?$/;
const MAX_NAME = 255;
export class ReferenceError extends Error {
    name = 'ReferenceError';
}
export function isDigest(value) {
    return DIGEST.test(value);
}
/** Parses a reference; throws `ReferenceError` saying what is wrong. */
export function parseReference(text) {
    let rest = text.trim();
    let digest;
    const at = rest.indexOf('@');
    if (at >= 0) {
        digest = rest.slice(at + 1);
        rest = rest.slice(0, at);
        if (!DIGEST.test(digest))
            throw new ReferenceError(`invalid digest "${digest}" in reference ${text}`);
    }
    let tag;
    const lastSlash = rest.lastIndexOf('/');
    const colon = rest.lastIndexOf(':');
    if (colon > lastSlash) {
        tag = rest.slice(colon + 1);
        rest = rest.slice(0, colon);
        if (!TAG.test(tag))
            throw new ReferenceError(`invalid tag "${tag}" in reference ${text}`);
    }
    const parts = rest.split('/');
    let registry = DOCKER_HUB;
    if (parts.length > 1 && (parts[0].includes('.') || parts[0].includes(':') || parts[0] === 'localhost' || parts[0].startsWith('['))) {
        registry = parts.shift();
        if (!REGISTRY.test(registry))
            throw new ReferenceError(`invalid registry "${registry}" in reference ${text}`);
    }
    if (registry === 'index.docker.io')
        registry = DOCKER_HUB;
    if (registry === DOCKER_HUB && parts.length === 1)
        parts.unshift('library');
    for (const part of parts) {
        if (!COMPONENT.test(part)) {
            throw new ReferenceError(`invalid repository name "${parts.join('/')}" in reference ${text}: use lowercase letters, digits and separators`);
        }
    }
    const repository = parts.join('/');
    if (repository.length > MAX_NAME)
        throw new ReferenceError(`repository name in reference ${text} is longer than ${MAX_NAME} characters`);
    return { registry, repository, ...(tag !== undefined && { tag }), ...(digest !== undefined && { digest }) };
}
/** The reference as text, in the form Docker prints it (`docker.io/library/x:1`). */
export function formatReference(reference) {
    return `${reference.registry}/${reference.repository}${reference.tag ? `:${reference.tag}` : ''}${reference.digest ? `@${reference.digest}` : ''}`;
}
/** What to ask the registry for: the digest when known, else the tag (`latest` by default). */
export function manifestReference(reference) {
    return reference.digest ?? reference.tag ?? 'latest';
}
/** The host the registry's HTTP API answers on. */
export function apiHost(registry) {
    return registry === DOCKER_HUB ? DOCKER_HUB_API : registry;
}
/** The host name without port or IPv6 brackets. */
export function hostName(registry) {
    if (registry.startsWith('['))
        return registry.slice(1, registry.indexOf(']'));
    const colon = registry.lastIndexOf(':');
    return colon > 0 ? registry.slice(0, colon) : registry;
}
//# sourceMappingURL=reference.js.map