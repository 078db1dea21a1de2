/**
 * Client capability sets, as tool pinning tells them apart. A server may list some tools only
 * to clients that declare a capability (server-everything offers its roots tool to clients with
 * `roots`, its URL elicitation tool to those with `elicitation.url`), so every list is screened
 * under the capability set of the client it was listed to (drift.ts). A set is the key paths of
 * the declared capabilities object (`elicitation`, `elicitation.url`, `tasks.requests.sampling`),
 * values left out: `roots.listChanged` true or false is the same set. A set with more paths is
 * a client with more capabilities.
 */

/** Deeper keys are not told apart (no capability of the spec nests further). */
const MAX_DEPTH = 5;
/** The most paths a set keeps (in order): a client declaring more is not made into ever new sets. */
const MAX_PATHS = 64;

/** The set of `capabilities` as the key pins are recorded under: the JSON array of its sorted paths. */
export function capabilitySetOf(capabilities: unknown): string {
	const paths: string[] = [];
	const walk = (value: unknown, prefix: string, depth: number) => {
		if (typeof value !== 'object' || value === null || Array.isArray(value) || depth > MAX_DEPTH) return;
		for (const key of Object.keys(value)) {
			const path = prefix ? `${prefix}.${key}` : key;
			paths.push(path);
			walk((value as Record<string, unknown>)[key], path, depth + 1);
		}
	};
	walk(capabilities, '', 1);
	return JSON.stringify(paths.sort().slice(0, MAX_PATHS));
}

/** The set of a client that declares no capability. */
export const NO_CAPABILITIES = capabilitySetOf({});

/** Whether every capability of set `a` is in set `b` (a client with `b` may do all that one with `a` may). */
export function isSubsetOf(a: string, b: string): boolean {
	const within = new Set(JSON.parse(b) as string[]);
	return (JSON.parse(a) as string[]).every((path) => within.has(path));
}
