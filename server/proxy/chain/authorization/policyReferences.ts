/**
 * Which attributes a policy set can read. Handing Cedar an entity costs time in proportion to
 * its attributes, and a token carries many claims no policy looks at; an attribute that no
 * policy names (with `.attr`, `["attr"]` or `has`) cannot change a decision, so only the named
 * ones are passed. A policy that uses `context` as a whole gets the whole context.
 */
import type { PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';

export interface References {
	/** Every attribute name the policies read, on any entity or record. */
	readonly attributes: ReadonlySet<string>;
	/** Whether some policy uses `context` other than to read one of its attributes. */
	readonly wholeContext: boolean;
}

export function referencesOf(policies: readonly PolicyJson[]): References {
	const attributes = new Set<string>();
	let wholeContext = false;

	/** An expression that attributes are read from: a bare variable there needs only that attribute. */
	const visitTarget = (node: unknown) => {
		if (!isVariable(node)) visit(node);
	};
	const visit = (node: unknown): void => {
		if (Array.isArray(node)) return node.forEach(visit);
		if (typeof node !== 'object' || node === null) return;
		const expression = node as Record<string, unknown>;
		if ('Value' in expression) return; // a literal
		const read = expression['.'] as { left: unknown; attr: string } | undefined;
		if (read && typeof read.attr === 'string') {
			attributes.add(read.attr);
			return visitTarget(read.left);
		}
		const has = expression.has as { left: unknown; attr: string | string[] } | undefined;
		if (has && has.attr !== undefined) {
			for (const attr of [has.attr].flat()) attributes.add(attr);
			return visitTarget(has.left);
		}
		if (expression.Var === 'context') wholeContext = true;
		for (const value of Object.values(expression)) visit(value);
	};
	for (const policy of policies) visit(policy.conditions);
	return { attributes, wholeContext };
}

function isVariable(node: unknown): boolean {
	return typeof node === 'object' && node !== null && typeof (node as { Var?: unknown }).Var === 'string';
}

/** The attributes of `record` that `references` name. */
export function referenced<T>(record: Readonly<Record<string, T>>, references: References): Record<string, T> {
	const kept: Record<string, T> = {};
	for (const name in record) if (references.attributes.has(name)) kept[name] = record[name]!;
	return kept;
}
