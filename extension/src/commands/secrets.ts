/** Set Up Secrets (choose the provider) and Set Secret (a password input box). */
import * as vscode from 'vscode';
import { HangarError } from '../../../protocol/errors.js';
import { CreateSecret, SecretKeyName, SetupSecrets, UpdateSecret, type SecretsProviderType } from '../../../protocol/protocol.secrets.js';
import type { Hangar } from '../hangar.js';
import { showFailure } from '../ui/errors.js';

const PROVIDERS: Array<vscode.QuickPickItem & { provider: SecretsProviderType }> = [
	{ label: 'Encrypted', description: 'a local encrypted file; its password stays in the OS keyring', provider: 'encrypted' },
	{ label: '1Password', description: 'read-only, through a 1Password service account', provider: '1password' },
	{ label: 'Environment', description: 'read-only, from environment variables', provider: 'environment' },
];

export async function setupSecrets(hangar: Hangar): Promise<void> {
	const picked = await vscode.window.showQuickPick(PROVIDERS, { title: 'Set Up Secrets', placeHolder: 'Secrets provider' });
	if (!picked) return;
	let password: string | undefined;
	if (picked.provider === 'encrypted') {
		password = await vscode.window.showInputBox({
			title: 'Password of the encrypted secrets file',
			prompt: 'Leave empty to have one generated and kept in the OS keyring.',
			password: true,
			ignoreFocusOut: true,
		});
		if (password === undefined) return;
	}
	try {
		const result = await hangar.daemon.request(SetupSecrets, { provider_type: picked.provider, ...(password ? { password } : {}) });
		void vscode.window.showInformationMessage(`Secrets provider ${result.provider_type}: ${result.message}`);
	} catch (error) {
		await showFailure(error, `set up the ${picked.label} secrets provider`);
	}
}

export async function setSecret(hangar: Hangar): Promise<void> {
	const key = await vscode.window.showInputBox({
		title: 'Set Secret',
		prompt: 'Secret name',
		ignoreFocusOut: true,
		validateInput: (text) => {
			const parsed = SecretKeyName.safeParse(text);
			return parsed.success ? undefined : parsed.error.issues[0]?.message;
		},
	});
	if (!key) return;
	const value = await vscode.window.showInputBox({
		title: `Value of secret ${key}`,
		password: true,
		ignoreFocusOut: true,
		validateInput: (text) => (text ? undefined : 'a value is required'),
	});
	if (!value) return;
	try {
		try {
			await hangar.daemon.request(CreateSecret, { key, value });
		} catch (error) {
			// The key exists: replace its value.
			if (!(error instanceof HangarError && error.status === 409)) throw error;
			await hangar.daemon.request(UpdateSecret, { key, value });
		}
		void vscode.window.showInformationMessage(`Secret ${key} is stored.`);
	} catch (error) {
		await showFailure(error, `store secret ${key}`);
	}
}
