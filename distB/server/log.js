/**
 * Logging to stderr only: stdout belongs to the JSON-RPC stream of `hangar daemon`.
 * `HANGAR_LOG=debug|info|warn|error|silent` sets the level (default `info`).
 */
const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'];
export function createLogger(component, level = process.env.HANGAR_LOG ?? 'info') {
    const threshold = Math.max(0, LEVELS.indexOf(level));
    const write = (at) => (message) => {
        if (LEVELS.indexOf(at) < threshold)
            return;
        process.stderr.write(`${new Date().toISOString()} ${at.padEnd(5)} [${component}] ${message}\n`);
    };
    return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
//# sourceMappingURL=log.js.map