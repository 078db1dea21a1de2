/**
 * Where Hangar keeps its files, where each OS's users expect them:
 * - Linux (and other Unix-likes): the XDG folders (`~/.config/hangar`, `~/.local/state/hangar`…);
 * - Windows: configuration under `%APPDATA%\hangar` (roams with the user), everything else
 *   under `%LOCALAPPDATA%\hangar\{state,data,cache}` (stays on the machine);
 * - macOS: `~/Library/Application Support/hangar/{config,state,data}` and `~/Library/Caches/hangar`,
 *   as ToolHive (through Go's adrg/xdg) and other macOS tools do.
 * An XDG variable that is set wins on every OS, and `HANGAR_HOME` puts config, state, data and
 * cache under one folder, so tests and side-by-side installs never touch the user's real state.
 */
import { homedir } from 'node:os';
import { posix, win32 } from 'node:path';

export interface HangarPaths {
	/** User settings: registry configuration, secrets provider choice. */
	readonly config: string;
	/** Desired state: groups, run configurations, installed skills. */
	readonly state: string;
	/** Data the service produces: logs, local skill builds. */
	readonly data: string;
	/** Anything that may be deleted: registry caches, downloads. */
	readonly cache: string;
}

type Kind = keyof HangarPaths;

const XDG_VARIABLE: Readonly<Record<Kind, string>> = {
	config: 'XDG_CONFIG_HOME',
	state: 'XDG_STATE_HOME',
	data: 'XDG_DATA_HOME',
	cache: 'XDG_CACHE_HOME',
};

export function resolvePaths(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): HangarPaths {
	const path = platform === 'win32' ? win32 : posix;
	const root = env.HANGAR_HOME;
	if (root) {
		return { config: path.join(root, 'config'), state: path.join(root, 'state'), data: path.join(root, 'data'), cache: path.join(root, 'cache') };
	}
	const fallback = platformFolders(env, platform);
	const folder = (kind: Kind): string => {
		const xdg = env[XDG_VARIABLE[kind]];
		return xdg ? path.join(xdg, 'hangar') : fallback[kind];
	};
	return { config: folder('config'), state: folder('state'), data: folder('data'), cache: folder('cache') };
}

/** The home folder as the OS's own tools see it: `USERPROFILE` on Windows (a Windows user has no HOME), `HOME` elsewhere. */
export function homeOf(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
	return (platform === 'win32' ? env.USERPROFILE : env.HOME) || homedir();
}

/** Hangar's folders when no XDG variable says otherwise. */
function platformFolders(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): HangarPaths {
	const home = homeOf(env, platform);
	if (platform === 'win32') {
		const roaming = env.APPDATA || win32.join(home, 'AppData', 'Roaming');
		const local = win32.join(env.LOCALAPPDATA || win32.join(home, 'AppData', 'Local'), 'hangar');
		return { config: win32.join(roaming, 'hangar'), state: win32.join(local, 'state'), data: win32.join(local, 'data'), cache: win32.join(local, 'cache') };
	}
	if (platform === 'darwin') {
		const support = posix.join(home, 'Library', 'Application Support', 'hangar');
		return {
			config: posix.join(support, 'config'),
			state: posix.join(support, 'state'),
			data: posix.join(support, 'data'),
			cache: posix.join(home, 'Library', 'Caches', 'hangar'),
		};
	}
	return {
		config: posix.join(home, '.config', 'hangar'),
		state: posix.join(home, '.local', 'state', 'hangar'),
		data: posix.join(home, '.local', 'share', 'hangar'),
		cache: posix.join(home, '.cache', 'hangar'),
	};
}
