/**
 * The guardrails a workload's run configuration asks for, built once at the proxy's start:
 * the secret rules, the user's Hangar secret values (read from the secrets provider at start
 * and every minute after, so that a secret created meanwhile is looked for too), and the
 * middleware. Loaded only for a workload with `guardrails.secrets` (main.ts).
 */
import type { GuardrailsConfig } from '../../../../protocol/runConfig.js';
import type { Environment } from '../../../environment.js';
import { secretScanSettingsOf } from '../../../runspec/guardrails.js';
import type { Auditor } from '../audit/audit.js';
import type { McpMiddleware, NoticeMiddleware } from '../chain.js';
import { SecretGuard, type FindingListener } from './middleware.js';
import { OwnSecrets } from './ownSecrets.js';
import { SecretRules } from './rules.js';
import { SecretScanner } from './scanner.js';

const SECRETS_REFRESH_MS = 60_000;

export interface Guardrails {
	readonly middleware: McpMiddleware;
	readonly notice: NoticeMiddleware;
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
	if (!config.secrets) return undefined;
	const { log } = context.environment;
	const settings = secretScanSettingsOf(config.secrets);
	const rules = new SecretRules();
	let timer: NodeJS.Timeout | undefined;
	let guard = new SecretGuard({ ...context, settings, scanner: new SecretScanner(rules, undefined), log });
	if (settings.hangarSecrets) {
		const refresh = async (first: boolean) => {
			try {
				const values = await readSecretValues(context.environment);
				guard = new SecretGuard({ ...context, settings, scanner: new SecretScanner(rules, new OwnSecrets(values)), log });
				if (first) log.info(`guardrails: the values of ${values.length} Hangar secrets are looked for`);
			} catch (error) {
				if (first) log.warn(`guardrails: the Hangar secrets cannot be read (${(error as Error).message}); only the secret rules apply`);
			}
		};
		await refresh(true);
		timer = setInterval(() => void refresh(false), SECRETS_REFRESH_MS).unref();
	}
	log.info(`guardrails: secrets in requests: ${settings.requests}, in answers: ${settings.responses}`);
	return {
		middleware: (call, next) => guard.middleware(call, next),
		notice: (notice, next) => guard.notice(notice, next),
		close: () => clearInterval(timer),
	};
}
