/** Register Client: writes Hangar's running workloads into a client's MCP configuration. */
import * as vscode from 'vscode';
import { CLIENT_APPS, type ClientApp } from '../../../protocol/common.js';
import { DiscoverClients, PROJECT_CONFIG_FILES, RegisterClient } from '../../../protocol/protocol.clients.js';
import type { Hangar } from '../hangar.js';
import { showFailure } from '../ui/errors.js';
import { localFolders } from '../ui/folders.js';

export async function registerClient(hangar: Hangar): Promise<void> {
	const client = await pickClient(hangar);
	if (!client) return;
	let project_root: string | undefined;
	const folders = localFolders();
	// A client with a project file (`.cursor/mcp.json`, `.mcp.json`…) can be registered per workspace folder.
	const projectFile = PROJECT_CONFIG_FILES[client];
	if (projectFile !== undefined && folders.length > 0) {
		const picked = await vscode.window.showQuickPick(
			[
				{ label: '$(account) User configuration', description: 'every workspace', root: undefined as string | undefined },
				...folders.map((folder) => ({ label: `$(folder) ${folder.name}`, description: projectFile, root: folder.uri.fsPath })),
			],
			{ title: `Register ${client} in`, placeHolder: 'Where the MCP servers are written' },
		);
		if (!picked) return;
		project_root = picked.root;
	}
	try {
		const registered = await hangar.daemon.request(RegisterClient, { name: client, ...(project_root ? { project_root } : {}) });
		const groups = registered.groups?.length ? ` (groups: ${registered.groups.join(', ')})` : '';
		void vscode.window.showInformationMessage(`Registered ${registered.name}${groups}: its MCP configuration now lists Hangar's servers.`);
	} catch (error) {
		await showFailure(error, `register client ${client}`);
	}
}

async function pickClient(hangar: Hangar): Promise<ClientApp | undefined> {
	let items: Array<vscode.QuickPickItem & { client: ClientApp }>;
	try {
		const { clients } = await hangar.daemon.request(DiscoverClients, {});
		items = clients
			.sort((a, b) => Number(b.installed) - Number(a.installed) || a.client_type.localeCompare(b.client_type))
			.map((status) => ({
				label: status.client_type,
				description: [
					status.installed ? 'installed' : 'not found',
					status.registered ? 'registered' : undefined,
					PROJECT_CONFIG_FILES[status.client_type] === undefined ? undefined : 'per project too',
				]
					.filter(Boolean)
					.join(' · '),
				client: status.client_type,
			}));
	} catch {
		items = CLIENT_APPS.map((client) => ({ label: client, client }));
	}
	return (await vscode.window.showQuickPick(items, { title: 'Register Client', placeHolder: 'MCP client application' }))?.client;
}
