/** The extension's settings (`hangar.*`), read fresh on every use. */
import * as vscode from 'vscode';
import { ClientApp, type ClientApp as ClientAppId } from '../../protocol/common.js';

export type DefaultScope = 'ask' | 'project' | 'user';

export interface Settings {
	/** A `hangar` executable or entry script; empty for the bundled daemon. */
	readonly daemonPath: string;
	readonly defaultScope: DefaultScope;
	/** Clients to install skills for without asking; empty asks. */
	readonly defaultClients: readonly ClientAppId[];
	/** Whether Run MCP Server… turns secret scanning on. */
	readonly guardrails: boolean;
	/** Whether Run MCP Server… turns personal data scanning on (every kind, redacted). */
	readonly guardrailsPersonalData: boolean;
}

export function readSettings(): Settings {
	const configuration = vscode.workspace.getConfiguration('hangar');
	const scope = configuration.get<string>('defaultScope', 'ask');
	return {
		daemonPath: configuration.get<string>('daemonPath', '') ?? '',
		defaultScope: scope === 'project' || scope === 'user' ? scope : 'ask',
		guardrails: configuration.get<boolean>('guardrails', false) === true,
		guardrailsPersonalData: configuration.get<boolean>('guardrailsPersonalData', false) === true,
		// Unknown ids (a typo in settings.json) are dropped rather than sent to the daemon.
		defaultClients: (configuration.get<unknown[]>('defaultClients', []) ?? []).flatMap((client) => {
			const parsed = ClientApp.safeParse(client);
			return parsed.success ? [parsed.data] : [];
		}),
	};
}
