/** Change Default Registry: point `default` at a registry file URL, an MCP Registry API, a local file, or back to the built-in catalog. */
import * as vscode from 'vscode';
import { UpdateRegistry } from '../../../protocol/protocol.registries.js';
import type { Hangar } from '../hangar.js';
import { showFailure } from '../ui/errors.js';

type Source = 'url' | 'api_url' | 'local_path' | 'builtin';

const SOURCES: Array<vscode.QuickPickItem & { source: Source }> = [
	{ label: 'Registry file URL', description: 'a registry JSON document over HTTPS', source: 'url' },
	{ label: 'MCP Registry API', description: 'a server speaking the registry v0.1 API', source: 'api_url' },
	{ label: 'Local file…', description: 'a registry JSON file on this machine', source: 'local_path' },
	{ label: 'Built-in catalog', description: "Hangar's own registry", source: 'builtin' },
];

/** Loopback, private and plain-http addresses are refused unless the user allows them. */
export function needsPrivateAccess(url: string): boolean {
	try {
		const { protocol, hostname } = new URL(url);
		return (
			protocol === 'http:' ||
			hostname === 'localhost' ||
			/^(127\.|10\.|192\.168\.|169\.254\.|172\.(1[6-9]|2\d|3[01])\.)/.test(hostname) ||
			hostname === '[::1]'
		);
	} catch {
		return false;
	}
}

export async function changeDefaultRegistry(hangar: Hangar): Promise<void> {
	const picked = await vscode.window.showQuickPick(SOURCES, { title: 'Change Default Registry', placeHolder: 'Where the default registry comes from' });
	if (!picked) return;
	let params: { name: string; url?: string; api_url?: string; local_path?: string; allow_private_ip?: boolean } = { name: 'default' };
	if (picked.source === 'local_path') {
		const files = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'Registry JSON': ['json'] }, title: 'Registry file' });
		if (!files?.[0]) return;
		params = { ...params, local_path: files[0].fsPath };
	} else if (picked.source !== 'builtin') {
		const url = await vscode.window.showInputBox({
			title: picked.label,
			prompt: picked.description,
			placeHolder: 'https://…',
			ignoreFocusOut: true,
			validateInput: (text) => (/^https?:\/\/\S+$/.test(text) ? undefined : 'an http(s) URL'),
		});
		if (!url) return;
		params = { ...params, [picked.source]: url };
		if (needsPrivateAccess(url)) {
			const allow = await vscode.window.showWarningMessage(
				`${url} is a local, private or unencrypted address.`,
				{ modal: true, detail: 'Hangar refuses such registries unless you allow them.' },
				'Allow',
			);
			if (allow !== 'Allow') return;
			params.allow_private_ip = true;
		}
	}
	try {
		const result = await hangar.daemon.request(UpdateRegistry, params);
		void vscode.window.showInformationMessage(`The default registry is now ${picked.source === 'builtin' ? 'the built-in catalog' : `a ${result.type} registry`}.`);
	} catch (error) {
		await showFailure(error, 'change the default registry');
	} finally {
		hangar.registry.refresh();
	}
}
