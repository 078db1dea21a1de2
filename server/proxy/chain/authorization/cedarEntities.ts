/**
 * How MCP requests and token claims become Cedar entities and attributes (ToolHive's model,
 * so its policies work unchanged):
 *
 * - the principal is `Client::"<sub>"`, each claim an attribute `claim_<name>`, and each of
 *   the caller's groups a parent `THVGroup::"<group>"` (`principal in THVGroup::"eng"`);
 * - a tool call's scalar arguments are attributes `arg_<name>` of the resource (complex ones
 *   only `arg_<name>_present`), and claims and arguments together form the context.
 *
 * Values are converted to what Cedar's JSON accepts: integers are Longs, other numbers
 * decimals (rounded to Cedar's four places; strings beyond its range), arrays sets, objects
 * records; `null` is left out, and so are record keys Cedar would read as an entity or
 * extension escape (`__entity`, `__extn`, `__expr`).
 */
import type { CedarValueJson } from '@cedar-policy/cedar-wasm/nodejs';

export type Attributes = Record<string, CedarValueJson>;

const DEFAULT_GROUP_CLAIMS = ['groups', 'roles', 'cognito:groups'];
const ESCAPES = new Set(['__entity', '__extn', '__expr']);
/** Cedar decimals are 64-bit with four decimal places. */
const MAX_DECIMAL = 922_337_203_685_477;

/** A JSON value as Cedar reads it, or undefined when it has no Cedar form. */
export function cedarValue(value: unknown): CedarValueJson | undefined {
	switch (typeof value) {
		case 'string':
		case 'boolean':
			return value;
		case 'number':
			if (Number.isSafeInteger(value)) return value;
			return Math.abs(value) < MAX_DECIMAL ? { __extn: { fn: 'decimal', arg: value.toFixed(4) } } : String(value);
		case 'object': {
			if (value === null) return undefined;
			if (Array.isArray(value)) {
				const items: CedarValueJson[] = [];
				for (const item of value) {
					const converted = cedarValue(item);
					if (converted !== undefined) items.push(converted);
				}
				return items;
			}
			const record: Record<string, CedarValueJson> = {};
			for (const [key, item] of Object.entries(value)) {
				if (ESCAPES.has(key)) continue;
				const converted = cedarValue(item);
				if (converted !== undefined) record[key] = converted;
			}
			return record;
		}
		default:
			return undefined;
	}
}

/** Every claim as `claim_<name>`. */
export function claimAttributes(claims: Readonly<Record<string, unknown>>): Attributes {
	const attributes: Attributes = {};
	for (const [name, value] of Object.entries(claims)) {
		const converted = cedarValue(value);
		if (converted !== undefined) attributes[`claim_${name}`] = converted;
	}
	return attributes;
}

/** Scalar arguments as `arg_<name>`; objects and arrays only as `arg_<name>_present: true`. */
export function argumentAttributes(args: unknown): Attributes {
	const attributes: Attributes = {};
	if (typeof args !== 'object' || args === null || Array.isArray(args)) return attributes;
	for (const [name, value] of Object.entries(args)) {
		if (typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number') attributes[`arg_${name}`] = cedarValue(value)!;
		else if (value !== null && value !== undefined) attributes[`arg_${name}_present`] = true;
	}
	return attributes;
}

/** A claim by exact name, else by dot path (`realm_access.roles`). */
function claimAt(claims: Readonly<Record<string, unknown>>, name: string): unknown {
	if (name in claims) return claims[name];
	let value: unknown = claims;
	for (const part of name.split('.')) {
		if (typeof value !== 'object' || value === null) return undefined;
		value = (value as Record<string, unknown>)[part];
	}
	return value;
}

/**
 * The caller's groups: from `groupClaimName` when the token has it, else from the first of
 * `groups`, `roles`, `cognito:groups` it has; plus the values of `roleClaimName`.
 */
export function groupsOf(claims: Readonly<Record<string, unknown>>, groupClaimName: string | undefined, roleClaimName: string | undefined): string[] {
	const groups = new Set<string>();
	const add = (value: unknown) => {
		if (typeof value === 'string' && value) groups.add(value);
		else if (Array.isArray(value)) for (const item of value) if (typeof item === 'string' && item) groups.add(item);
	};
	const named = groupClaimName ? claimAt(claims, groupClaimName) : undefined;
	add(named ?? DEFAULT_GROUP_CLAIMS.map((name) => claims[name]).find((value) => value !== undefined));
	if (roleClaimName) add(claimAt(claims, roleClaimName));
	return [...groups];
}

/** The tool annotations Cedar policies may test (`resource has readOnlyHint && …`). */
export const TOOL_HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

export function hintAttributes(annotations: unknown): Attributes {
	const attributes: Attributes = {};
	if (typeof annotations !== 'object' || annotations === null) return attributes;
	for (const hint of TOOL_HINTS) {
		const value = (annotations as Record<string, unknown>)[hint];
		if (typeof value === 'boolean') attributes[hint] = value;
	}
	return attributes;
}
