/**
 * The long-running doors: `hangar daemon` (JSON-RPC over stdio) and `hangar serve` (REST).
 * Their modules are imported only when chosen, so other commands start fast.
 */
import type { Command } from 'commander';
import type { Cli, CommandFactory } from '../cli.js';
import { port } from '../values.js';

function daemon(program: Command): Command {
	return program
		.command('daemon')
		.description('Serve the management operations as JSON-RPC over stdio (LSP framing), for editors')
		.action(async () => (await import('../../rpc/main.js')).runDaemon());
}

function serve(program: Command, cli: Cli): Command {
	return program
		.command('serve')
		.description('Serve the management operations as a REST API on ToolHive-compatible paths')
		.option('--host <host>', 'address to bind', '127.0.0.1')
		.option('--port <port>', 'port to bind (0 picks a free one)', port, 8080)
		.option('--socket <path>', 'listen on a UNIX socket instead of host and port')
		.option('--allowed-origin <origin>', 'a browser origin (scheme://host:port) allowed besides the server\'s own; repeatable', collect, [])
		.action(async (options: { host: string; port: number; socket?: string; allowedOrigin: string[] }) => {
			const [{ RestServer }, { createDispatcher }] = await Promise.all([import('../../rest/server.js'), import('../../services.js')]);
			const dispatcher = createDispatcher(cli.environment, { door: 'serve' });
			const server = new RestServer(cli.environment, dispatcher, await dispatcher.operations());
			const address = await server.listen({ ...options, allowedOrigins: options.allowedOrigin });
			cli.environment.log.info(`Hangar API listening on ${address}`);
			if (!['127.0.0.1', 'localhost', '::1'].includes(options.host) && !options.socket) {
				cli.environment.log.warn(`bound to ${options.host}: the API is reachable from other machines`);
			}
			let stopping = false;
			const stop = () => {
				if (stopping) return;
				stopping = true;
				void server.close().then(() => dispatcher.close()).finally(() => process.exit(0));
			};
			process.once('SIGINT', stop);
			process.once('SIGTERM', stop);
			if (process.env.npm_lifecycle_event) stopWithParent(stop);
		});
}

/** The area's top-level commands, in `--help` order. */
export const doorCommands: readonly CommandFactory[] = [daemon, serve];

/**
 * Started by an npm script (`npm start`), the server must not outlive npm: were npm killed
 * without passing the signal on (SIGKILL, or a shell between them), nothing would stop it.
 * The parent's going shows as a new parent process id (the orphan is adopted).
 */
function stopWithParent(stop: () => void): void {
	const parent = process.ppid;
	setInterval(() => {
		if (process.ppid !== parent) stop();
	}, 1000).unref();
}

function collect(value: string, previous: string[]): string[] {
	let origin: URL;
	try {
		origin = new URL(value);
	} catch {
		throw new Error(`invalid origin ${value}: expected scheme://host[:port]`);
	}
	if ((origin.protocol !== 'http:' && origin.protocol !== 'https:') || origin.pathname !== '/' || origin.search || origin.hash) {
		throw new Error(`invalid origin ${value}: expected scheme://host[:port]`);
	}
	return [...previous, origin.origin];
}
