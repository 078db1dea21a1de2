/**
 * The secret rules: secretlint's recommended preset (its rules called through secretlint's
 * rule API, without its file-linting core), and Hangar's own patterns for what the preset
 * lacks (Stripe, GitLab, Google API keys, Azure, Anthropic, Hugging Face, JWTs, connection
 * strings). Each finding is named by a rule of runspec/guardrails.ts, never by the matched text.
 *
 * secretlint 10.2 is what the tree already held (the extension's packager uses it); 11.x runs on
 * Node 20 too, 12 and later need Node 22.
 */
import { creator as recommendedPreset } from '@secretlint/secretlint-rule-preset-recommend';
import type { SecretLintRuleContext, SecretLintRuleCreator, SecretLintRuleReportHandler, SecretLintSourceCode } from '@secretlint/types';
import { Cues } from './cues.js';

/** A match of a rule in one text: its rule name and the range of the text it covers. */
export interface Detection {
	readonly rule: string;
	readonly start: number;
	readonly end: number;
}

/** A password in a URL (`scheme://user:password@host`): what the basic-auth and connection-string rules need. */
const URL_CREDENTIALS_CUE = /:\/\/[^\s/@]*@/;

/** secretlint's message ids → Hangar's rule names. */
const PRESET_NAMES: Readonly<Record<string, string>> = {
	AWSAccessKeyID: 'aws-access-key-id',
	AWSSecretAccessKey: 'aws-secret-access-key',
	AWSAccountID: 'aws-account-id',
	PrivateKey: 'private-key',
	NPM_ACCESS_TOKEN: 'npm-token',
	Npmrc_authToken: 'npmrc-auth-token',
	PackageJSON_xOauthToken: 'npm-package-oauth-token',
	BasicAuth: 'basic-auth',
	SLACK_TOKEN: 'slack-token',
	IncomingWebhook: 'slack-webhook',
	SENDGRID_KEY: 'sendgrid-key',
	SHOPIFY_KEY: 'shopify-key',
	GITHUB_TOKEN: 'github-token',
	OPENAI_TOKEN: 'openai-key',
	LINEAR_API_TOKEN: 'linear-key',
	OPS_TOKEN: '1password-token',
};

/**
 * The preset's rules not used: the GCP rule looks only in files named `.json`/`.p12` (its key
 * is caught below), and the comment filter honours `secretlint-disable` comments, which a
 * server could then write to hide a secret.
 */
const UNUSED_PRESET_RULES = new Set(['@secretlint/secretlint-rule-gcp', '@secretlint/secretlint-rule-filter-comments']);

/**
 * The literals without which a rule cannot match (the keyword prefilter gitleaks uses), tried
 * first: ordinary text holds none of most, and a test costs well under a microsecond where a
 * rule's patterns cost several (AWS's, which may start at any position, 56 µs over 1 KiB). Each
 * is taken from the rule's own patterns in secretlint 10.2, as tight as they allow (the two URL
 * rules need an `@` after `://` with no `/` or space between: ordinary URLs do not run them);
 * the labelled set's test keeps them honest. How they are tested: cues.ts.
 */
const PRESET_CUES: Readonly<Record<string, RegExp | readonly RegExp[]>> = {
	// Key IDs are uppercase (one alternative, so that its `A` anchors it). The secret key and the
	// account id follow their names in three cases (`(?:SECRET|secret|Secret)_?(?:ACCESS|access|Access)`,
	// `(?:ACCOUNT|account|Account)`): their names without the first letter, case-sensitive, each
	// case its own alternative so that each has a gate (`cret`, `unt` are rare in ordinary text).
	'@secretlint/secretlint-rule-aws': [/A(?:3T|KIA|GPA|IDA|ROA|IPA|NPA|NVA|SIA)/, /ecret_?[Aa](?:ccess|CCESS)|ECRET_?[Aa](?:ccess|CCESS)|ccount|CCOUNT/],
	'@secretlint/secretlint-rule-privatekey': /PRIVATE KEY/,
	'@secretlint/secretlint-rule-npm': /npm_|_authToken|x-oauth/,
	'@secretlint/secretlint-rule-basicauth': URL_CREDENTIALS_CUE,
	// Tokens are case-sensitive and need their `-`; the webhook's URL is not (its `://` is its gate).
	'@secretlint/secretlint-rule-slack': [/xox[abopr]-|xapp-/, /:\/\/hooks\.slack\.com/i],
	'@secretlint/secretlint-rule-sendgrid': /SG\./,
	'@secretlint/secretlint-rule-shopify': /shp(?:pa|ca|at|ss)_/,
	'@secretlint/secretlint-rule-github': /gh[pousr]_|github_pat_/,
	'@secretlint/secretlint-rule-openai': /T3BlbkFJ/,
	'@secretlint/secretlint-rule-linear': /lin_api_/,
	'@secretlint/secretlint-rule-1password': /ops_/,
};

/** Per-rule options: AWS access key IDs are looked for too (the preset's default leaves them out). */
const PRESET_OPTIONS: Readonly<Record<string, object>> = {
	'@secretlint/secretlint-rule-aws': { enableIDScanRule: true },
};

/**
 * Hangar's own patterns, each with the group (1 when present, else the whole match) that is the
 * secret. Anchored on the providers' documented prefixes and shapes, so that ordinary text does
 * not match (measured on 1,483 published tool definitions: docs/benchmarks.md); each with its
 * cue, as the preset's rules.
 */
const PATTERNS: ReadonlyArray<readonly [rule: string, pattern: RegExp, cue: RegExp]> = [
	['stripe-key', /\b(?:[sr]k_(?:live|test)_[0-9A-Za-z]{24,247}|whsec_[0-9A-Za-z]{32,})\b/g, /k_live_|k_test_|whsec_/],
	['gitlab-token', /\bgl(?:pat|dt|ptt|rt|soat|cbt|ft|imt|oas)-[0-9A-Za-z_-]{20,}/g, /gl[a-z]{1,4}-/],
	['gcp-api-key', /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g, /AIza/],
	['google-oauth-token', /\bya29\.[0-9A-Za-z_-]{20,}/g, /ya29\./],
	['gcp-service-account-key', /"private_key"\s*:\s*"(-----BEGIN[^"]{64,}?)"/g, /"private_key"/],
	['azure-storage-key', /\bAccountKey=([A-Za-z0-9+/]{86}==)|\bAZURE_STORAGE_(?:ACCOUNT_)?KEY\s*[=:]\s*["']?([A-Za-z0-9+/]{86}==)/g, /AccountKey=|AZURE_STORAGE_/],
	['azure-sas-signature', /[?&]sig=([A-Za-z0-9%+/=]{40,})/g, /sig=/],
	['azure-client-secret', /(?<![0-9A-Za-z_~.-])[0-9A-Za-z_~.-]{3}\dQ~[0-9A-Za-z_~.-]{31,34}(?![0-9A-Za-z_~.-])/g, /\dQ~/],
	['anthropic-key', /\bsk-ant-(?:api|admin)\d\d-[0-9A-Za-z_-]{80,}/g, /sk-ant-/],
	['huggingface-token', /\bhf_[A-Za-z]{34}\b/g, /hf_/],
	['jwt', /\beyJ[0-9A-Za-z_-]{10,}\.eyJ[0-9A-Za-z_-]{10,}\.[0-9A-Za-z_-]{16,}/g, /eyJ/],
	['connection-string-password', /\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver):\/\/[^\s:/@"'<>]+:([^\s@/"'<>]{3,})@/g, URL_CREDENTIALS_CUE],
	// An ADO.NET/ODBC string's password: after another `key=value;` of the string.
	['connection-string-password', /;\s*(?:Password|Pwd)\s*=\s*([^;\s"'<>{}$]{6,})\s*(?:;|$)/gim, /;\s*(?:password|pwd)\s*=/i],
];

/** The source secretlint's rules read: text only, no file. */
function sourceOf(content: string): SecretLintSourceCode {
	return {
		hasBOM: false,
		content,
		filePath: undefined,
		physicalFilePath: undefined,
		contentType: 'text',
		ext: '',
		getFilePath: () => undefined,
		getPhysicalFilePath: () => undefined,
		locationToRange: () => [0, 0],
		rangeToLocation: () => ({ start: { line: 1, column: 0 }, end: { line: 1, column: 0 } }),
		positionToIndex: () => 0,
		indexToPosition: () => ({ line: 1, column: 0 }),
	};
}

/** Finds secrets in texts. One instance per proxy: the preset's rules are created once. */
export class SecretRules {
	/** Each preset rule's handler, with the bits of its cues. */
	readonly #handlers: Array<{ readonly cue: number; readonly handler: SecretLintRuleReportHandler }> = [];
	/** The bit of each pattern's cue. */
	readonly #patternCues: readonly number[];
	readonly #cues: Cues;
	/** Where the rules' reports go during one `detect`. */
	#found: Detection[] = [];

	constructor() {
		const context: SecretLintRuleContext = {
			sharedOptions: {},
			// Only the message id is kept: secretlint's messages quote the secret.
			createTranslator: () => (messageId) => ({ message: '', messageId: String(messageId), data: undefined }),
			report: ({ message, range }) => {
				this.#found.push({ rule: PRESET_NAMES[message.messageId] ?? 'secret', start: range[0], end: range[1] });
			},
			ignore: () => undefined,
		};
		// The cues, each once (the URL credentials' cues two rules), by their bit in `Cues.in`.
		const cues: RegExp[] = [];
		const bitsOf = (cue: RegExp | readonly RegExp[]): number => {
			let bits = 0;
			for (const one of cue instanceof RegExp ? [cue] : cue) {
				let index = cues.findIndex((known) => known.source === one.source && known.flags === one.flags);
				if (index < 0) index = cues.push(one) - 1;
				bits |= 1 << index;
			}
			return bits;
		};
		for (const rule of (recommendedPreset as unknown as { rules: SecretLintRuleCreator<object>[] }).rules) {
			if (UNUSED_PRESET_RULES.has(rule.meta.id)) continue;
			// A text with no cue is done with at once (`detect`): every rule needs one.
			const cue = PRESET_CUES[rule.meta.id];
			if (!cue) throw new Error(`no cue for ${rule.meta.id}`);
			this.#handlers.push({ cue: bitsOf(cue), handler: rule.create(context, PRESET_OPTIONS[rule.meta.id] ?? {}) });
		}
		this.#patternCues = PATTERNS.map(([, , cue]) => bitsOf(cue));
		this.#cues = new Cues(cues);
	}

	/** Each message id of the preset's rules in use, with its rule name: for the test that keeps every one named. */
	static presetNames(): Array<[messageId: string, rule: string | undefined]> {
		return (recommendedPreset as unknown as { rules: SecretLintRuleCreator<object>[] }).rules
			.filter((rule) => !UNUSED_PRESET_RULES.has(rule.meta.id))
			.flatMap((rule) => Object.keys(rule.messages).map((id): [string, string | undefined] => [id, PRESET_NAMES[id]]));
	}

	/** Every rule's matches in `text`, in no particular order. */
	detect(text: string): Detection[] {
		const cued = this.#cues.in(text);
		if (!cued) return [];
		const found: Detection[] = [];
		this.#found = found;
		const source = sourceOf(text);
		// The rules used report as they run: none returns a promise without a file path.
		for (const { cue, handler } of this.#handlers) if (cued & cue) void handler.file?.(source);
		PATTERNS.forEach(([rule, pattern], index) => {
			if (!(cued & this.#patternCues[index]!)) return;
			pattern.lastIndex = 0;
			for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
				const group = match.findIndex((value, index) => index > 0 && value !== undefined);
				const secret = group > 0 ? match[group]! : match[0];
				const start = match.index + (group > 0 ? match[0].indexOf(secret) : 0);
				found.push({ rule, start, end: start + secret.length });
				// An empty match would not move on.
				if (!match[0]) pattern.lastIndex++;
			}
		});
		this.#found = [];
		return found;
	}
}
