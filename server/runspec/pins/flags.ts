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

export type FlagRule = 'hidden_unicode' | 'zero_width' | 'model_directive' | 'other_tools' | 'credentials' | 'home_path' | 'long_description';

export type FlagSeverity = 'block' | 'review';

export interface Flag {
	readonly rule: FlagRule;
	/** What matched, made visible (invisible characters as U+XXXX). */
	readonly detail: string;
}

/** Per rule, whether it holds a tool back at first sight, and why a reviewer should care. */
export const FLAG_RULES: Readonly<Record<FlagRule, { readonly severity: FlagSeverity; readonly why: string }>> = {
	hidden_unicode: { severity: 'block', why: 'characters the user cannot see, or that reorder what is shown, can carry instructions only the model reads' },
	zero_width: { severity: 'review', why: 'a few invisible characters between words, as text pasted from web pages has; a run of them would be hidden text' },
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
 * Tag characters (U+E0000–E007F, ASCII the eye cannot see) and the bidirectional embeddings,
 * overrides and isolates that reorder what is shown: text hidden from the user or shown to it
 * otherwise than the model reads it.
 */
const HIDDEN = /[\u{E0000}-\u{E007F}\u202A-\u202E\u2066-\u2069]/u;
/**
 * Zero-width and invisible formatting characters. A few between words are what text pasted from
 * web pages carries (real descriptions have them); a run of them can spell bits the eye
 * cannot see, and is taken for hidden text. A zero-width joiner inside an emoji sequence (👩‍💻)
 * is how emoji are written, and is let through.
 */
const ZERO_WIDTH = /[\u200B-\u200F\u2060-\u2064\uFEFF\u180E]/u;
const ZERO_WIDTH_RUN = new RegExp(`${ZERO_WIDTH.source}{4,}`, 'u');
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
 * backticks, snake_case or camelCase) that this server does not list, in any spelling of its
 * names (`listProjects` for `list_projects`, `github__list_projects` for it prefixed). A plain
 * word ("the search tool") is how descriptions talk of themselves and is not taken for a name.
 */
const TOOL_REFERENCE = /`([\w.-]+)`\s+tool\b|\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)\s+tool\b/g;
const QUALIFIED_TOOL = /\bmcp__[\w-]+__([\w-]+)/;
/** Sentence openers: `usageThis tool` is two sentences run together, not a camelCase name. */
const SENTENCE_START = /^[a-z]+(?:This|The|That|These|Those|It|Its|Use|Uses|Returns|Note|For|If|When|Each|A|An)$/;

/** A name's letters and digits in lower case: the spelling every form of it shares. */
const spelling = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** Whether `reference` names one of `own` in some spelling of it, prefixed or not. */
function namesOwnTool(reference: string, own: ReadonlySet<string>): boolean {
	if (own.has(reference)) return true;
	const spelt = spelling(reference);
	return [...own].some((name) => {
		const mine = spelling(name);
		// Prefixed on either side: `ci__list_projects` for `list_projects`, `list_projects` for `ci_list_projects`.
		return mine.length > 0 && (spelt === mine || spelt.endsWith(mine) || (spelt.length >= 4 && mine.endsWith(spelt)));
	});
}

/**
 * Key and credential files, and an instruction to move a secret: a verb whose object is the
 * secret ("include the API key", "send your password"), not a phrase near one ("include
 * separate periods per API key").
 */
const CREDENTIAL_FILES = /(?:\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.ssh\/|\.aws\/credentials|\.git-credentials|\.netrc\b|\.npmrc\b|\.pgpass\b|\.docker\/config\.json|\.kube\/config)/i;
const CREDENTIAL_USE =
	/\b(?:read|send|pass|include|attach|append|upload|post|forward|copy|exfiltrate|collect|leak)\s+(?:(?:the|your|their|his|her|its|any|all|every|each|this|that|these|those|user'?s?|current|stored|saved)\s+){0,3}(?:[\w-]+\s+)?(?:passwords?|api[\s_-]?keys?|secret[\s_-]?keys?|private[\s_-]?keys?|access[\s_-]?tokens?|credentials|cookies|session[\s_-]?tokens?)\b/i;

/** Paths into the user's home directory (not a URL's `/home/` segment, nor `~/...` said of tilde paths in general). */
const HOME_PATH = /(?:^|[\s'"`(=:])~[/\\](?!\.\.\.|…)|\$HOME\b|\$\{HOME\}|%USERPROFILE%|(?<![\w.-])\/home\/[\w.-]+\/|(?<![\w.-])\/Users\/[\w.-]+\/|[A-Za-z]:\\Users\\/;
const URL_TEXT = /\bhttps?:\/\/\S+/g;

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
	return [...text].map((char) => (HIDDEN.test(char) || ZERO_WIDTH.test(char) ? `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}` : char)).join('');
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
		const hidden = HIDDEN.exec(text);
		if (hidden) add('hidden_unicode', around(text, hidden.index, hidden[0].length));
		const unjoined = text.replace(EMOJI_JOINER, '');
		const run = ZERO_WIDTH_RUN.exec(unjoined);
		if (run) add('hidden_unicode', around(unjoined, run.index, run[0].length));
		const zeroWidth = ZERO_WIDTH.exec(unjoined);
		if (zeroWidth && !run) add('zero_width', around(unjoined, zeroWidth.index, zeroWidth[0].length));
		for (const directive of DIRECTIVES) {
			const match = directive.exec(text);
			if (match) add('model_directive', around(text, match.index, match[0].length));
		}
		for (const match of text.matchAll(TOOL_REFERENCE)) {
			const name = (match[1] ?? match[2])!;
			if (!SENTENCE_START.test(name) && !namesOwnTool(name, ownNames)) add('other_tools', around(text, match.index, match[0].length));
		}
		const qualified = QUALIFIED_TOOL.exec(text);
		if (qualified && !namesOwnTool(qualified[1]!, ownNames)) add('other_tools', around(text, qualified.index, qualified[0].length));
		const credential = CREDENTIAL_FILES.exec(text) ?? CREDENTIAL_USE.exec(text);
		if (credential) add('credentials', around(text, credential.index, credential[0].length));
		const home = HOME_PATH.exec(text.replace(URL_TEXT, (url) => ' '.repeat(url.length)));
		if (home) add('home_path', around(text, home.index, home[0].length));
	}
	const description = definition.description;
	if (typeof description === 'string' && description.length > LONG_DESCRIPTION) add('long_description', `${description.length} characters`);
	return flags;
}
