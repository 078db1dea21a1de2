/** Which clients a skill is installed for: the `hangar.defaultClients` setting, or the user's pick. */
import * as vscode from 'vscode';
import { CLIENT_APPS, type ClientApp } from '../../../protocol/common.js';
import { DiscoverClients } from '../../../protocol/protocol.clients.js';
import type { DaemonSupervisor } from '../daemon.js';

interface ClientChoice extends vscode.QuickPickItem {
	readonly client: ClientApp;
}

/**
 * Clients to install for; `[]` means every skill-capable client found on this machine (the
 * daemon's default), undefined that the user backed out.
 */
export async function pickClients(daemon: DaemonSupervisor, defaults: readonly ClientApp[]): Promise<ClientApp[] | undefined> {
	if (defaults.length > 0) return [...defaults];
	let items: ClientChoice[];
	try {
		const { clients } = await daemon.request(DiscoverClients, {});
		items = clients
			.filter((client) => client.supports_skills)
			.sort((a, b) => Number(b.installed) - Number(a.installed) || a.client_type.localeCompare(b.client_type))
			.map((client) => ({
				label: client.client_type,
				description: client.installed ? 'installed' : 'not found on this machine',
				picked: client.installed,
				client: client.client_type,
			}));
	} catch {
		// Without discovery, every client id is offered and none is assumed.
		items = CLIENT_APPS.map((client) => ({ label: client, client }));
	}
	const picked = await vscode.window.showQuickPick(items, {
		title: 'Install for which clients?',
		placeHolder: 'None selected installs for every skill-capable client found on this machine',
		canPickMany: true,
	});
	return picked?.map((item) => item.client);
}
