/**
 * Hidden instructions in a tool or prompt definition: text aimed at the model rather than the
 * user. Checked at the first pin and at every drift, over every string of the definition (the
 * name, the description, and each schema's descriptions, titles, defaults and enums), and shown
 * wherever the pins are reviewed. Each rule has a severity: what looks like an attack (`block`)
 * holds a tool back at first sight; what is only worth reading (`review`: a long description, a
 * home path in an example) is shown at review and served. Each rule is narrow enough that an
 * ordinary description does not trip it: measured on the real definitions of
 * test/fixtures/search-eval/ (docs/benchmarks.md).
 */
import type { Definition } from './fingerprint.js';

export type FlagRule = 'hidden_unicode' | 'model_directive' | 'other_tools' | 'credentials' | 'home_path' | 'long_description';

export type FlagSeverity = 'block' | 'review';

export interface Flag {
	readonly rule: FlagRule;
	/** What matched, made visible (invisible characters as U+XXXX). */
	readonly detail: string;
}

/** Per rule, whether it holds a tool back at first sight, and why a reviewer should care. */
export const FLAG_RULES: Readonly<Record<FlagRule, { readonly severity: FlagSeverity; readonly why: string }>> = {
	hidden_unicode: { severity: 'block', why: 'characters the user cannot see can carry instructions only the model reads' },
	model_directive: { severity: 'block', why: 'it addresses the model over the user, a common way to hijack what the model does' },
	other_tools: { severity: 'block', why: "it steers the model's use of another server's tools, which this server has no business naming" },
	credentials: { severity: 'block', why: 'it asks for key or credential files, or for secrets to be passed along' },
	home_path: { severity: 'review', why: "it names a path in the user's home folder: harmless in an example, worth a look in an instruction" },
	long_description: { severity: 'review', why: 'a long description has room for text the user never reads' },
};

/** Whether any of `flags` holds its tool back at first sight. */
export function blocksOnSight(flags: readonly Flag[] | undefined): boolean {
	return flags?.some((flag) => FLAG_RULES[flag.rule].severity === 'block') ?? false;
}

/** A description longer than this is flagged: room for a hidden essay the user never reads. */
export const LONG_DESCRIPTION = 2048;

/**
 * Tag characters (U+E0000–E007F, ASCII the eye cannot see), zero-width characters and the
 * bidirectional embeddings, overrides and isolates that reorder what is shown. A zero-width
 * joiner inside an emoji sequence (👩‍💻) is how emoji are written, and is let through.
 */
const HIDDEN = /[\u{E0000}-\u{E007F}\u200B-\u200F\u2060-\u2064\uFEFF\u180E\u202A-\u202E\u2066-\u2069]/u;
const EMOJI_JOINER = /(?<=\p{Extended_Pictographic}\uFE0F?)\u200D(?=\p{Extended_Pictographic})/gu;

/** Markup and phrases that address the model over the user's head. */
const DIRECTIVES: readonly RegExp[] = [
	/<\s*\/?\s*(?:important|system|instructions?|hidden|secret)\s*>/i,
	/\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|other)\s+(?:instructions|rules|prompts?|directions)/i,
	/\b(?:do\s+not|don't|never)\s+(?:tell|inform|notify|alert|show)\s+(?:this\s+to\s+)?the\s+user\b/i,
	/\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose)\s+(?:this|that|it|these\s+instructions)\b[^.]{0,40}\buser\b/i,
	/\bwithout\s+(?:telling|informing|asking|notifying)\s+the\s+user\b/i,
];

/**
 * "the `send_email` tool", "the sendEmail tool", "mcp__other__tool": a tool named as code (in
 * backticks, snake_case or camelCase) that this server does not list. A plain word ("the search
 * tool") is how descriptions talk of themselves and is not taken for a name.
 */
const TOOL_REFERENCE = /`([\w.-]+)`\s+tool\b|\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)\s+tool\b/g;
const QUALIFIED_TOOL = /\bmcp__[\w-]+__[\w-]+/;

/** Key and credential files, and a verb that moves a secret somewhere. */
const CREDENTIAL_FILES = /(?:\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.ssh\/|\.aws\/credentials|\.git-credentials|\.netrc\b|\.npmrc\b|\.pgpass\b|\.docker\/config\.json|\.kube\/config)/i;
const CREDENTIAL_USE =
	/\b(?:read|send|pass|include|attach|append|upload|post|forward|copy|exfiltrate|collect)\b[^.]{0,40}\b(?:passwords?|api[\s_-]?keys?|secret[\s_-]?keys?|private[\s_-]?keys?|access[\s_-]?tokens?|credentials|cookies|session[\s_-]?tokens?)\b/i;

/** Paths into the user's home directory. */
const HOME_PATH = /(?:^|[\s'"`(=:])~[/\\]|\$HOME\b|\$\{HOME\}|%USERPROFILE%|\/home\/[\w.-]+\/|\/Users\/[\w.-]+\/|[A-Za-z]:\\Users\\/;

/** Every string of a definition, keys included (a schema's property names are text too). */
function stringsOf(value: unknown, into: string[] = []): string[] {
	if (typeof value === 'string') into.push(value);
	else if (Array.isArray(value)) for (const item of value) stringsOf(item, into);
	else if (value && typeof value === 'object') {
		for (const [key, item] of Object.entries(value)) {
			into.push(key);
			stringsOf(item, into);
		}
	}
	return into;
}

function visible(text: string): string {
	return [...text].map((char) => (HIDDEN.test(char) ? `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}` : char)).join('');
}

function around(text: string, index: number, length: number): string {
	const start = Math.max(0, index - 20);
	return visible(`${start > 0 ? '…' : ''}${text.slice(start, index + length + 20)}${index + length + 20 < text.length ? '…' : ''}`);
}

/**
 * The flags of one definition. `ownNames` are the names the same server lists, which its
 * descriptions may name freely.
 */
export function flagsOf(definition: Definition, ownNames: ReadonlySet<string>): Flag[] {
	const flags: Flag[] = [];
	const add = (rule: FlagRule, detail: string) => {
		if (!flags.some((flag) => flag.rule === rule)) flags.push({ rule, detail });
	};
	for (const text of stringsOf(definition)) {
		const hidden = HIDDEN.exec(text.replace(EMOJI_JOINER, ''));
		if (hidden) add('hidden_unicode', around(text.replace(EMOJI_JOINER, ''), hidden.index, hidden[0].length));
		for (const directive of DIRECTIVES) {
			const match = directive.exec(text);
			if (match) add('model_directive', around(text, match.index, match[0].length));
		}
		for (const match of text.matchAll(TOOL_REFERENCE)) {
			if (!ownNames.has((match[1] ?? match[2])!)) add('other_tools', around(text, match.index, match[0].length));
		}
		const qualified = QUALIFIED_TOOL.exec(text);
		if (qualified) add('other_tools', around(text, qualified.index, qualified[0].length));
		const credential = CREDENTIAL_FILES.exec(text) ?? CREDENTIAL_USE.exec(text);
		if (credential) add('credentials', around(text, credential.index, credential[0].length));
		const home = HOME_PATH.exec(text);
		if (home) add('home_path', around(text, home.index, home[0].length));
	}
	const description = definition.description;
	if (typeof description === 'string' && description.length > LONG_DESCRIPTION) add('long_description', `${description.length} characters`);
	return flags;
}
