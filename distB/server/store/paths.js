/**
 * Where Hangar keeps its files: XDG directories under `hangar`, or one root for tests.
 *
 * `HANGAR_HOME` puts config, state, data and cache under one folder so tests and
 * side-by-side installs never touch the user's real state.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
export function resolvePaths(env = process.env) {
    const root = env.HANGAR_HOME;
    if (root) {
        return {
            config: join(root, 'config'),
            state: join(root, 'state'),
            data: join(root, 'data'),
            cache: join(root, 'cache'),
        };
    }
    const home = env.HOME || homedir();
    const xdg = (variable, fallback) => join(env[variable] || join(home, fallback), 'hangar');
    return {
        config: xdg('XDG_CONFIG_HOME', '.config'),
        state: xdg('XDG_STATE_HOME', join('.local', 'state')),
        data: xdg('XDG_DATA_HOME', join('.local', 'share')),
        cache: xdg('XDG_CACHE_HOME', '.cache'),
    };
}
//# sourceMappingURL=paths.js.map