/**
 * The MCP client applications, as plain data: what a command's start reads without loading the
 * schemas (common.ts builds the `ClientApp` schema from them).
 */

/**
 * MCP client application ids, exactly as ToolHive's `ClientApp` enum spells them, then Hangar's
 * own (`HANGAR_CLIENT_APPS`). Clients and skills both take them; an unknown id is a 400
 * (`unsupported client type`).
 */
export const TOOLHIVE_CLIENT_APPS = [
	'roo-code',
	'cline',
	'cursor',
	'vscode-insider',
	'vscode',
	'claude-code',
	'windsurf',
	'windsurf-jetbrains',
	'amp-cli',
	'lm-studio',
	'goose',
	'trae',
	'continue',
	'opencode',
	'kiro',
	'antigravity',
	'zed',
	'gemini-cli',
	'vscode-server',
	'mistral-vibe',
	'codex',
	'kimi-cli',
	'factory',
	'copilot-cli',
	'qoder',
] as const;

/** Hangar extension: clients ToolHive's enum does not list (Amazon Q Developer CLI). */
export const HANGAR_CLIENT_APPS = ['amazon-q'] as const;

export const CLIENT_APPS = [...TOOLHIVE_CLIENT_APPS, ...HANGAR_CLIENT_APPS] as const;

/** The refusal of an unknown client id: what was sent, the closest id, and every id. */
export function unsupportedClientMessage(name: string): string {
	const close = CLIENT_APPS.find((id) => id === name.toLowerCase().replace(/[\s_]+/g, '-'));
	const hint = close ? `; did you mean '${close}'?` : '';
	return `unsupported client type: ${name}${hint} (supported: ${CLIENT_APPS.join(', ')})`;
}

/** One of `CLIENT_APPS`. */
export type ClientAppId = (typeof CLIENT_APPS)[number];

/**
 * Hangar extension: the clients that read a per-project MCP configuration (each client's own
 * documentation names the file), and that file relative to the project root. `project_root`
 * registers these clients there instead of in the user-wide file. A `*` stands for a workload's
 * name: the client reads every file of a folder, one server each, and Hangar writes one per workload.
 */
export const PROJECT_CONFIG_FILES: Readonly<Partial<Record<ClientAppId, string>>> = {
	'amazon-q': '.amazonq/mcp.json',
	'claude-code': '.mcp.json',
	codex: '.codex/config.toml',
	continue: '.continue/mcpServers/hangar-*.yaml',
	cursor: '.cursor/mcp.json',
	'gemini-cli': '.gemini/settings.json',
	kiro: '.kiro/settings/mcp.json',
	'mistral-vibe': '.vibe/config.toml',
	opencode: 'opencode.json',
	'roo-code': '.roo/mcp.json',
	trae: '.trae/mcp.json',
	vscode: '.vscode/mcp.json',
	'vscode-insider': '.vscode/mcp.json',
	zed: '.zed/settings.json',
};

/** The clients of `PROJECT_CONFIG_FILES`, sorted. */
export const PROJECT_CONFIG_CLIENTS: readonly ClientAppId[] = (Object.keys(PROJECT_CONFIG_FILES) as ClientAppId[]).sort();

/** Why `client` cannot take a project: the doors prefix the field or flag the user gave. */
export function noProjectFileMessage(client: string): string {
	return `${client} has no per-project configuration file (clients with one: ${PROJECT_CONFIG_CLIENTS.join(', ')})`;
}
