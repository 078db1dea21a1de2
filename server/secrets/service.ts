/**
 * The secrets rows (setup, provider, list, create, update, delete) and `resolve`, which the
 * workloads service calls to turn a secret reference into a value when a container starts.
 *
 * Checks run in ToolHive's order: params (400, by the dispatcher) → provider set up (404) →
 * capability (405) → the key itself (409 on create, 404 on update and delete). Nothing here
 * puts a secret's value into a result, an error or a log line.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { HangarError } from '../../protocol/errors.js';
import {
	ProviderCapabilities,
	SecretsProviderType,
	type SecretKey,
	type SecretsProvider,
	type SecretWriteResult,
} from '../../protocol/protocol.secrets.js';
import { implement, type Implementation } from '../dispatch.js';
import type { Environment } from '../environment.js';
import type { Logger } from '../log.js';
import { JsonDocument } from '../store/document.js';
import { EncryptedStore } from './encrypted.js';
import { readEnvironmentSecret } from './environment.js';
import { Keyring } from './keyring.js';
import { OnePasswordCli } from './onepassword.js';
import { Passwords } from './passwords.js';

/** Overrides the configured provider; `environment` needs no setup at all (as in ToolHive). */
export const PROVIDER_VARIABLE = 'HANGAR_SECRETS_PROVIDER';
/** `off` keeps the OS keyring out of it (CI, containers, tests). */
export const KEYRING_VARIABLE = 'HANGAR_SECRETS_KEYRING';

type Capabilities = z.infer<typeof ProviderCapabilities>;

const READ_ONLY: Capabilities = { can_read: true, can_write: false, can_delete: false, can_list: false, can_cleanup: false };

const CAPABILITIES: Record<SecretsProviderType, Capabilities> = {
	encrypted: { can_read: true, can_write: true, can_delete: true, can_list: true, can_cleanup: true },
	'1password': READ_ONLY,
	environment: READ_ONLY,
};

/** `<config>/secrets.json`: which provider is set up. */
const SecretsConfig = z.object({ provider_type: SecretsProviderType.optional() });
type SecretsConfig = z.infer<typeof SecretsConfig>;

export class SecretsService {
	private readonly config: JsonDocument<SecretsConfig>;
	private readonly store: EncryptedStore;
	private readonly onePassword: OnePasswordCli;
	private readonly passwords: Passwords;
	private readonly log: Logger;

	constructor(
		{ paths, log }: Pick<Environment, 'paths' | 'log'>,
		private readonly env: NodeJS.ProcessEnv = process.env,
	) {
		this.log = log;
		this.config = new JsonDocument(join(paths.config, 'secrets.json'), { schema: SecretsConfig, version: 1 }, () => ({}));
		const file = join(paths.data, 'secrets', 'store.enc');
		const keyring = new Keyring(`secrets-store:${file}`, env[KEYRING_VARIABLE] !== 'off');
		this.passwords = new Passwords(keyring, join(paths.data, 'secrets', 'store.key'), env);
		this.store = new EncryptedStore(file, this.passwords);
		this.onePassword = new OnePasswordCli(env);
	}

	/**
	 * Sets up or switches the provider. Setting up `encrypted` again re-encrypts every stored
	 * secret under the new password; switching away leaves the store on disk for later.
	 */
	async setup(providerType: SecretsProviderType, password: string | undefined): Promise<{ provider_type: string; message: string }> {
		if (password && providerType !== 'encrypted') {
			throw HangarError.badRequest('invalid password: only the encrypted provider takes a password', 'invalid_params');
		}
		return this.config.update(async (current) => {
			if (providerType === 'encrypted') {
				const kept = await this.store.reconfigure(password || undefined);
				this.log.info(`secrets provider encrypted set up: ${this.store.file}, password in ${this.passwords.describe(kept)}`);
			} else {
				if (providerType === '1password') await this.onePassword.ensureInstalled();
				this.log.info(`secrets provider ${providerType} set up`);
			}
			const message = current.provider_type
				? 'Secrets provider reconfigured successfully'
				: 'Secrets provider setup successfully';
			return [{ provider_type: providerType }, { provider_type: providerType, message }];
		});
	}

	async provider(): Promise<SecretsProvider> {
		const type = await this.configuredType();
		return { name: 'default', provider_type: type, capabilities: CAPABILITIES[type] };
	}

	async listKeys(): Promise<SecretKey[]> {
		await this.requireCapability('can_list', 'listing keys');
		const secrets = await this.store.read();
		return [...secrets.keys()].sort().map((key) => ({ key }));
	}

	async create(key: string, value: string): Promise<SecretWriteResult> {
		await this.requireCapability('can_write', 'creating secrets');
		await this.store.update((secrets) => {
			if (secrets.has(key)) throw HangarError.conflict(`secret "${key}" already exists`, 'secret_exists');
			secrets.set(key, value);
		});
		this.log.debug(`secret "${key}" created`);
		return { key, message: 'Secret created successfully' };
	}

	async update(key: string, value: string): Promise<SecretWriteResult> {
		await this.requireCapability('can_write', 'updating secrets');
		await this.store.update((secrets) => {
			if (!secrets.has(key)) throw notFound(key);
			secrets.set(key, value);
		});
		this.log.debug(`secret "${key}" updated`);
		return { key, message: 'Secret updated successfully' };
	}

	/** Creates or replaces `key` (the proxy's cached OAuth credentials). */
	async put(key: string, value: string): Promise<void> {
		await this.requireCapability('can_write', 'storing secrets');
		await this.store.update((secrets) => {
			secrets.set(key, value);
		});
		this.log.debug(`secret "${key}" stored`);
	}

	async delete(key: string): Promise<void> {
		await this.requireCapability('can_delete', 'deleting secrets');
		await this.store.update((secrets) => {
			if (!secrets.delete(key)) throw notFound(key);
		});
		this.log.debug(`secret "${key}" deleted`);
	}

	/** The value of a secret from the configured provider: 404 when none is set up or it has no such secret. */
	async resolve(name: string): Promise<string> {
		const type = await this.configuredType();
		const value = await this.read(type, name);
		if (value === undefined) throw notFound(name);
		this.log.debug(`secret "${name}" resolved from the ${type} provider`);
		return value;
	}

	private read(type: SecretsProviderType, name: string): Promise<string | undefined> | string | undefined {
		switch (type) {
			case 'encrypted':
				return this.store.read().then((secrets) => secrets.get(name));
			case 'environment':
				return readEnvironmentSecret(this.env, name);
			case '1password':
				return this.onePassword.read(name);
		}
	}

	private async configuredType(): Promise<SecretsProviderType> {
		const override = this.overrideType();
		if (override === 'environment') return override;
		const { provider_type: configured } = await this.config.read();
		if (!configured) {
			throw HangarError.notFound(
				'secrets provider not configured: run `hangar secret setup` (or POST /api/v1beta/secrets) first',
				'secrets_not_setup',
			);
		}
		return override ?? configured;
	}

	private overrideType(): SecretsProviderType | undefined {
		const value = this.env[PROVIDER_VARIABLE];
		if (!value) return undefined;
		const parsed = SecretsProviderType.safeParse(value);
		if (!parsed.success) {
			throw new HangarError(500, `${PROVIDER_VARIABLE}: ${parsed.error.issues[0]?.message}`, 'invalid_provider_override');
		}
		return parsed.data;
	}

	private async requireCapability(capability: keyof Capabilities, doing: string): Promise<void> {
		const type = await this.configuredType();
		if (!CAPABILITIES[type][capability]) {
			throw new HangarError(405, `secrets provider "${type}" does not support ${doing}`, 'capability_missing');
		}
	}
}

function notFound(name: string): HangarError {
	return HangarError.notFound(`secret "${name}" not found`, 'secret_not_found');
}

export function secretImplementations(secrets: SecretsService): Implementation[] {
	return [
		implement('secrets/setup', ({ provider_type, password }) => secrets.setup(provider_type, password)),
		implement('secrets/getProvider', () => secrets.provider()),
		implement('secrets/listKeys', async () => ({ keys: await secrets.listKeys() })),
		implement('secrets/create', ({ key, value }) => secrets.create(key, value)),
		implement('secrets/update', ({ key, value }) => secrets.update(key, value)),
		implement('secrets/delete', async ({ key }) => {
			await secrets.delete(key);
			return null;
		}),
	];
}
