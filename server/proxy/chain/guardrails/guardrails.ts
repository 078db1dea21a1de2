/**
 * The guardrails a workload's run configuration asks for, built once at the proxy's start:
 * secret scanning (the secret rules, the user's Hangar secret values read from the secrets
 * provider at start and every minute after, so that a secret created meanwhile is looked for
 * too) and personal data scanning, and the guard that applies them. Loaded only for a workload
 * with `guardrails.secrets` or `guardrails.personal_data` (main.ts).
 */
import type { GuardrailsConfig } from '../../../../protocol/runConfig.js';
import type { Environment } from '../../../environment.js';
import { DEFAULT_MAX_SCAN_BYTES, personalDataSettingsOf, secretScanSettingsOf } from '../../../runspec/guardrails.js';
import type { Auditor } from '../audit/audit.js';
import type { McpMiddleware, NoticeMiddleware, OutboundFilter } from '../chain.js';
import { TrafficGuard, type FindingListener, type Guardrail } from './middleware.js';
import { OwnSecrets } from './ownSecrets.js';
import { SecretRules } from './rules.js';
import { SecretScanner } from './scanner.js';

const SECRETS_REFRESH_MS = 60_000;

export interface Guardrails {
	readonly middleware: McpMiddleware;
	readonly notice: NoticeMiddleware;
	readonly outbound: OutboundFilter;
	close(): void;
}

/** Every value the user's secrets provider holds; none (with a warning) when it cannot list them. */
async function readSecretValues(environment: Environment): Promise<string[]> {
	const { SecretsService } = await import('../../../secrets/service.js');
	const secrets = new SecretsService(environment);
	const keys = await secrets.listKeys();
	const values = await Promise.allSettled(keys.map(({ key }) => secrets.resolve(key)));
	return values.flatMap((value) => (value.status === 'fulfilled' ? [value.value] : []));
}

export async function startGuardrails(
	config: GuardrailsConfig,
	context: { readonly workload: string; readonly environment: Environment; readonly auditor?: Auditor; readonly onFinding?: FindingListener },
): Promise<Guardrails | undefined> {
	if (!config.secrets && !config.personal_data) return undefined;
	const { log } = context.environment;
	const guardrails: Guardrail[] = [];
	let timer: NodeJS.Timeout | undefined;
	const secrets = config.secrets && secretScanSettingsOf(config.secrets);
	if (secrets) {
		const rules = new SecretRules();
		// The scanner is swapped whole when the user's secret values are read again.
		let scanner = new SecretScanner(rules, undefined);
		guardrails.push({ name: 'secrets', actions: { request: secrets.requests, response: secrets.responses }, allow: secrets.allow, scan: (slots) => scanner.scan(slots) });
		if (secrets.hangarSecrets) {
			const refresh = async (first: boolean) => {
				try {
					const values = await readSecretValues(context.environment);
					scanner = new SecretScanner(rules, new OwnSecrets(values));
					if (first) log.info(`guardrails: the values of ${values.length} Hangar secrets are looked for`);
				} catch (error) {
					if (first) log.warn(`guardrails: the Hangar secrets cannot be read (${(error as Error).message}); only the secret rules apply`);
				}
			};
			await refresh(true);
			timer = setInterval(() => void refresh(false), SECRETS_REFRESH_MS).unref();
		}
		log.info(`guardrails: secrets in requests: ${secrets.requests}, in answers: ${secrets.responses}`);
	}
	if (config.personal_data) {
		const settings = personalDataSettingsOf(config.personal_data);
		// Its own module: its phone metadata is loaded only by a workload that looks for personal data.
		const { PersonalDataScanner } = await import('./personalData.js');
		const scanner = await PersonalDataScanner.create(settings.kinds);
		guardrails.push({ name: 'personal_data', actions: { request: settings.requests, response: settings.responses }, allow: settings.allow, scan: (slots) => scanner.scan(slots) });
		log.info(`guardrails: personal data (${settings.kinds.join(', ')}) in requests: ${settings.requests}, in answers: ${settings.responses}`);
	}
	const guard = new TrafficGuard({
		...context,
		log,
		guardrails,
		// The cap is secret scanning's setting; personal data alone scans up to the default.
		maxScanBytes: secrets?.maxScanBytes ?? DEFAULT_MAX_SCAN_BYTES,
		oversized: secrets?.oversized ?? 'pass',
	});
	return {
		middleware: guard.middleware,
		notice: guard.notice,
		outbound: guard.outbound,
		close: () => clearInterval(timer),
	};
}
