/**
 * Matches a request's verb and path to a row of the operation table. Literal segments win
 * over `{param}` segments, so `/skills/builds` never reaches `/skills/{name}`.
 */
import type { HttpVerb, OperationDefinition } from '../../protocol/operation.js';

type Segment = { literal: string } | { param: string };

interface Route {
	readonly row: OperationDefinition;
	readonly segments: readonly Segment[];
}

export type RouteMatch =
	| { kind: 'found'; row: OperationDefinition; params: Record<string, string> }
	| { kind: 'wrong-verb'; allowed: HttpVerb[] }
	| { kind: 'none' };

function parse(path: string): Segment[] {
	return path
		.split('/')
		.filter(Boolean)
		.map((part) => (part.startsWith('{') && part.endsWith('}') ? { param: part.slice(1, -1) } : { literal: part }));
}

/** Literal before param at the first segment where two routes differ. */
function bySpecificity(a: Route, b: Route): number {
	const length = Math.min(a.segments.length, b.segments.length);
	for (let index = 0; index < length; index++) {
		const aLiteral = 'literal' in a.segments[index]!;
		const bLiteral = 'literal' in b.segments[index]!;
		if (aLiteral !== bLiteral) return aLiteral ? -1 : 1;
	}
	return 0;
}

export class Router {
	private readonly routes: Route[];

	constructor(rows: Iterable<OperationDefinition>) {
		this.routes = [...rows].map((row) => ({ row, segments: parse(row.rest.path) })).sort(bySpecificity);
	}

	/** `rawPath` is the path as sent (still percent-encoded): `%2F` stays inside a segment. */
	match(verb: string, rawPath: string): RouteMatch {
		const parts = rawPath.split('/').filter(Boolean);
		const allowed: HttpVerb[] = [];
		for (const route of this.routes) {
			const params = matchSegments(route.segments, parts);
			if (!params) continue;
			if (route.row.rest.verb === verb) return { kind: 'found', row: route.row, params };
			allowed.push(route.row.rest.verb);
		}
		return allowed.length ? { kind: 'wrong-verb', allowed } : { kind: 'none' };
	}
}

function matchSegments(segments: readonly Segment[], parts: readonly string[]): Record<string, string> | undefined {
	if (segments.length !== parts.length) return undefined;
	const params: Record<string, string> = {};
	for (let index = 0; index < segments.length; index++) {
		const segment = segments[index]!;
		const part = parts[index]!;
		if ('literal' in segment) {
			if (segment.literal !== part) return undefined;
		} else {
			params[segment.param] = part;
		}
	}
	return params;
}
