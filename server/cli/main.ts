#!/usr/bin/env node
/**
 * `hangar`: the command line. Every subcommand calls the same services as the daemon and
 * the REST server, in-process.
 */
import { readFileSync } from 'node:fs';
import type { CommandManifest } from './program.js';

const args = process.argv.slice(2);

/**
 * The build's commands.json (scripts/write-manifest.mjs): `hangar --help` is printed from it and
 * `hangar __complete` reads the command tree's shape from it, with no command tree to build.
 */
function builtCommands(): Partial<CommandManifest> {
	try {
		return JSON.parse(readFileSync(new URL('./commands.json', import.meta.url), 'utf8')) as CommandManifest;
	} catch {
		return {}; // run from source: commander prints the help, the tree is built
	}
}

/** Runs the command line; a failure no command caught ends the process as an uncaught error does. */
async function main(): Promise<void> {
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
		const help = args.length === 1 && ['--help', '-h', 'help'].includes(args[0]!) ? builtCommands().help : undefined;
		// Shell completion (candidates.ts' COMPLETE_COMMAND) runs at every TAB.
		const tree = args[0] === '__complete' ? builtCommands().tree : undefined;
		if (help !== undefined) {
			process.stdout.write(help);
		} else if (tree) {
			const [{ complete }, { guardOutput }, { createEnvironment }] = await Promise.all([import('./candidates.js'), import('./terminal.js'), import('../environment.js')]);
			guardOutput();
			const candidates = await complete(tree, args.slice(1), createEnvironment('cli'));
			process.stdout.write(candidates.map((candidate) => `${candidate}\n`).join(''));
		} else if (args[0] === 'version' && (args.length === 1 || (args.length === 2 && args[1] === '--json'))) {
			// `hangar version [--json]` needs neither the command tree nor the operation table.
			const [{ printVersion }, { guardOutput }] = await Promise.all([import('./version.js'), import('./terminal.js')]);
			guardOutput();
			await printVersion(args[1] === '--json');
		} else if (args.length === 1 && ['--version', '-v'].includes(args[0]!)) {
			const { VERSION_LINE } = await import('../version.js');
			process.stdout.write(`${VERSION_LINE}\n`);
		} else {
			await (await import('./program.js')).runCli(process.argv);
		}
	}
}

// No top-level await: the bundle is CommonJS (scripts/bundle.mjs).
void main();
