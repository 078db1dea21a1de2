/**
 * Logging to stderr only: stdout belongs to the JSON-RPC stream of `hangar daemon`.
 * `HANGAR_LOG=debug|info|warn|error|silent` sets the level (default `info`).
 */
const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LEVELS)[number];

export interface Logger {
	debug(message: string): void;
	info(message: string): void;
	warn(message: string): void;
	error(message: string): void;
}

export function createLogger(component: string, level: string = process.env.HANGAR_LOG ?? 'info'): Logger {
	const threshold = Math.max(0, LEVELS.indexOf(level as LogLevel));
	const write = (at: LogLevel) => (message: string) => {
		if (LEVELS.indexOf(at) < threshold) return;
		process.stderr.write(`${new Date().toISOString()} ${at.padEnd(5)} [${component}] ${message}\n`);
	};
	return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
