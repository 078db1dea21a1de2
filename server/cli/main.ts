#!/usr/bin/env node
/**
 * `hangar`: the command line. Every subcommand calls the same services as the daemon and
 * the REST server, in-process.
 */
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);

/** `hangar --help`, printed from the build's commands.json: no command tree to build. */
function builtHelp(): string | undefined {
	try {
		return (JSON.parse(readFileSync(new URL('./commands.json', import.meta.url), 'utf8')) as { help?: string }).help;
	} catch {
		return undefined; // run from source: commander prints it
	}
}

const spawnedProxy = args[0] === 'proxy' ? (await import('./proxyEntry.js')).spawnedProxyArguments(args) : undefined;
if (args.length === 1 && args[0] === 'daemon') {
	// Editors start a daemon per window: skip building the command tree, whose commands load
	// the whole contract, so `initialize` is answered as soon as possible.
	(await import('../rpc/main.js')).runDaemon();
} else if (spawnedProxy) {
	// A proxy runs as long as its workload: the command tree's modules would stay in its memory.
	await (await import('./proxyEntry.js')).runProxyCommand(spawnedProxy.name, spawnedProxy.replica).catch(async (error: unknown) => {
		const { describeFailure } = await import('./cli.js');
		const { message, exitCode } = describeFailure(error);
		process.stderr.write(`hangar: ${message}\n`);
		process.exit(exitCode);
	});
} else {
	// `hangar … | head -1`: the reader is gone, so is the need to write; end quietly.
	for (const stream of [process.stdout, process.stderr]) {
		stream.on('error', (error: NodeJS.ErrnoException) => {
			if (error.code === 'EPIPE') process.exit(0);
			throw error;
		});
	}
	const help = args.length === 1 && ['--help', '-h', 'help'].includes(args[0]!) ? builtHelp() : undefined;
	if (help !== undefined) {
		process.stdout.write(help);
	} else if (args.length === 1 && ['--version', '-v'].includes(args[0]!)) {
		const { VERSION_LINE } = await import('../version.js');
		process.stdout.write(`${VERSION_LINE}\n`);
	} else {
		await (await import('./program.js')).runCli(process.argv);
	}
}
