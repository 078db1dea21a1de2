function parse(path) {
    return path
        .split('/')
        .filter(Boolean)
        .map((part) => (part.startsWith('{') && part.endsWith('}') ? { param: part.slice(1, -1) } : { literal: part }));
}
/** Literal before param at the first segment where two routes differ. */
function bySpecificity(a, b) {
    const length = Math.min(a.segments.length, b.segments.length);
    for (let index = 0; index < length; index++) {
        const aLiteral = 'literal' in a.segments[index];
        const bLiteral = 'literal' in b.segments[index];
        if (aLiteral !== bLiteral)
            return aLiteral ? -1 : 1;
    }
    return 0;
}
export class Router {
    routes;
    constructor(rows) {
        this.routes = [...rows].map((row) => ({ row, segments: parse(row.rest.path) })).sort(bySpecificity);
    }
    /** `rawPath` is the path as sent (still percent-encoded): `%2F` stays inside a segment. */
    match(verb, rawPath) {
        const parts = rawPath.split('/').filter(Boolean);
        const allowed = [];
        for (const route of this.routes) {
            const params = matchSegments(route.segments, parts);
            if (!params)
                continue;
            if (route.row.rest.verb === verb)
                return { kind: 'found', row: route.row, params };
            allowed.push(route.row.rest.verb);
        }
        return allowed.length ? { kind: 'wrong-verb', allowed } : { kind: 'none' };
    }
}
function matchSegments(segments, parts) {
    if (segments.length !== parts.length)
        return undefined;
    const params = {};
    for (let index = 0; index < segments.length; index++) {
        const segment = segments[index];
        const part = parts[index];
        if ('literal' in segment) {
            if (segment.literal !== part)
                return undefined;
        }
        else {
            params[segment.param] = part;
        }
    }
    return params;
}
//# sourceMappingURL=router.js.map