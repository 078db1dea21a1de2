/**
 * The `hangar` command tree. Each area lists its top-level commands in its own module.
 *
 * Only the command being run is built: its area's module is loaded (area modules load the
 * contract, zod and every schema, most of a command's start-up time), and of that area's
 * commands only its own is added, with its options. The others are listed from
 * `commands.json`, written at build time from the full tree (scripts/write-manifest.mjs), so
 * `hangar --help` stays complete without building them.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Help } from 'commander';
import { VERSION_LINE } from '../version.js';
import { Cli, describeFailure, type CommandFactory } from './cli.js';
import { complete, COMPLETE_COMMAND, shapeOf, SHELLS, type CommandShape } from './candidates.js';
import { completionScript, type Shell } from './completion.js';
import { guardOutput } from './terminal.js';

type Area = readonly CommandFactory[];

/** Each area's top-level commands, in the order they appear in `--help`. */
export const AREAS: Readonly<Record<string, () => Promise<Area>>> = {
	doors: async () => (await import('./commands/doors.js')).doorCommands,
	groups: async () => (await import('./commands/groups.js')).groupCommands,
	clients: async () => (await import('./commands/clients.js')).clientCommands,
	registry: async () => (await import('./commands/registry.js')).registryCommands,
	secrets: async () => (await import('./commands/secrets.js')).secretCommands,
	workloads: async () => (await import('./commands/workloads.js')).workloadCommands,
	build: async () => (await import('./commands/build.js')).buildCommands,
	skills: async () => (await import('./commands/skills.js')).skillCommands,
	telemetry: async () => (await import('./commands/telemetry.js')).telemetryCommands,
	tools: async () => (await import('./commands/tools.js')).toolCommands,
};

/** A top-level command as `--help` lists it, and the index of its factory in its area. */
export interface CommandSummary {
	readonly name: string;
	readonly aliases: readonly string[];
	readonly term: string;
	readonly description: string;
	readonly factory: number;
}

/** dist/server/cli/commands.json. */
export interface CommandManifest {
	/** Each area's top-level commands. */
	readonly areas: Readonly<Record<string, readonly CommandSummary[]>>;
	/** `hangar --help` at 80 columns. */
	readonly help: string;
	/** The whole command tree as completion reads it. */
	readonly tree: CommandShape;
}

const MANIFEST_URL = new URL('./commands.json', import.meta.url);

function readCommandManifest(): CommandManifest | undefined {
	try {
		return JSON.parse(readFileSync(MANIFEST_URL, 'utf8')) as CommandManifest;
	} catch {
		return undefined; // run from source: load every area
	}
}

/** The summaries of the top-level commands an area registers (for the build-time manifest). */
export async function summarise(area: string): Promise<CommandSummary[]> {
	const help = new Help();
	return (await AREAS[area]!()).flatMap((add, factory) => {
		const program = new Command('hangar');
		add(program, new Cli());
		return program.commands.map((command) => ({
			name: command.name(),
			aliases: command.aliases(),
			term: help.subcommandTerm(command),
			description: command.description(),
			factory,
		}));
	});
}

/**
 * The program for `argv`: the command being run is built, the others are listed from the
 * manifest. `loadAll` builds every command (completion, tests).
 */
export async function buildProgram(cli: Cli, argv: readonly string[] = [], loadAll = false): Promise<Command> {
	const program = new Command('hangar')
		.description('Manage MCP servers and agent skills across editors and agents')
		.version(VERSION_LINE, '-v, --version', 'print the version')
		// A usage error reads like every other error: one line, `hangar: …`.
		.configureOutput({ outputError: (message, write) => write(`hangar: ${message.replace(/^error: /, '').trimEnd()} (run with --help for usage)\n`) })
		.exitOverride();

	program
		.command('version')
		.description('Print the version, and the container engine in use')
		.option('--json', 'print JSON')
		.action(async (options: { json?: boolean }) => (await import('./version.js')).printVersion(options.json ?? false));

	const manifest = loadAll ? undefined : readCommandManifest();
	const wanted = commandNameOf(argv);
	const terms = new Map<Command, string>();
	for (const [area, load] of Object.entries(AREAS)) {
		const summaries = manifest?.areas[area];
		if (!summaries) {
			for (const add of await load()) add(program, cli);
			continue;
		}
		const chosen = summaries.find((summary) => summary.name === wanted || summary.aliases.includes(wanted ?? ''));
		const factories = chosen ? await load() : [];
		let built = false;
		for (const summary of summaries) {
			if (summary.factory !== chosen?.factory) {
				terms.set(program.command(summary.name).description(summary.description).aliases([...summary.aliases]), summary.term);
				continue;
			}
			// A factory may add several commands: it runs once, in the place of its first.
			if (!built) factories[summary.factory]!(program, cli);
			built = true;
		}
	}
	program.configureHelp({ subcommandTerm: (command) => terms.get(command) ?? new Help().subcommandTerm(command) });

	program
		.command('completion')
		.description('Print a shell completion script (bash, zsh, fish or powershell)')
		.argument('<shell>', 'bash, zsh, fish or powershell')
		.addHelpText(
			'after',
			'\nLoad it with: source <(hangar completion bash)   (or zsh; add the line to your shell\'s rc file)\n' +
				'         or: hangar completion fish > ~/.config/fish/completions/hangar.fish\n' +
				'         or: hangar completion powershell | Out-String | Invoke-Expression   (add it to $PROFILE)',
		)
		.action(async (shell: string) => {
			if (!(SHELLS as readonly string[]).includes(shell)) {
				program.error(`unsupported shell '${shell}': use ${SHELLS.join(', ')}`, { exitCode: 2, code: 'hangar.usage' });
			}
			process.stdout.write(completionScript(await buildProgram(cli, [], true), shell as Shell));
		});
	return program;
}

/** The first operand of the command line (the command run, or the one `help` is asked about). */
function commandNameOf(argv: readonly string[]): string | undefined {
	const operands = argv.slice(2).filter((arg) => !arg.startsWith('-'));
	return operands[0] === 'help' ? operands[1] : operands[0];
}

/** Commander's exits that are not usage errors. */
const SUCCESS_CODES = new Set(['commander.helpDisplayed', 'commander.version', 'commander.executeSubCommandAsync']);

/** Runs the command line; exits non-zero with a one-line message on failure. */
export async function runCli(argv: readonly string[]): Promise<void> {
	// The doors and the proxy speak protocols on their streams; every other command prints for a person.
	if (!['daemon', 'serve', 'proxy'].includes(commandNameOf(argv) ?? '')) guardOutput();
	try {
		const cli = new Cli();
		if (argv[2] === COMPLETE_COMMAND) {
			// Hidden, and not parsed by commander: the words after it are the line being completed, options included.
			const words = argv.slice(3);
			const candidates = await complete(shapeOf(await buildProgram(cli, [...argv.slice(0, 2), ...words])), words, cli.environment);
			process.stdout.write(candidates.map((candidate) => `${candidate}\n`).join(''));
			return;
		}
		await (await buildProgram(cli, argv)).parseAsync(argv);
	} catch (error) {
		// Commander already printed its message; every error of its own is a usage error.
		if (error instanceof CommanderError) process.exit(SUCCESS_CODES.has(error.code) ? 0 : 2);
		const { message, exitCode } = describeFailure(error);
		process.stderr.write(`hangar: ${message}\n`);
		process.exit(exitCode);
	}
}
