#!/usr/bin/env node
/**
 * `hangar`: the command line. Every subcommand calls the same services as the daemon and
 * the REST server, in-process.
 */
if (process.argv.length === 3 && process.argv[2] === 'daemon') {
	// Editors start a daemon per window: skip building the command tree, whose commands load
	// the whole contract, so `initialize` is answered as soon as possible.
	(await import('../rpc/main.js')).runDaemon();
} else {
	// `hangar … | head -1`: the reader is gone, so is the need to write; end quietly.
	for (const stream of [process.stdout, process.stderr]) {
		stream.on('error', (error: NodeJS.ErrnoException) => {
			if (error.code === 'EPIPE') process.exit(0);
			throw error;
		});
	}
	await (await import('./program.js')).runCli(process.argv);
}
