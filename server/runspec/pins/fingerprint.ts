/**
 * What a pin is made of: the fields of a tool or prompt that reach the model, and the SHA-256
 * of their RFC 8785 canonical JSON. Anything else a server adds (`_meta`, `icons`, …) is left
 * out, so that it can change without asking for a new approval.
 */
import { sha256Hex } from '../../hash.js';
import { canonicalize } from './canonical.js';

export type PinKind = 'tools' | 'prompts';

/** The pinned fields of one tool or prompt, as the server listed them. */
export type Definition = Readonly<Record<string, unknown>>;

const PINNED_FIELDS: Readonly<Record<PinKind, readonly string[]>> = {
	tools: ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'],
	prompts: ['name', 'description', 'arguments'],
};

/** The list results' field that carries the items of `kind`. */
export const LIST_METHODS: Readonly<Record<string, PinKind>> = { 'tools/list': 'tools', 'prompts/list': 'prompts' };

/** The request that uses one item of `kind` by name. */
export const USE_METHODS: Readonly<Record<string, PinKind>> = { 'tools/call': 'tools', 'prompts/get': 'prompts' };

/** The singular for messages ("tool", "prompt"). */
export function itemWord(kind: PinKind): string {
	return kind === 'tools' ? 'tool' : 'prompt';
}

export function definitionOf(kind: PinKind, item: Readonly<Record<string, unknown>>): Definition {
	const definition: Record<string, unknown> = {};
	for (const field of PINNED_FIELDS[kind]) if (item[field] !== undefined) definition[field] = item[field];
	return definition;
}

/** `sha256:` and the hex digest of the definition's canonical JSON. */
export function fingerprintOf(definition: Definition): string {
	return `sha256:${sha256Hex(canonicalize(definition))}`;
}
