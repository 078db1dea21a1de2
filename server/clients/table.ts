/**
 * The MCP clients Hangar knows (toolhive-facts §4): where each keeps its MCP configuration on
 * every OS, in which format and shape, how to tell it is installed, and where it reads skills
 * (§3.4). Facts only; reading and writing the files is `configFile.ts`'s job.
 */
import { statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { basename, join, posix, relative, sep, win32 } from 'node:path';
import type { ClientApp } from '../../protocol/common.js';
import { PROJECT_CONFIG_FILES } from '../../protocol/clientApps.js';

/** Paths relative to the home directory, per OS (`/`-separated; joined natively). */
export interface PlatformPaths {
	readonly linux: string;
	readonly darwin: string;
	readonly win32: string;
}

/** The transports a workload's proxy speaks, as client entries reference them. */
export type EntryTransport = 'streamable-http' | 'sse';

/**
 * Where the servers live in a configuration file and what one entry looks like.
 *
 * - `map`: `servers` is an object keyed by workload name (`{"servers": {"fetch": {…}}}`).
 * - `array`: `servers` is a list of entries that carry their name in a `name` field
 *   (Continue's `mcpServers:` YAML list, Mistral Vibe's `[[mcp_servers]]`).
 */
export interface ConfigShape {
	readonly format: 'json' | 'jsonc' | 'yaml' | 'toml';
	/** Key path to the servers collection; one segment may itself contain a dot (`amp.mcpServers`). */
	readonly serversPath: readonly string[];
	readonly collection: 'map' | 'array';
	/** The key that receives the proxy URL, per transport (Gemini CLI uses `httpUrl` for streamable HTTP). */
	readonly urlKey: Readonly<Record<EntryTransport, string>>;
	/** The transport field, when the client has one: its key and the value written per transport. */
	readonly transportField?: {
		readonly key: string;
		readonly values: Readonly<Record<EntryTransport, string>>;
	};
	/** Fields every entry carries besides name, URL and transport (Goose's `enabled`, `timeout`…). */
	readonly extraFields?: Readonly<Record<string, string | number | boolean>>;
	/** Entries repeat their name in a `name` field (always so for `array` collections). */
	readonly nameField?: boolean;
}

export interface ClientDefinition {
	readonly id: ClientApp;
	readonly displayName: string;
	/** The user-wide MCP configuration file, relative to the home directory. */
	readonly configPath: PlatformPaths;
	readonly config: ConfigShape;
	/**
	 * The file `installed` detection looks for, relative to home (toolhive-facts §4.2): the
	 * configuration's folder, or the file itself when it sits directly in the home directory.
	 */
	readonly detectPath: PlatformPaths;
	/**
	 * Per-project configuration (a Hangar extension): the file relative to the project root
	 * (`PROJECT_CONFIG_FILES`, from each client's documentation). It has the shape of the
	 * client's user-wide file: the same servers key and entries. A path with a `*` names one
	 * file per workload (`*` for its name), which starts as `newFile` gives it.
	 */
	readonly project?: {
		readonly configPath: string;
		readonly config: ConfigShape;
		readonly newFile?: (workload: string) => string;
	};
	/** Where the client reads skills (toolhive-facts §3.4); absent when it has none. */
	readonly skills?: {
		/** Folder for user-scope skills, relative to the home directory (e.g. '.claude/skills'). */
		readonly userDir: string;
		/** Folder for project-scope skills, relative to the project root (e.g. '.claude/skills'). */
		readonly projectDir: string;
	};
	/** Plugins can be installed for it (ToolHive: claude-code and codex). */
	readonly supportsPlugins: boolean;
}

const APP_DATA = { linux: '.config', darwin: 'Library/Application Support', win32: 'AppData/Roaming' } as const;

/** The same path on every OS. */
function everywhere(path: string): PlatformPaths {
	return { linux: path, darwin: path, win32: path };
}

/** A path under the per-OS application-data folder (`~/.config`, `~/Library/Application Support`, `~/AppData/Roaming`). */
function inAppData(path: string): PlatformPaths {
	return {
		linux: `${APP_DATA.linux}/${path}`,
		darwin: `${APP_DATA.darwin}/${path}`,
		win32: `${APP_DATA.win32}/${path}`,
	};
}

/** ToolHive's detection rule: the configuration's folder, or the file itself when it is directly in home. */
function detectionFor(paths: PlatformPaths): PlatformPaths {
	const folderOrFile = (path: string) => (posix.dirname(path) === '.' ? path : posix.dirname(path));
	return { linux: folderOrFile(paths.linux), darwin: folderOrFile(paths.darwin), win32: folderOrFile(paths.win32) };
}

const HTTP_SSE = { 'streamable-http': 'http', sse: 'sse' } as const;
const SAME_URL_KEY = (key: string) => ({ 'streamable-http': key, sse: key });

/** A JSON(C) file with an object of servers keyed by name. */
function jsonMap(
	serversKey: string,
	options: { urlKey?: string; types?: Record<EntryTransport, string>; jsonc?: boolean } = {},
): ConfigShape {
	return {
		format: options.jsonc ? 'jsonc' : 'json',
		serversPath: [serversKey],
		collection: 'map',
		urlKey: SAME_URL_KEY(options.urlKey ?? 'url'),
		...(options.types ? { transportField: { key: 'type', values: options.types } } : {}),
	};
}

interface Row {
	readonly id: ClientApp;
	readonly displayName: string;
	readonly configPath: PlatformPaths;
	readonly config: ConfigShape;
	readonly skills?: ClientDefinition['skills'];
	readonly supportsPlugins?: boolean;
	/** What a new per-project file starts with, when the project holds one per workload. */
	readonly newProjectFile?: (workload: string) => string;
}

const sameSkills = (dir: string) => ({ userDir: dir, projectDir: dir });
const AGENT_SKILLS = sameSkills('.agents/skills');

const VSCODE_SHAPE = jsonMap('servers', { types: HTTP_SSE, jsonc: true });
const COPILOT_SKILLS = { userDir: '.copilot/skills', projectDir: '.github/skills' };

const ROWS: readonly Row[] = [
	{
		id: 'roo-code',
		displayName: 'Roo Code (deprecated)',
		configPath: inAppData('Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json'),
		config: jsonMap('mcpServers', { types: { 'streamable-http': 'streamable-http', sse: 'sse' } }),
		skills: sameSkills('.roo/skills'),
	},
	{
		id: 'cline',
		displayName: 'Cline',
		configPath: inAppData('Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json'),
		config: jsonMap('mcpServers', { types: { 'streamable-http': 'streamableHttp', sse: 'sse' } }),
		skills: sameSkills('.cline/skills'),
	},
	{
		id: 'cursor',
		displayName: 'Cursor',
		configPath: everywhere('.cursor/mcp.json'),
		config: jsonMap('mcpServers', { types: HTTP_SSE }),
		skills: sameSkills('.cursor/skills'),
	},
	{
		id: 'vscode-insider',
		displayName: 'VS Code Insiders',
		configPath: inAppData('Code - Insiders/User/mcp.json'),
		config: VSCODE_SHAPE,
		skills: COPILOT_SKILLS,
	},
	{
		id: 'vscode',
		displayName: 'VS Code',
		configPath: inAppData('Code/User/mcp.json'),
		config: VSCODE_SHAPE,
		skills: COPILOT_SKILLS,
	},
	{
		id: 'claude-code',
		displayName: 'Claude Code',
		configPath: everywhere('.claude.json'),
		config: jsonMap('mcpServers', { types: HTTP_SSE }),
		skills: sameSkills('.claude/skills'),
		supportsPlugins: true,
	},
	{
		id: 'windsurf',
		displayName: 'Windsurf',
		configPath: everywhere('.codeium/windsurf/mcp_config.json'),
		config: jsonMap('mcpServers', { urlKey: 'serverUrl', types: HTTP_SSE }),
		skills: { userDir: '.codeium/windsurf/skills', projectDir: '.windsurf/skills' },
	},
	{
		id: 'windsurf-jetbrains',
		displayName: 'Windsurf for JetBrains',
		configPath: everywhere('.codeium/mcp_config.json'),
		config: jsonMap('mcpServers', { urlKey: 'serverUrl', types: HTTP_SSE }),
	},
	{
		id: 'amp-cli',
		displayName: 'Amp CLI',
		configPath: {
			linux: '.config/amp/settings.json',
			darwin: '.config/amp/settings.json',
			win32: 'AppData/Roaming/amp/settings.json',
		},
		// A flat key with a dot in it, not a nested path.
		config: jsonMap('amp.mcpServers', { types: HTTP_SSE }),
		skills: AGENT_SKILLS,
	},
	{
		id: 'lm-studio',
		displayName: 'LM Studio',
		configPath: everywhere('.lmstudio/mcp.json'),
		config: jsonMap('mcpServers', { types: HTTP_SSE }),
	},
	{
		id: 'goose',
		displayName: 'Goose',
		configPath: {
			linux: '.config/goose/config.yaml',
			darwin: '.config/goose/config.yaml',
			// Goose's documentation (etcetera's Windows strategy): `%APPDATA%\Block\goose\config`;
			// ToolHive's table says `AppData/Block/goose`.
			win32: 'AppData/Roaming/Block/goose/config/config.yaml',
		},
		config: {
			format: 'yaml',
			serversPath: ['extensions'],
			collection: 'map',
			urlKey: SAME_URL_KEY('uri'),
			transportField: { key: 'type', values: { 'streamable-http': 'streamable_http', sse: 'sse' } },
			extraFields: { enabled: true, timeout: 60, description: '' },
			nameField: true,
		},
		skills: AGENT_SKILLS,
	},
	{
		id: 'trae',
		displayName: 'Trae',
		configPath: inAppData('Trae/User/mcp.json'),
		config: jsonMap('mcpServers'),
		skills: AGENT_SKILLS,
	},
	{
		id: 'continue',
		displayName: 'Continue',
		configPath: everywhere('.continue/config.yaml'),
		config: {
			format: 'yaml',
			serversPath: ['mcpServers'],
			collection: 'array',
			urlKey: SAME_URL_KEY('url'),
			transportField: { key: 'type', values: { 'streamable-http': 'streamable-http', sse: 'sse' } },
			nameField: true,
		},
		// A project's `.continue/mcpServers/` holds blocks, each with its own name, version and schema
		// and exactly one server (Continue's block schema). So each workload gets a file of its own,
		// named `hangar-NAME.yaml` (`PROJECT_CONFIG_FILES`): Hangar never edits a block of the user's,
		// and removes its own when the workload goes.
		newProjectFile: (workload) =>
			`# Written by Hangar for the workload ${workload}; removed by it when the workload stops.\n` +
			`name: ${JSON.stringify(workload)}\nversion: 0.0.1\nschema: v1\n`,
	},
	{
		id: 'opencode',
		displayName: 'OpenCode',
		configPath: everywhere('.config/opencode/opencode.json'),
		config: jsonMap('mcp', { types: { 'streamable-http': 'remote', sse: 'remote' }, jsonc: true }),
		skills: { userDir: '.config/opencode/skills', projectDir: '.opencode/skills' },
	},
	{
		id: 'kiro',
		displayName: 'Kiro',
		configPath: everywhere('.kiro/settings/mcp.json'),
		config: jsonMap('mcpServers'),
		skills: sameSkills('.kiro/skills'),
	},
	{
		id: 'antigravity',
		displayName: 'Antigravity',
		configPath: everywhere('.gemini/antigravity/mcp_config.json'),
		config: jsonMap('mcpServers', { urlKey: 'serverUrl' }),
		skills: AGENT_SKILLS,
	},
	{
		id: 'zed',
		displayName: 'Zed',
		configPath: {
			linux: '.config/zed/settings.json',
			darwin: '.config/zed/settings.json',
			win32: 'AppData/Roaming/Zed/settings.json', // Zed's documentation: `%APPDATA%\Zed\settings.json`
		},
		config: jsonMap('context_servers', { jsonc: true }),
	},
	{
		id: 'gemini-cli',
		displayName: 'Gemini CLI',
		configPath: everywhere('.gemini/settings.json'),
		config: { ...jsonMap('mcpServers'), urlKey: { 'streamable-http': 'httpUrl', sse: 'url' } },
		skills: AGENT_SKILLS,
	},
	{
		id: 'vscode-server',
		displayName: 'VS Code Server',
		configPath: everywhere('.vscode-server/data/User/mcp.json'),
		config: jsonMap('servers', { jsonc: true }),
	},
	{
		id: 'mistral-vibe',
		displayName: 'Mistral Vibe',
		configPath: everywhere('.vibe/config.toml'),
		config: {
			format: 'toml',
			serversPath: ['mcp_servers'],
			collection: 'array',
			urlKey: SAME_URL_KEY('url'),
			transportField: { key: 'transport', values: { 'streamable-http': 'streamable-http', sse: 'http' } },
			nameField: true,
		},
		skills: sameSkills('.vibe/skills'),
	},
	{
		id: 'codex',
		displayName: 'Codex',
		configPath: everywhere('.codex/config.toml'),
		config: { format: 'toml', serversPath: ['mcp_servers'], collection: 'map', urlKey: SAME_URL_KEY('url') },
		skills: AGENT_SKILLS,
		supportsPlugins: true,
	},
	{
		id: 'kimi-cli',
		displayName: 'Kimi CLI',
		configPath: everywhere('.kimi/mcp.json'),
		config: jsonMap('mcpServers'),
		skills: sameSkills('.kimi/skills'),
	},
	{
		id: 'factory',
		displayName: 'Factory',
		configPath: everywhere('.factory/mcp.json'),
		config: jsonMap('mcpServers', { types: HTTP_SSE }),
		skills: sameSkills('.factory/skills'),
	},
	{
		id: 'copilot-cli',
		displayName: 'GitHub Copilot CLI',
		configPath: everywhere('.copilot/mcp-config.json'),
		config: jsonMap('mcpServers', { types: HTTP_SSE }),
	},
	{
		id: 'qoder',
		displayName: 'Qoder',
		configPath: {
			linux: '.qoder/mcp.json',
			darwin: '.qoder/mcp.json',
			win32: 'AppData/Roaming/Qoder/SharedClientCache/mcp.json',
		},
		config: jsonMap('mcpServers', { types: HTTP_SSE }),
		skills: sameSkills('.qoder/skills'),
	},
	{
		// Not in ToolHive's table. Remote servers as its documentation shows them: `{"type": "http", "url": …}`.
		id: 'amazon-q',
		displayName: 'Amazon Q Developer CLI',
		configPath: everywhere('.aws/amazonq/mcp.json'),
		config: jsonMap('mcpServers', { types: HTTP_SSE }),
	},
];

export const CLIENT_TABLE: readonly ClientDefinition[] = ROWS.map(({ newProjectFile, ...row }) => {
	const projectFile = PROJECT_CONFIG_FILES[row.id];
	const project =
		projectFile === undefined ? undefined : { configPath: projectFile, config: row.config, ...(newProjectFile ? { newFile: newProjectFile } : {}) };
	return {
		...row,
		detectPath: detectionFor(row.configPath),
		...(project ? { project } : {}),
		supportsPlugins: row.supportsPlugins ?? false,
	};
});

const BY_ID = new Map<string, ClientDefinition>(CLIENT_TABLE.map((client) => [client.id, client]));

export function clientDefinition(id: string): ClientDefinition | undefined {
	return BY_ID.get(id);
}

/** A per-OS relative path for this platform (other Unix-likes use the Linux path). */
export function forPlatform(paths: PlatformPaths, platform: NodeJS.Platform = process.platform): string {
	return platform === 'darwin' ? paths.darwin : platform === 'win32' ? paths.win32 : paths.linux;
}

/** `home` joined with a table path, in the platform's own separators. */
function underHome(home: string, paths: PlatformPaths, platform: NodeJS.Platform = process.platform): string {
	return (platform === 'win32' ? win32 : posix).join(home, ...forPlatform(paths, platform).split('/'));
}

/** The absolute path of the client's user-wide MCP configuration. */
export function userConfigPath(client: ClientDefinition, home: string, platform?: NodeJS.Platform): string {
	return underHome(home, client.configPath, platform);
}

/**
 * Whether the client itself is installed: ToolHive's detection (toolhive-facts §4.2: its
 * configuration folder exists, or the file itself when it sits directly in home). When Hangar
 * created that folder or file (`createdByHangar`), it counts only once it holds more than
 * Hangar wrote: a folder with only Hangar's configuration file (its lock and temporary files)
 * and skills folder, or a JSON file with only the servers key, is Hangar's doing.
 */
export async function isInstalled(
	client: ClientDefinition,
	home: string,
	platform?: NodeJS.Platform,
	createdByHangar = false,
): Promise<boolean> {
	const target = detectionTarget(client, home, platform);
	const config = userConfigPath(client, home, platform);
	// A synchronous stat: microseconds, where `client ls` would send one trip per client through
	// libuv's thread pool.
	let isFolder: boolean;
	try {
		isFolder = statSync(target).isDirectory();
	} catch {
		return false;
	}
	if (!createdByHangar) return true;
	if (target === config) return !(await holdsOnlyServers(client, config));
	if (!isFolder) return true;
	const configName = basename(config);
	const skillsFolder = client.skills ? relative(target, join(home, ...client.skills.userDir.split('/'))).split(sep)[0] : undefined;
	const ours = (name: string) =>
		name === configName || name.startsWith(`${configName}.`) || name.startsWith(`.${configName}.`) || name === skillsFolder;
	try {
		return (await readdir(target)).some((name) => !ours(name));
	} catch {
		return true;
	}
}

/** A JSON configuration file with nothing but the servers key (what Hangar writes into a new file). */
async function holdsOnlyServers(client: ClientDefinition, path: string): Promise<boolean> {
	if (client.config.format !== 'json') return false;
	try {
		const content = JSON.parse(await readFile(path, 'utf8')) as unknown;
		if (typeof content !== 'object' || content === null || Array.isArray(content)) return false;
		return Object.keys(content).every((key) => key === client.config.serversPath[0]);
	} catch {
		return false;
	}
}

/** What `installed` detection looks for: the configuration's folder, or the file when it is directly in home. */
export function detectionTarget(client: ClientDefinition, home: string, platform?: NodeJS.Platform): string {
	return underHome(home, client.detectPath, platform);
}
