/** Declares a row; the identity function keeps the literal types of schemas and method. */
export function operation(definition) {
    return definition;
}
export function notification(definition) {
    return definition;
}
/** Names of the `{param}` placeholders of a REST path. */
export function pathParams(path) {
    return [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
}
//# sourceMappingURL=operation.js.map