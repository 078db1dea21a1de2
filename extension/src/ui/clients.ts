/** Which clients a skill is installed for: the `hangar.defaultClients` setting, or the user's pick. */
import * as vscode from 'vscode';
import { CLIENT_APPS, type ClientApp } from '../../../protocol/common.js';
import { DiscoverClients } from '../../../protocol/protocol.clients.js';
import type { DaemonSupervisor } from '../daemon.js';

/** Editors built on VS Code that read skills from folders of their own, by a word of `vscode.env.appName`. */
const EDITORS: ReadonlyArray<readonly [RegExp, ClientApp]> = [
	[/insiders/i, 'vscode-insider'],
	[/cursor/i, 'cursor'],
	[/windsurf/i, 'windsurf'],
	[/kiro/i, 'kiro'],
	[/trae/i, 'trae'],
	[/antigravity/i, 'antigravity'],
	[/qoder/i, 'qoder'],
];

/**
 * The client the editor running the extension is, from its `vscode.env.appName`. VS Code,
 * code-server, VSCodium and any other build read VS Code's own skills folders.
 */
export function editorClient(appName: string): ClientApp {
	return EDITORS.find(([pattern]) => pattern.test(appName))?.[1] ?? 'vscode';
}

interface ClientChoice extends vscode.QuickPickItem {
	readonly client: ClientApp;
}

const PLACEHOLDER = 'This editor and the clients found on this machine are selected';
const REFUSAL = 'Select at least one client, or press Escape to cancel';

/**
 * Clients to install for, never empty: the setting, else the user's pick among the skill-capable
 * clients with this editor and the clients found on this machine preselected. Undefined when the
 * user backed out.
 */
export async function pickClients(daemon: DaemonSupervisor, defaults: readonly ClientApp[]): Promise<ClientApp[] | undefined> {
	if (defaults.length > 0) return [...defaults];
	const editor = editorClient(vscode.env.appName);
	let items: ClientChoice[];
	try {
		const { clients } = await daemon.request(DiscoverClients, {});
		items = clients
			.filter((client) => client.supports_skills)
			.map((client) => ({ client: client.client_type, installed: client.installed || client.client_type === editor }))
			.sort((a, b) => Number(b.client === editor) - Number(a.client === editor) || Number(b.installed) - Number(a.installed) || a.client.localeCompare(b.client))
			.map(({ client, installed }) => ({
				label: client,
				description: client === editor ? `this editor (${vscode.env.appName})` : installed ? 'installed' : 'not found on this machine',
				picked: installed,
				client,
			}));
	} catch {
		// Without discovery, every client id is offered and only this editor is assumed.
		items = [editor, ...CLIENT_APPS.filter((client) => client !== editor)].map((client) => ({ label: client, picked: client === editor, client }));
	}
	return pickMany(items);
}

/** A multi-select quick pick that does not accept an empty selection. */
function pickMany(items: ClientChoice[]): Promise<ClientApp[] | undefined> {
	const pick = vscode.window.createQuickPick<ClientChoice>();
	pick.title = 'Install for which clients?';
	pick.placeholder = PLACEHOLDER;
	pick.canSelectMany = true;
	pick.matchOnDescription = true;
	pick.items = items;
	pick.selectedItems = items.filter((item) => item.picked);
	return new Promise((resolve) => {
		pick.onDidChangeSelection((selected) => {
			if (selected.length) pick.placeholder = PLACEHOLDER;
		});
		pick.onDidAccept(() => {
			if (pick.selectedItems.length === 0) {
				pick.placeholder = REFUSAL;
				return;
			}
			resolve(pick.selectedItems.map((item) => item.client));
			pick.dispose();
		});
		pick.onDidHide(() => {
			resolve(undefined);
			pick.dispose();
		});
		pick.show();
	});
}
