/**
 * Where Hangar and the clients keep their files on Windows, macOS and Linux, computed on this
 * Linux machine from the platform and environment each function is given.
 */
import { describe, expect, it } from 'vitest';
import { CLIENT_TABLE, clientDefinition, detectionTarget, userConfigPath } from '../server/clients/table.js';
import { resolvePaths } from '../server/store/paths.js';
import { cleanPath } from '../server/store/project.js';

const WINDOWS_USER = {
	USERPROFILE: 'C:\\Users\\ada',
	APPDATA: 'C:\\Users\\ada\\AppData\\Roaming',
	LOCALAPPDATA: 'C:\\Users\\ada\\AppData\\Local',
};

describe("Hangar's own folders", () => {
	it('are %APPDATA%\\hangar for configuration and %LOCALAPPDATA%\\hangar for the rest on Windows', () => {
		expect(resolvePaths(WINDOWS_USER, 'win32')).toEqual({
			config: 'C:\\Users\\ada\\AppData\\Roaming\\hangar',
			state: 'C:\\Users\\ada\\AppData\\Local\\hangar\\state',
			data: 'C:\\Users\\ada\\AppData\\Local\\hangar\\data',
			cache: 'C:\\Users\\ada\\AppData\\Local\\hangar\\cache',
		});
	});

	it('follow the profile folder on Windows when APPDATA and LOCALAPPDATA are missing', () => {
		expect(resolvePaths({ USERPROFILE: 'D:\\u' }, 'win32')).toMatchObject({ config: 'D:\\u\\AppData\\Roaming\\hangar', state: 'D:\\u\\AppData\\Local\\hangar\\state' });
	});

	it('are under ~/Library on macOS', () => {
		expect(resolvePaths({ HOME: '/Users/ada' }, 'darwin')).toEqual({
			config: '/Users/ada/Library/Application Support/hangar/config',
			state: '/Users/ada/Library/Application Support/hangar/state',
			data: '/Users/ada/Library/Application Support/hangar/data',
			cache: '/Users/ada/Library/Caches/hangar',
		});
	});

	it('are the XDG defaults on Linux', () => {
		expect(resolvePaths({ HOME: '/home/ada' }, 'linux')).toEqual({
			config: '/home/ada/.config/hangar',
			state: '/home/ada/.local/state/hangar',
			data: '/home/ada/.local/share/hangar',
			cache: '/home/ada/.cache/hangar',
		});
	});

	it('follow an XDG variable that is set, on every OS', () => {
		expect(resolvePaths({ ...WINDOWS_USER, XDG_STATE_HOME: 'E:\\xdg' }, 'win32')).toMatchObject({ state: 'E:\\xdg\\hangar', data: 'C:\\Users\\ada\\AppData\\Local\\hangar\\data' });
		expect(resolvePaths({ HOME: '/Users/ada', XDG_CONFIG_HOME: '/Users/ada/.config' }, 'darwin')).toMatchObject({ config: '/Users/ada/.config/hangar', cache: '/Users/ada/Library/Caches/hangar' });
	});

	it('are all under HANGAR_HOME when it is set, on every OS', () => {
		expect(resolvePaths({ ...WINDOWS_USER, HANGAR_HOME: 'C:\\h' }, 'win32')).toEqual({ config: 'C:\\h\\config', state: 'C:\\h\\state', data: 'C:\\h\\data', cache: 'C:\\h\\cache' });
		expect(resolvePaths({ HOME: '/Users/ada', HANGAR_HOME: '/h' }, 'darwin').state).toBe('/h/state');
	});
});

/** Every client's user-wide configuration file, from each client's documentation (toolhive-facts §4.3 where it agrees). */
const CLIENT_FILES: Record<string, { win32: string; darwin: string; linux: string }> = {
	vscode: { win32: 'AppData\\Roaming\\Code\\User\\mcp.json', darwin: 'Library/Application Support/Code/User/mcp.json', linux: '.config/Code/User/mcp.json' },
	'vscode-insider': {
		win32: 'AppData\\Roaming\\Code - Insiders\\User\\mcp.json',
		darwin: 'Library/Application Support/Code - Insiders/User/mcp.json',
		linux: '.config/Code - Insiders/User/mcp.json',
	},
	'vscode-server': { win32: '.vscode-server\\data\\User\\mcp.json', darwin: '.vscode-server/data/User/mcp.json', linux: '.vscode-server/data/User/mcp.json' },
	cursor: { win32: '.cursor\\mcp.json', darwin: '.cursor/mcp.json', linux: '.cursor/mcp.json' },
	'claude-code': { win32: '.claude.json', darwin: '.claude.json', linux: '.claude.json' },
	cline: {
		win32: 'AppData\\Roaming\\Code\\User\\globalStorage\\saoudrizwan.claude-dev\\settings\\cline_mcp_settings.json',
		darwin: 'Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json',
		linux: '.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json',
	},
	'roo-code': {
		win32: 'AppData\\Roaming\\Code\\User\\globalStorage\\rooveterinaryinc.roo-cline\\settings\\mcp_settings.json',
		darwin: 'Library/Application Support/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json',
		linux: '.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json',
	},
	windsurf: { win32: '.codeium\\windsurf\\mcp_config.json', darwin: '.codeium/windsurf/mcp_config.json', linux: '.codeium/windsurf/mcp_config.json' },
	'windsurf-jetbrains': { win32: '.codeium\\mcp_config.json', darwin: '.codeium/mcp_config.json', linux: '.codeium/mcp_config.json' },
	'amp-cli': { win32: 'AppData\\Roaming\\amp\\settings.json', darwin: '.config/amp/settings.json', linux: '.config/amp/settings.json' },
	'lm-studio': { win32: '.lmstudio\\mcp.json', darwin: '.lmstudio/mcp.json', linux: '.lmstudio/mcp.json' },
	trae: { win32: 'AppData\\Roaming\\Trae\\User\\mcp.json', darwin: 'Library/Application Support/Trae/User/mcp.json', linux: '.config/Trae/User/mcp.json' },
	kiro: { win32: '.kiro\\settings\\mcp.json', darwin: '.kiro/settings/mcp.json', linux: '.kiro/settings/mcp.json' },
	antigravity: { win32: '.gemini\\antigravity\\mcp_config.json', darwin: '.gemini/antigravity/mcp_config.json', linux: '.gemini/antigravity/mcp_config.json' },
	// Zed's documentation: `%APPDATA%\Zed\settings.json` on Windows, `~/.config/zed` on macOS as on Linux.
	zed: { win32: 'AppData\\Roaming\\Zed\\settings.json', darwin: '.config/zed/settings.json', linux: '.config/zed/settings.json' },
	'gemini-cli': { win32: '.gemini\\settings.json', darwin: '.gemini/settings.json', linux: '.gemini/settings.json' },
	opencode: { win32: '.config\\opencode\\opencode.json', darwin: '.config/opencode/opencode.json', linux: '.config/opencode/opencode.json' },
	'kimi-cli': { win32: '.kimi\\mcp.json', darwin: '.kimi/mcp.json', linux: '.kimi/mcp.json' },
	factory: { win32: '.factory\\mcp.json', darwin: '.factory/mcp.json', linux: '.factory/mcp.json' },
	'copilot-cli': { win32: '.copilot\\mcp-config.json', darwin: '.copilot/mcp-config.json', linux: '.copilot/mcp-config.json' },
	qoder: { win32: 'AppData\\Roaming\\Qoder\\SharedClientCache\\mcp.json', darwin: '.qoder/mcp.json', linux: '.qoder/mcp.json' },
	// Goose's documentation: `%APPDATA%\Block\goose\config\config.yaml` (ToolHive's table misses `Roaming` and `config`).
	goose: { win32: 'AppData\\Roaming\\Block\\goose\\config\\config.yaml', darwin: '.config/goose/config.yaml', linux: '.config/goose/config.yaml' },
	continue: { win32: '.continue\\config.yaml', darwin: '.continue/config.yaml', linux: '.continue/config.yaml' },
	'mistral-vibe': { win32: '.vibe\\config.toml', darwin: '.vibe/config.toml', linux: '.vibe/config.toml' },
	codex: { win32: '.codex\\config.toml', darwin: '.codex/config.toml', linux: '.codex/config.toml' },
	'amazon-q': { win32: '.aws\\amazonq\\mcp.json', darwin: '.aws/amazonq/mcp.json', linux: '.aws/amazonq/mcp.json' },
};

const HOMES = { win32: 'C:\\Users\\ada', darwin: '/Users/ada', linux: '/home/ada' } as const;

describe("the clients' configuration files", () => {
	it('cover every client Hangar knows', () => {
		expect(Object.keys(CLIENT_FILES).sort()).toEqual(CLIENT_TABLE.map((client) => client.id).sort());
	});

	for (const platform of ['win32', 'darwin', 'linux'] as const) {
		it(`are where each client reads them on ${platform}, in its separators`, () => {
			const separator = platform === 'win32' ? '\\' : '/';
			for (const client of CLIENT_TABLE) {
				expect(userConfigPath(client, HOMES[platform], platform), client.id).toBe(`${HOMES[platform]}${separator}${CLIENT_FILES[client.id]![platform]}`);
			}
		});
	}

	it("are detected by their folder on Windows, or by the file when it sits in the profile folder", () => {
		expect(detectionTarget(clientDefinition('goose')!, HOMES.win32, 'win32')).toBe('C:\\Users\\ada\\AppData\\Roaming\\Block\\goose\\config');
		expect(detectionTarget(clientDefinition('claude-code')!, HOMES.win32, 'win32')).toBe('C:\\Users\\ada\\.claude.json');
	});
});

describe('project roots', () => {
	it("are keyed on Windows with the drive letter in capitals, as Windows reports it (VS Code sends 'c:\\\\…')", () => {
		expect(cleanPath('c:\\Work\\app\\', 'win32')).toBe('C:\\Work\\app');
		expect(cleanPath('c:/Work/app', 'win32')).toBe('C:\\Work\\app');
		expect(cleanPath('C:\\Work\\.\\app\\..\\site', 'win32')).toBe('C:\\Work\\site');
		expect(cleanPath('\\\\server\\share\\app\\', 'win32')).toBe('\\\\server\\share\\app');
	});

	it("keep a drive's root whole: C: alone would be that drive's current folder", () => {
		expect(cleanPath('d:\\', 'win32')).toBe('D:\\');
		expect(cleanPath('/', 'linux')).toBe('/');
	});

	it('are left in their case elsewhere, where a backslash is part of a name', () => {
		expect(cleanPath('/home/ada/App//', 'linux')).toBe('/home/ada/App');
		expect(cleanPath('/Users/ada/c:\\x', 'darwin')).toBe('/Users/ada/c:\\x');
	});
});
