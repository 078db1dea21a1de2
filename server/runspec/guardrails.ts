/**
 * The guardrails settings the workloads service checks and the proxy applies: the defaults, and
 * the names of the secret and personal data rules (what an allow rule, a redaction marker, an audit event and the
 * metrics name). The proxy's rule set (proxy/chain/guardrails/rules.ts) maps each detector to
 * one of these names; test/guardrails-scanner.test.ts keeps the two equal.
 */
import type { GuardrailAction, GuardrailsConfig, PersonalDataConfig, PersonalDataKind, SecretScanConfig } from '../../protocol/runConfig.js';

/** Text scanned per message at most unless `max_scan_bytes` says otherwise: 1 MiB. */
export const DEFAULT_MAX_SCAN_BYTES = 1024 * 1024;

/** A Hangar secret value shorter than this is not looked for: too likely to occur by chance. */
export const MIN_OWN_SECRET_LENGTH = 8;

/** The rule that finds the values of the user's own Hangar secrets. */
export const HANGAR_SECRET_RULE = 'hangar-secret';

/** Every rule name, with what it finds. */
export const SECRET_RULES: Readonly<Record<string, string>> = {
	// secretlint's recommended preset
	'aws-access-key-id': 'AWS access key ID',
	'aws-secret-access-key': 'AWS secret access key (after its variable name)',
	'aws-account-id': 'AWS account ID (after its variable name)',
	'gcp-service-account-key': 'GCP service account key (JSON)',
	'private-key': 'PEM private key',
	'npm-token': 'npm access token',
	'npmrc-auth-token': 'npm _authToken in an .npmrc',
	'npm-package-oauth-token': 'npm OAuth token in a package.json',
	'basic-auth': 'user and password in a URL',
	'slack-token': 'Slack token',
	'slack-webhook': 'Slack incoming webhook URL',
	'sendgrid-key': 'SendGrid API key',
	'shopify-key': 'Shopify token',
	'github-token': 'GitHub token',
	'openai-key': 'OpenAI API key',
	'linear-key': 'Linear API key',
	'1password-token': '1Password service account token',
	// Hangar's own, for what the preset lacks
	'stripe-key': 'Stripe secret or restricted key, webhook secret',
	'gitlab-token': 'GitLab token',
	'gcp-api-key': 'Google API key',
	'google-oauth-token': 'Google OAuth access token',
	'azure-storage-key': 'Azure storage account key',
	'azure-sas-signature': 'Azure shared access signature',
	'azure-client-secret': 'Azure AD client secret',
	'anthropic-key': 'Anthropic API key',
	'huggingface-token': 'Hugging Face token',
	jwt: 'JSON Web Token',
	'connection-string-password': 'password in a database connection string',
	[HANGAR_SECRET_RULE]: "the value of one of the user's Hangar secrets (raw, base64 or URL-encoded)",
};

/** The rule each kind of personal data is reported under: `pii.<kind>`. */
export function personalDataRule(kind: PersonalDataKind): string {
	return `pii.${kind}`;
}

/** Every kind of personal data, with what it finds (proxy/chain/guardrails/personalData.ts). */
export const PERSONAL_DATA_KINDS: Readonly<Record<PersonalDataKind, string>> = {
	email: 'e-mail address (not a placeholder such as user@example.com)',
	phone: 'phone number valid by libphonenumber-js, international or North American written 3-3-4',
	card: 'payment card number: a known network prefix and length, Luhn-checked',
	iban: "IBAN: its country's length, mod-97 checked",
	national_id: 'US SSN, UK NINO, NL BSN (11-test), ES DNI/NIE (check letter), FR NIR (key), IN Aadhaar (Verhoeff)',
};

/** Personal data scanning as configured, its defaults filled in. */
export interface PersonalDataSettings {
	readonly requests: GuardrailAction;
	readonly responses: GuardrailAction;
	readonly kinds: readonly PersonalDataKind[];
	readonly allow: NonNullable<PersonalDataConfig['allow']>;
}

export function personalDataSettingsOf(config: PersonalDataConfig): PersonalDataSettings {
	return {
		requests: config.requests ?? 'redact',
		responses: config.responses ?? 'redact',
		kinds: config.kinds ?? (Object.keys(PERSONAL_DATA_KINDS) as PersonalDataKind[]),
		allow: config.allow ?? [],
	};
}

/** Secret scanning as configured, its defaults filled in. */
export interface SecretScanSettings {
	readonly requests: GuardrailAction;
	readonly responses: GuardrailAction;
	readonly hangarSecrets: boolean;
	readonly allow: NonNullable<SecretScanConfig['allow']>;
	readonly maxScanBytes: number;
	readonly oversized: 'pass' | 'block';
}

export function secretScanSettingsOf(config: SecretScanConfig): SecretScanSettings {
	return {
		requests: config.requests ?? 'block',
		responses: config.responses ?? 'redact',
		hangarSecrets: config.hangar_secrets ?? true,
		allow: config.allow ?? [],
		maxScanBytes: config.max_scan_bytes ?? DEFAULT_MAX_SCAN_BYTES,
		oversized: config.oversized ?? 'pass',
	};
}

/** What is wrong with a guardrails configuration the schema let through: the field at fault (under `guardrails.`), and why. */
export function guardrailsProblem(config: GuardrailsConfig): { field: string; message: string } | undefined {
	if (config.personal_data?.kinds?.length === 0) return { field: 'personal_data.kinds', message: `names one kind or more of ${Object.keys(PERSONAL_DATA_KINDS).join(', ')} (leave it out for all)` };
	const lists = [
		['secrets', config.secrets?.allow, Object.keys(SECRET_RULES)],
		['personal_data', config.personal_data?.allow, (Object.keys(PERSONAL_DATA_KINDS) as PersonalDataKind[]).map(personalDataRule)],
	] as const;
	for (const [guardrail, allows, rules] of lists) {
		for (const [index, allow] of (allows ?? []).entries()) {
			const field = `${guardrail}.allow[${index}]`;
			if (!allow.rule && !allow.match) return { field, message: 'an allow rule names a rule, a match, or both (a tool alone would let every finding of that tool through)' };
			if (allow.rule !== undefined && !rules.includes(allow.rule)) return { field: `${field}.rule`, message: `no ${guardrail === 'secrets' ? 'secret' : 'personal data'} rule is named ${JSON.stringify(allow.rule)}; the rules are ${rules.join(', ')}` };
		}
	}
	return undefined;
}
