/**
 * The MCP clients Hangar knows (toolhive-facts §4): where each keeps its MCP configuration on
 * every OS, in which format and shape, how to tell it is installed, and where it reads skills
 * (§3.4). Facts only; reading and writing the files is `configFile.ts`'s job.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, posix, relative, sep } from 'node:path';
const APP_DATA = { linux: '.config', darwin: 'Library/Application Support', win32: 'AppData/Roaming' };
/** The same path on every OS. */
function everywhere(path) {
    return { linux: path, darwin: path, win32: path };
}
/** A path under the per-OS application-data folder (`~/.config`, `~/Library/Application Support`, `~/AppData/Roaming`). */
function inAppData(path) {
    return {
        linux: `${APP_DATA.linux}/${path}`,
        darwin: `${APP_DATA.darwin}/${path}`,
        win32: `${APP_DATA.win32}/${path}`,
    };
}
/** ToolHive's detection rule: the configuration's folder, or the file itself when it is directly in home. */
function detectionFor(paths) {
    const folderOrFile = (path) => (posix.dirname(path) === '.' ? path : posix.dirname(path));
    return { linux: folderOrFile(paths.linux), darwin: folderOrFile(paths.darwin), win32: folderOrFile(paths.win32) };
}
const HTTP_SSE = { 'streamable-http': 'http', sse: 'sse' };
const SAME_URL_KEY = (key) => ({ 'streamable-http': key, sse: key });
/** A JSON(C) file with an object of servers keyed by name. */
function jsonMap(serversKey, options = {}) {
    return {
        format: options.jsonc ? 'jsonc' : 'json',
        serversPath: [serversKey],
        collection: 'map',
        urlKey: SAME_URL_KEY(options.urlKey ?? 'url'),
        ...(options.types ? { transportField: { key: 'type', values: options.types } } : {}),
    };
}
const sameSkills = (dir) => ({ userDir: dir, projectDir: dir });
const AGENT_SKILLS = sameSkills('.agents/skills');
const VSCODE_SHAPE = jsonMap('servers', { types: HTTP_SSE, jsonc: true });
const VSCODE_PROJECT = { configPath: '.vscode/mcp.json', config: VSCODE_SHAPE };
const COPILOT_SKILLS = { userDir: '.copilot/skills', projectDir: '.github/skills' };
const ROWS = [
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
        project: VSCODE_PROJECT,
        skills: COPILOT_SKILLS,
    },
    {
        id: 'vscode',
        displayName: 'VS Code',
        configPath: inAppData('Code/User/mcp.json'),
        config: VSCODE_SHAPE,
        project: VSCODE_PROJECT,
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
            win32: 'AppData/Block/goose/config.yaml',
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
            win32: 'AppData/Roaming/zed/settings.json',
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
];
export const CLIENT_TABLE = ROWS.map((row) => ({
    ...row,
    detectPath: detectionFor(row.configPath),
    supportsPlugins: row.supportsPlugins ?? false,
}));
const BY_ID = new Map(CLIENT_TABLE.map((client) => [client.id, client]));
export function clientDefinition(id) {
    return BY_ID.get(id);
}
/** A per-OS relative path for this platform (other Unix-likes use the Linux path). */
export function forPlatform(paths, platform = process.platform) {
    return platform === 'darwin' ? paths.darwin : platform === 'win32' ? paths.win32 : paths.linux;
}
/** The absolute path of the client's user-wide MCP configuration. */
export function userConfigPath(client, home, platform) {
    return join(home, ...forPlatform(client.configPath, platform).split('/'));
}
/**
 * Whether the client itself is installed: ToolHive's detection (toolhive-facts §4.2: its
 * configuration folder exists, or the file itself when it sits directly in home). When Hangar
 * created that folder or file (`createdByHangar`), it counts only once it holds more than
 * Hangar wrote: a folder with only Hangar's configuration file (its lock and temporary files)
 * and skills folder, or a JSON file with only the servers key, is Hangar's doing.
 */
export async function isInstalled(client, home, platform, createdByHangar = false) {
    const target = detectionTarget(client, home, platform);
    const config = userConfigPath(client, home, platform);
    let isFolder;
    try {
        isFolder = (await stat(target)).isDirectory();
    }
    catch {
        return false;
    }
    if (!createdByHangar)
        return true;
    if (target === config)
        return !(await holdsOnlyServers(client, config));
    if (!isFolder)
        return true;
    const configName = basename(config);
    const skillsFolder = client.skills ? relative(target, join(home, ...client.skills.userDir.split('/'))).split(sep)[0] : undefined;
    const ours = (name) => name === configName || name.startsWith(`${configName}.`) || name.startsWith(`.${configName}.`) || name === skillsFolder;
    try {
        return (await readdir(target)).some((name) => !ours(name));
    }
    catch {
        return true;
    }
}
/** A JSON configuration file with nothing but the servers key (what Hangar writes into a new file). */
async function holdsOnlyServers(client, path) {
    if (client.config.format !== 'json')
        return false;
    try {
        const content = JSON.parse(await readFile(path, 'utf8'));
        if (typeof content !== 'object' || content === null || Array.isArray(content))
            return false;
        return Object.keys(content).every((key) => key === client.config.serversPath[0]);
    }
    catch {
        return false;
    }
}
/** What `installed` detection looks for: the configuration's folder, or the file when it is directly in home. */
export function detectionTarget(client, home, platform) {
    return join(home, ...forPlatform(client.detectPath, platform).split('/'));
}
//# sourceMappingURL=table.js.map